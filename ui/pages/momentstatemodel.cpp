// SPDX-License-Identifier: MIT
#include "ui/pages/momentstatemodel.h"

#include "ui/textformat.h"

#include <cmath>
#include <limits>

namespace {

QString number(double v)
{
    return std::isnan(v) ? QStringLiteral("nan") : QString::number(v, 'g', 6);
}

} // namespace

MomentStateModel::MomentStateModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void MomentStateModel::setRows(std::vector<MomentRow> rows)
{
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

void MomentStateModel::setStats(int row, TensorStatsView stats)
{
    if (row < 0 || row >= rowCount())
        return;
    m_rows[static_cast<std::size_t>(row)].stats = std::move(stats);
    emit dataChanged(index(row, Norm), index(row, ColumnCount - 1));
}

const MomentRow* MomentStateModel::rowAt(int row) const
{
    return row >= 0 && row < rowCount() ? &m_rows[static_cast<std::size_t>(row)] : nullptr;
}

int MomentStateModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int MomentStateModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant MomentStateModel::data(const QModelIndex& index, int role) const
{
    if (!hasIndex(index.row(), index.column(), index.parent()))
        return {};
    const MomentRow& row = m_rows[static_cast<std::size_t>(index.row())];
    const auto column = static_cast<Column>(index.column());
    switch (role) {
    case Qt::DisplayRole:
        return displayText(row, column);
    case Qt::ToolTipRole:
        if (column >= Norm && row.stats && !row.stats->problem.isEmpty())
            return tr("No statistics: %1").arg(row.stats->problem);
        if (column == Moment && !row.from.file.empty())
            return tr("read from %1: %2").arg(fromUtf8(row.from.file), formatKey(row.from.key));
        return {};
    case Qt::TextAlignmentRole:
        return column >= Norm || column == Step ? QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    case SortRole:
        return sortValue(row, column);
    default:
        return {};
    }
}

QString MomentStateModel::displayText(const MomentRow& row, Column column) const
{
    const TensorStatsView* s = row.stats && row.stats->problem.isEmpty() ? &*row.stats : nullptr;
    if (column >= Norm && row.stats && !s)
        return tr("n/a");
    switch (column) {
    case Parameter:
        return row.parameter;
    case Index:
        return row.index;
    case Group:
        return row.group >= 0 ? QString::number(row.group) : QString();
    case Step:
        return row.step;
    case Moment:
        return row.moment;
    case DType:
        return row.dtype;
    case Shape:
        return row.moment.isEmpty() ? QString() : formatShape(row.shape);
    case Norm:
        return s ? number(s->l2) : QString();
    case Mean:
        return s ? number(s->mean) : QString();
    case Max:
        return s ? number(s->max) : QString();
    case AbsMax:
        return s ? number(s->absMax) : QString();
    case Zeros:
        return s ? QString::number(s->zeros) : QString();
    case ColumnCount:
        break;
    }
    return {};
}

QVariant MomentStateModel::sortValue(const MomentRow& row, Column column) const
{
    const TensorStatsView* s = row.stats && row.stats->problem.isEmpty() ? &*row.stats : nullptr;
    const double none = -std::numeric_limits<double>::infinity();
    switch (column) {
    case Group:
        return row.group;
    case Step:
        return row.step.isEmpty() ? none : row.step.toDouble();
    case Shape:
        return static_cast<qlonglong>(row.shape.size());
    case Norm:
        return s ? s->l2 : none;
    case Mean:
        return s ? s->mean : none;
    case Max:
        return s ? s->max : none;
    case AbsMax:
        return s ? s->absMax : none;
    case Zeros:
        return s ? static_cast<double>(s->zeros) : none;
    case Index: {
        bool number = false;
        const qlonglong i = row.index.toLongLong(&number);
        return number ? QVariant(i) : QVariant(row.index);
    }
    case Parameter:
    case Moment:
    case DType:
        return displayText(row, column);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant MomentStateModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    const bool tip = role == Qt::ToolTipRole;
    if (role != Qt::DisplayRole && !tip)
        return {};
    switch (static_cast<Column>(section)) {
    case Parameter:
        return tip ? tr("The parameter the state belongs to, mapped from the optimizer's index; #N when it cannot be told")
                   : tr("Parameter");
    case Index:
        return tip ? tr("The optimizer's own key for the parameter (its position in param_groups, or a name)")
                   : tr("Index");
    case Group:
        return tip ? tr("Param group holding the parameter") : tr("Group");
    case Step:
        return tip ? tr("Per-parameter step count (Adam): updates actually applied, fewer than the global step "
                        "when steps were skipped (AMP overflow)")
                   : tr("Step");
    case Moment:
        return tip ? tr("exp_avg: first moment (mean of gradients); exp_avg_sq: second moment (mean of squared "
                        "gradients); momentum_buffer: SGD momentum")
                   : tr("Moment");
    case DType:
        return tip ? tr("Element type of the moment") : tr("DType");
    case Shape:
        return tip ? tr("Shape of the moment: equals its parameter's shape") : tr("Shape");
    case Norm:
        return tip ? tr("L2 norm of the moment; zero means the optimizer state was reset") : tr("Norm");
    case Mean:
        return tip ? tr("Mean of the moment's finite elements") : tr("Mean");
    case Max:
        return tip ? tr("Largest finite element of the moment") : tr("Max");
    case AbsMax:
        return tip ? tr("Largest absolute value of the moment") : tr("Max |x|");
    case Zeros:
        return tip ? tr("Elements exactly zero: all of them means the moment was zeroed or never updated")
                   : tr("Zeros");
    case ColumnCount:
        break;
    }
    return {};
}
