// SPDX-License-Identifier: MIT
// Every tensor of one checkpoint, one row each, with statistics columns that stay empty until
// the background job delivers them (setStats), in batches of rows.
#pragma once

#include "ui/pages/tensorrows.h"

#include <QAbstractTableModel>

class TensorListModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, DType, Shape, Numel, Bytes, File, Min, Max, Mean, Std, L2, AbsMax, NonFinite, Zeros, ColumnCount };
    Q_ENUM(Column)
    enum Role {
        SortRole = Qt::UserRole, // numbers for the numeric columns, text otherwise
    };

    explicit TensorListModel(QObject* parent = nullptr);

    void setTensors(std::vector<TensorRow> rows);
    /// Statistics of row `row` arrived: its stats columns change.
    /// Rows [first, first + stats.size()) at once, with one dataChanged: a frontier model's 90k
    /// rows, one signal each, flooded the UI thread with thousands of events per frame.
    void setStats(int first, std::vector<TensorStatsView> stats);

    const std::vector<TensorRow>& tensors() const { return m_rows; }
    const TensorRow* tensorAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    static bool isStatsColumn(int column) { return column >= Min && column < ColumnCount; }

private:
    QString displayText(const TensorRow& row, Column column) const;
    QVariant sortValue(const TensorRow& row, Column column) const;

    std::vector<TensorRow> m_rows;
};
