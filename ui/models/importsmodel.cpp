// SPDX-License-Identifier: MIT
#include "ui/models/importsmodel.h"

#include "ui/palettecolors.h"
#include "ui/textformat.h"

using namespace ckpt;

namespace {

int safetyRank(ImportSafety safety)
{
    switch (safety) {
    case ImportSafety::Dangerous:
        return 0;
    case ImportSafety::Unknown:
        return 1;
    case ImportSafety::Safe:
        return 2;
    }
    return 1;
}

} // namespace

ImportsModel::ImportsModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void ImportsModel::setReport(const ImportsReport& report)
{
    beginResetModel();
    m_report = report;
    endResetModel();
}

int ImportsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_report.entries.size());
}

int ImportsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ImportsModel::data(const QModelIndex& index, int role) const
{
    if (!hasIndex(index.row(), index.column(), index.parent()))
        return {};
    const ImportEntry& entry = m_report.entries[static_cast<std::size_t>(index.row())];
    const auto column = static_cast<Column>(index.column());
    switch (role) {
    case Qt::DisplayRole:
        return displayText(entry, column);
    case Qt::ToolTipRole:
        return column == Reason || column == Global ? displayText(entry, column) : QVariant();
    case Qt::ForegroundRole:
        if (entry.safety == ImportSafety::Dangerous)
            return warningColor();
        return {};
    case Qt::TextAlignmentRole:
        return column == Count ? QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    case SortRole:
        if (column == Safety)
            return safetyRank(entry.safety);
        if (column == Count)
            return entry.count;
        return displayText(entry, column);
    default:
        return {};
    }
}

QString ImportsModel::displayText(const ImportEntry& entry, Column column) const
{
    switch (column) {
    case Safety:
        return QLatin1String(safetyName(entry.safety));
    case Global:
        return fromUtf8(entry.path());
    case Count:
        return QString::number(entry.count);
    case Record:
        return fromUtf8(entry.record);
    case Reason:
        return fromUtf8(entry.reason);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant ImportsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    const bool tip = role == Qt::ToolTipRole;
    switch (static_cast<Column>(section)) {
    case Safety:
        return tip ? tr("dangerous: can run commands, open files or import code when torch.load(weights_only=False) "
                        "unpickles it; unknown: not on the allowlist; safe: plain training state")
                   : tr("Safety");
    case Global:
        return tip ? tr("module.name the pickle imports") : tr("Global");
    case Count:
        return tip ? tr("How often the pickle references it") : tr("Count");
    case Record:
        return tip ? tr("The pickle it comes from (a zip member, or the file itself)") : tr("Record");
    case Reason:
        return tip ? tr("Why it is classified this way") : tr("Reason");
    case ColumnCount:
        break;
    }
    return {};
}
