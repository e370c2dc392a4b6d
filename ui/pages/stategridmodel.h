// SPDX-License-Identifier: MIT
// A StateGrid as a table: part, name, then one column per rank or checkpoint; rows whose
// values disagree are highlighted, and their DiffRole is true.
#pragma once

#include "ui/pages/stategrid.h"

#include <QAbstractTableModel>

class StateGridModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Part, Name, FirstValue };
    enum Role {
        DiffRole = Qt::UserRole, // bool: the row is highlighted (its values disagree, or it has a note)
    };

    explicit StateGridModel(QObject* parent = nullptr);

    void setGrid(StateGrid grid);
    const StateGrid& grid() const { return m_grid; }
    int differingRows() const;
    /// "<row>: <note>" for every row with a note.
    QStringList notes() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    StateGrid m_grid;
};
