// SPDX-License-Identifier: MIT
#include "ui/pages/stategridmodel.h"

#include "ui/pages/pagecolors.h"
#include "ui/palettecolors.h"

#include <QFontDatabase>
#include <QGuiApplication>
#include <QPalette>

#include <algorithm>

StateGridModel::StateGridModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void StateGridModel::setGrid(StateGrid grid)
{
    beginResetModel();
    m_grid = std::move(grid);
    endResetModel();
}

int StateGridModel::differingRows() const
{
    return static_cast<int>(std::count_if(m_grid.rows.begin(), m_grid.rows.end(),
                                          [](const StateGrid::Row& r) { return r.differs; }));
}

QStringList StateGridModel::notes() const
{
    QStringList out;
    for (const StateGrid::Row& row : m_grid.rows) {
        if (!row.note.isEmpty())
            out.append(row.name + QStringLiteral(": ") + row.note);
    }
    return out;
}

int StateGridModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_grid.rows.size());
}

int StateGridModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : FirstValue + static_cast<int>(m_grid.columns.size());
}

QVariant StateGridModel::data(const QModelIndex& index, int role) const
{
    if (!hasIndex(index.row(), index.column(), index.parent()))
        return {};
    const StateGrid::Row& row = m_grid.rows[static_cast<std::size_t>(index.row())];
    const int value = index.column() - FirstValue;
    switch (role) {
    case Qt::DisplayRole:
        if (index.column() == Part)
            return row.part;
        if (index.column() == Name)
            return row.name;
        return row.values.value(value);
    case Qt::ToolTipRole:
        if (!row.note.isEmpty())
            return row.note;
        if (value >= 0 && !row.sources.value(value).isEmpty())
            return tr("%1\nread from %2").arg(row.values.value(value), row.sources.value(value));
        return index.column() == Name ? row.name : QVariant();
    case Qt::BackgroundRole:
        return row.differs ? QVariant(differenceBackground(QGuiApplication::palette())) : QVariant();
    case Qt::ForegroundRole:
        return row.note.isEmpty() ? QVariant() : QVariant(warningColor());
    case Qt::FontRole:
        if (value >= 0 && row.name.endsWith(QLatin1String(" fingerprint")))
            return QFontDatabase::systemFont(QFontDatabase::FixedFont);
        return {};
    case DiffRole:
        return row.differs || !row.note.isEmpty();
    default:
        return {};
    }
}

QVariant StateGridModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount())
        return {};
    const bool tip = role == Qt::ToolTipRole;
    if (role != Qt::DisplayRole && !tip)
        return {};
    if (section == Part)
        return tip ? tr("Part of the training state: R random generators, D data cursor and sampler, C progress counters")
                   : tr("Part");
    if (section == Name)
        return tip ? tr("Generator (kind and key where it was saved) and field, or the saved field's name; "
                        "[file] marks a value saved once for the whole checkpoint")
                   : tr("Name");
    const QString column = m_grid.columns.value(section - FirstValue);
    if (!tip)
        return column;
    return column.startsWith(tr("rank"))
        ? tr("Values read from %1's files. Fingerprint: a hash of the generator's whole state; equal "
             "fingerprints mean the generator will produce the same numbers").arg(column)
        : tr("Values of %1. Highlighted rows differ between columns").arg(column);
}
