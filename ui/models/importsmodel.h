// SPDX-License-Identifier: MIT
// The globals a file's pickles reference (its imports report): dangerous rows first, drawn in
// the palette's warning colour.
#pragma once

#include "ckpt/pickle/imports_report.h"

#include <QAbstractTableModel>

class ImportsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Safety, Global, Count, Record, Reason, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole, // 0 dangerous, 1 unknown, 2 safe for Safety; numbers for Count
    };
    Q_ENUM(Column)

    explicit ImportsModel(QObject* parent = nullptr);

    void setReport(const ckpt::ImportsReport& report);
    const ckpt::ImportsReport& report() const { return m_report; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QString displayText(const ckpt::ImportEntry& entry, Column column) const;

    ckpt::ImportsReport m_report;
};
