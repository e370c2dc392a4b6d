// SPDX-License-Identifier: MIT
// The optimizer's per-parameter state, one row per parameter and moment: step, dtype, shape,
// and the moment's norm, mean and max once computed in the background.
#pragma once

#include "ui/pages/optimizerrows.h"

#include <QAbstractTableModel>

class MomentStateModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Parameter, Index, Group, Step, Moment, DType, Shape, Norm, Mean, Max, AbsMax, Zeros, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole,
    };

    explicit MomentStateModel(QObject* parent = nullptr);

    void setRows(std::vector<MomentRow> rows);
    void setStats(int row, TensorStatsView stats);
    const std::vector<MomentRow>& rows() const { return m_rows; }
    const MomentRow* rowAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QString displayText(const MomentRow& row, Column column) const;
    QVariant sortValue(const MomentRow& row, Column column) const;

    std::vector<MomentRow> m_rows;
};
