// SPDX-License-Identifier: MIT
#include "ui/models/tensortablemodel.h"

#include "core/checkpoint_file.h"
#include "ui/textformat.h"

#include <QStringList>

using namespace ckpt;

TensorTableModel::TensorTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

TensorTableModel::~TensorTableModel() = default;

void TensorTableModel::setFile(std::shared_ptr<const CheckpointFile> file)
{
    beginResetModel();
    m_file = std::move(file);
    endResetModel();
}

int TensorTableModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_file)
        return 0;
    return static_cast<int>(m_file->tensorEntries().size());
}

int TensorTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TensorTableModel::data(const QModelIndex& index, int role) const
{
    if (!hasIndex(index.row(), index.column(), index.parent()))
        return {};
    const auto column = static_cast<Column>(index.column());
    switch (role) {
    case Qt::DisplayRole:
        return displayText(index.row(), column);
    case Qt::ToolTipRole:
        return column == Note || column == Key ? displayText(index.row(), column) : QVariant();
    case Qt::TextAlignmentRole:
        if (column == Numel || column == Size)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case SortRole:
        return sortValue(index.row(), column);
    default:
        return {};
    }
}

QString TensorTableModel::displayText(int row, Column column) const
{
    const TensorEntry& entry = m_file->tensorEntries()[static_cast<std::size_t>(row)];
    const TensorInfo& t = m_file->tensors()[entry.tensor];
    switch (column) {
    case Key:
        return formatKey(entry.key);
    case DType:
        return fromUtf8(t.dtypeName);
    case Shape:
        return formatShape(t.shape);
    case Numel:
        return QString::number(t.numel());
    case Size:
        return humanBytes(t.nbytes());
    case Layout:
        return QLatin1String(layoutName(t.layout));
    case Device:
        return fromUtf8(t.device);
    case Note: {
        QStringList notes;
        if (entry.alias)
            notes.append(tr("same tensor as an earlier row"));
        if (t.isParameter)
            notes.append(tr("parameter"));
        if (t.requiresGrad)
            notes.append(tr("requires grad"));
        if (!t.subclass.empty())
            notes.append(fromUtf8(t.subclass));
        if (!t.problem.empty())
            notes.append(fromUtf8(t.problem));
        return notes.join(QStringLiteral("; "));
    }
    case ColumnCount:
        break;
    }
    return {};
}

QVariant TensorTableModel::sortValue(int row, Column column) const
{
    const TensorEntry& entry = m_file->tensorEntries()[static_cast<std::size_t>(row)];
    const TensorInfo& t = m_file->tensors()[entry.tensor];
    switch (column) {
    case Shape:
        return static_cast<qlonglong>(t.shape.size());
    case Numel:
        return static_cast<qlonglong>(t.numel());
    case Size:
        return static_cast<qulonglong>(t.nbytes());
    case Key:
    case DType:
    case Layout:
    case Device:
    case Note:
        return displayText(row, column);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    const bool tip = role == Qt::ToolTipRole;
    switch (static_cast<Column>(section)) {
    case Key:
        return tip ? tr("Key path from the root object, as `ckpt tensors` prints it") : tr("Key");
    case DType:
        return tip ? tr("Element type (torch name)") : tr("DType");
    case Shape:
        return tip ? tr("Tensor shape; sorts by rank") : tr("Shape");
    case Numel:
        return tip ? tr("Number of elements") : tr("Numel");
    case Size:
        return tip ? tr("Bytes of the tensor's elements (numel × element size), not of its storage") : tr("Size");
    case Layout:
        return tip ? tr("strided, sparse, quantized, meta...") : tr("Layout");
    case Device:
        return tip ? tr("Device the tensor was saved from") : tr("Device");
    case Note:
        return tip ? tr("Aliases, parameters, subclasses and problems with the tensor's storage") : tr("Note");
    case ColumnCount:
        break;
    }
    return {};
}
