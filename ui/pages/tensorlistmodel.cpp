// SPDX-License-Identifier: MIT
#include "ui/pages/tensorlistmodel.h"

#include "ui/palettecolors.h"
#include "ui/textformat.h"

#include <cmath>
#include <limits>

namespace {

// Six significant digits, as `ckpt tensors --stats` prints; the exact value is in the tooltip.
QString number(double v)
{
    if (std::isnan(v))
        return QStringLiteral("nan");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(v, 'g', 6);
}

} // namespace

TensorListModel::TensorListModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void TensorListModel::setTensors(std::vector<TensorRow> rows)
{
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

void TensorListModel::setStats(int first, std::vector<TensorStatsView> stats)
{
    const int last = std::min(rowCount(), first + static_cast<int>(stats.size())) - 1;
    if (first < 0 || last < first)
        return;
    for (int row = first; row <= last; ++row)
        m_rows[static_cast<std::size_t>(row)].stats
            = std::make_shared<const TensorStatsView>(std::move(stats[static_cast<std::size_t>(row - first)]));
    emit dataChanged(index(first, Min), index(last, ColumnCount - 1));
}

const TensorRow* TensorListModel::tensorAt(int row) const
{
    return row >= 0 && row < rowCount() ? &m_rows[static_cast<std::size_t>(row)] : nullptr;
}

int TensorListModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int TensorListModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TensorListModel::data(const QModelIndex& index, int role) const
{
    if (!hasIndex(index.row(), index.column(), index.parent()))
        return {};
    const TensorRow& row = m_rows[static_cast<std::size_t>(index.row())];
    const auto column = static_cast<Column>(index.column());
    switch (role) {
    case Qt::DisplayRole:
        return displayText(row, column);
    case Qt::ToolTipRole:
        if (!row.problem.isEmpty())
            return row.problem;
        if (isStatsColumn(column) && row.stats && !row.stats->problem.isEmpty())
            return tr("No statistics: %1").arg(row.stats->problem);
        if (isStatsColumn(column) && row.stats && column != NonFinite && column != Zeros)
            return QString::number(sortValue(row, column).toDouble(), 'g', 17); // the exact value
        if (column == File && row.stats && !row.stats->shardNotes.isEmpty()) {
            QStringList lines{displayText(row, column)};
            if (!row.stats->shardSummary.isEmpty())
                lines.append(row.stats->shardSummary);
            for (qsizetype i = 0; i < row.stats->shardNotes.size() && i < qsizetype(row.shards.size()); ++i)
                lines.append(tr("rank %1: %2").arg(row.shards[std::size_t(i)].rank).arg(row.stats->shardNotes[i]));
            return lines.join(QLatin1Char('\n'));
        }
        return column == Name || column == File ? displayText(row, column) : QVariant();
    case Qt::ForegroundRole:
        if (column == File && row.stats && !row.stats->shardSummary.isEmpty())
            return QVariant(warningColor()); // replicas that disagree
        return row.problem.isEmpty() ? QVariant() : QVariant(warningColor());
    case Qt::TextAlignmentRole:
        if (column == Numel || column == Bytes || isStatsColumn(column))
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case SortRole:
        return sortValue(row, column);
    default:
        return {};
    }
}

QString TensorListModel::displayText(const TensorRow& row, Column column) const
{
    if (isStatsColumn(column) && row.stats && !row.stats->problem.isEmpty())
        return tr("n/a");
    const TensorStatsView* s = row.stats ? &*row.stats : nullptr;
    switch (column) {
    case Name:
        return row.name;
    case DType:
        return row.dtype;
    case Shape:
        return formatShape(row.shape);
    case Numel:
        return QString::number(row.numel);
    case Bytes:
        return humanBytes(row.bytes);
    case File:
        return row.shards.empty() ? row.file : tr("%1 [%2 %3]").arg(row.file).arg(row.shards.size()).arg(row.shardKind);
    case Min:
        return s ? number(s->min) : QString();
    case Max:
        return s ? number(s->max) : QString();
    case Mean:
        return s ? number(s->mean) : QString();
    case Std:
        return s ? number(s->std) : QString();
    case L2:
        return s ? number(s->l2) : QString();
    case AbsMax:
        return s ? number(s->absMax) : QString();
    case NonFinite:
        if (!s)
            return {};
        if (s->nan + s->posInf + s->negInf == 0)
            return QStringLiteral("0");
        return tr("%1 nan, %2 +inf, %3 -inf").arg(s->nan).arg(s->posInf).arg(s->negInf);
    case Zeros:
        return s ? QString::number(s->zeros) : QString();
    case ColumnCount:
        break;
    }
    return {};
}

QVariant TensorListModel::sortValue(const TensorRow& row, Column column) const
{
    const TensorStatsView* s = row.stats && row.stats->problem.isEmpty() ? &*row.stats : nullptr;
    // Rows without statistics sort below every number.
    const double none = -std::numeric_limits<double>::infinity();
    switch (column) {
    case Shape:
        return static_cast<qlonglong>(row.shape.size());
    case Numel:
        return static_cast<qlonglong>(row.numel);
    case Bytes:
        return static_cast<qulonglong>(row.bytes);
    case Min:
        return s ? s->min : none;
    case Max:
        return s ? s->max : none;
    case Mean:
        return s ? s->mean : none;
    case Std:
        return s ? s->std : none;
    case L2:
        return s ? s->l2 : none;
    case AbsMax:
        return s ? s->absMax : none;
    case NonFinite:
        return s ? static_cast<double>(s->nan + s->posInf + s->negInf) : none;
    case Zeros:
        return s ? static_cast<double>(s->zeros) : none;
    case Name:
    case DType:
    case File:
        return displayText(row, column);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant TensorListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    const bool tip = role == Qt::ToolTipRole;
    switch (static_cast<Column>(section)) {
    case Name:
        return tip ? tr("Key path inside its file (DCP: the fully qualified name)") : tr("Name");
    case DType:
        return tip ? tr("Element type (torch name)") : tr("DType");
    case Shape:
        return tip ? tr("Tensor shape; sorts by rank") : tr("Shape");
    case Numel:
        return tip ? tr("Number of elements") : tr("Numel");
    case Bytes:
        return tip ? tr("Bytes of the tensor's elements (numel × element size), not of its storage") : tr("Bytes");
    case File:
        return tip ? tr("File of the checkpoint that holds the tensor; for a sharded tensor (DCP chunks, ZeRO partitions) "
                        "or one saved by every rank (replicas), every file with a piece or a copy")
                   : tr("File");
    case Min:
        return tip ? tr("Smallest finite element (complex tensors: of the magnitudes |z|)") : tr("Min");
    case Max:
        return tip ? tr("Largest finite element (complex tensors: of the magnitudes |z|)") : tr("Max");
    case Mean:
        return tip ? tr("Arithmetic mean of the finite elements, accumulated in float64") : tr("Mean");
    case Std:
        return tip ? tr("Standard deviation of the finite elements, Bessel-corrected like torch.std() (float64 accumulation)") : tr("Std");
    case L2:
        return tip ? tr("L2 norm: square root of the sum of squares; what clipping and weight-norm plots use")
                   : tr("L2 norm");
    case AbsMax:
        return tip ? tr("Largest absolute value: the range a lower-precision dtype must hold") : tr("Max |x|");
    case NonFinite:
        return tip ? tr("Count of NaN, +Inf and -Inf elements; any is a sign of a broken update") : tr("NaN/Inf");
    case Zeros:
        return tip ? tr("Count of elements exactly zero (a zeroed optimizer moment shows here)") : tr("Zeros");
    case ColumnCount:
        break;
    }
    return {};
}
