// SPDX-License-Identifier: MIT
// The compare view's per-component table: a section per component (C, D, L, A, O, R, W, E), a row
// per value with A, B and a coloured status (changed, only in one, inconsistent).
#pragma once

#include "ui/statecomparison.h"

#include <QAbstractItemModel>

class ComparisonModel final : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Field, A, B, Status, ColumnCount };
    enum Role { StatusRole = Qt::UserRole }; // int: CompareStatus (sections: the worst of their rows)

    explicit ComparisonModel(QObject* parent = nullptr);

    void setComparison(StateComparison comparison);
    /// Hides rows whose status is "same" (sections stay, with their counts).
    void setDifferencesOnly(bool only);
    const StateComparison& comparison() const { return m_comparison; }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void rebuild();
    QVariant sectionData(std::size_t section, int column, int role) const;

    StateComparison m_comparison;
    bool m_differencesOnly = false;
    std::vector<std::vector<const CompareRow*>> m_visible; // per section, the rows shown
};
