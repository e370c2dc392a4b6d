// SPDX-License-Identifier: MIT
#include "ui/models/runbrowsermodel.h"

#include "ui/palettecolors.h"
#include "ui/textformat.h"

#include <QFileInfo>

namespace {

// Internal ids: 0 for run rows, run row + 1 for checkpoint rows.
constexpr quintptr kRunRow = 0;

QString marksText(const ckpt::RunCheckpoint& info)
{
    QStringList marks;
    if (info.latest)
        marks.append(RunBrowserModel::tr("latest"));
    if (info.best)
        marks.append(RunBrowserModel::tr("best"));
    if (!info.complete)
        marks.append(RunBrowserModel::tr("incomplete"));
    return marks.join(QStringLiteral(" · "));
}

struct FindingCounts {
    int bySeverity[3] = {0, 0, 0};
    int worst() const { return bySeverity[2] ? 2 : bySeverity[1] ? 1 : bySeverity[0] ? 0 : -1; }
    void add(const std::vector<ckpt::Finding>& findings)
    {
        for (const ckpt::Finding& finding : findings)
            ++bySeverity[static_cast<int>(finding.severity)];
    }
};

// Short enough for the column at its default width ("2 err 1 warn 3 info"; the words in full are
// the tooltip): elided text hid the counts behind "erro…".
QString findingsText(const FindingCounts& counts, bool full = false)
{
    QStringList parts;
    if (counts.bySeverity[2])
        parts.append(full ? RunBrowserModel::tr("%n error(s)", nullptr, counts.bySeverity[2])
                          : RunBrowserModel::tr("%1 err").arg(counts.bySeverity[2]));
    if (counts.bySeverity[1])
        parts.append(full ? RunBrowserModel::tr("%n warning(s)", nullptr, counts.bySeverity[1])
                          : RunBrowserModel::tr("%1 warn").arg(counts.bySeverity[1]));
    if (counts.bySeverity[0])
        parts.append(full ? RunBrowserModel::tr("%n info", nullptr, counts.bySeverity[0]) : RunBrowserModel::tr("%1 info").arg(counts.bySeverity[0]));
    return parts.join(full ? QStringLiteral(", ") : QStringLiteral(" "));
}

FindingCounts countsOf(const RunData& run)
{
    FindingCounts counts;
    counts.add(run.runFindings);
    for (const RunCheckpointData& checkpoint : run.checkpoints)
        counts.add(checkpoint.findings);
    return counts;
}

FindingCounts countsOf(const RunCheckpointData& checkpoint)
{
    FindingCounts counts;
    counts.add(checkpoint.findings);
    return counts;
}

// "100–300": the steps the run covers, as far as they are known.
QString stepRange(const RunData& run)
{
    std::optional<int64_t> first, last;
    for (const RunCheckpointData& checkpoint : run.checkpoints) {
        const auto step = checkpoint.step();
        if (!step)
            continue;
        first = first ? std::min(*first, *step) : *step;
        last = last ? std::max(*last, *step) : *step;
    }
    if (!first)
        return QString();
    return *first == *last ? QString::number(*first) : QStringLiteral("%1–%2").arg(*first).arg(*last);
}

} // namespace

RunBrowserModel::RunBrowserModel(QObject* parent)
    : QAbstractItemModel(parent)
{
}

void RunBrowserModel::addRun(const RunDataPtr& run)
{
    const int row = static_cast<int>(m_runs.size());
    beginInsertRows({}, row, row);
    m_runs.push_back(run);
    endInsertRows();
}

void RunBrowserModel::removeRun(int runId)
{
    const int row = rowOfRun(runId);
    if (row < 0)
        return;
    beginRemoveRows({}, row, row);
    m_runs.erase(m_runs.begin() + row);
    endRemoveRows();
}

void RunBrowserModel::clear()
{
    beginResetModel();
    m_runs.clear();
    endResetModel();
}

void RunBrowserModel::applyState(int runId, int index, std::shared_ptr<const ckpt::TrainingState> state,
                                 const QString& error, std::vector<std::pair<std::string, uint64_t>> sizes)
{
    const RunDataPtr target = run(runId);
    if (!target)
        return; // closed meanwhile
    target->applyState(index, std::move(state), error, std::move(sizes));
    emit dataChanged(checkpointIndex(runId, index), checkpointIndex(runId, index).siblingAtColumn(ColumnCount - 1));
    emit dataChanged(runIndex(runId), runIndex(runId).siblingAtColumn(ColumnCount - 1));
    emit findingsChanged(runId);
}

void RunBrowserModel::applyAudit(int runId, PlacedFindings* findings, const QString& note)
{
    const RunDataPtr target = run(runId);
    if (!target)
        return;
    if (findings)
        target->applyAudit(std::move(*findings));
    target->auditNote = note;
    const QModelIndex parentIndex = runIndex(runId);
    emit dataChanged(parentIndex, parentIndex.siblingAtColumn(ColumnCount - 1));
    const int count = rowCount(parentIndex);
    if (count > 0)
        emit dataChanged(index(0, 0, parentIndex), index(count - 1, ColumnCount - 1, parentIndex));
    emit findingsChanged(runId);
}

RunDataPtr RunBrowserModel::run(int runId) const
{
    const int row = rowOfRun(runId);
    return row < 0 ? nullptr : m_runs[static_cast<std::size_t>(row)];
}

QStringList RunBrowserModel::runPaths() const
{
    QStringList paths;
    for (const RunDataPtr& run : m_runs)
        paths.append(run->path);
    return paths;
}

QModelIndex RunBrowserModel::runIndex(int runId) const
{
    const int row = rowOfRun(runId);
    return row < 0 ? QModelIndex() : index(row, 0);
}

QModelIndex RunBrowserModel::checkpointIndex(int runId, int checkpoint) const
{
    return index(checkpoint, 0, runIndex(runId));
}

int RunBrowserModel::rowOfRun(int runId) const
{
    for (std::size_t row = 0; row < m_runs.size(); ++row) {
        if (m_runs[row]->id == runId)
            return static_cast<int>(row);
    }
    return -1;
}

QModelIndex RunBrowserModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, kRunRow);
    return createIndex(row, column, static_cast<quintptr>(parent.row()) + 1);
}

QModelIndex RunBrowserModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || child.internalId() == kRunRow)
        return {};
    return createIndex(static_cast<int>(child.internalId() - 1), 0, kRunRow);
}

int RunBrowserModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return static_cast<int>(m_runs.size());
    if (parent.column() > 0 || parent.internalId() != kRunRow)
        return 0;
    return static_cast<int>(m_runs[static_cast<std::size_t>(parent.row())]->checkpoints.size());
}

int RunBrowserModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

QVariant RunBrowserModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (index.internalId() == kRunRow) {
        const RunData& run = *m_runs[static_cast<std::size_t>(index.row())];
        if (role == RunIdRole)
            return run.id;
        if (role == CheckpointIndexRole)
            return -1;
        return runData(run, index.column(), role);
    }
    const RunData& run = *m_runs[static_cast<std::size_t>(index.internalId() - 1)];
    if (role == RunIdRole)
        return run.id;
    if (role == CheckpointIndexRole)
        return index.row();
    return checkpointData(run.checkpoints[static_cast<std::size_t>(index.row())], index.column(), role);
}

QVariant RunBrowserModel::runData(const RunData& run, int column, int role) const
{
    if (role != PathRole && role != WorstSeverityRole && role != SortRole && role != Qt::DisplayRole
        && role != Qt::DecorationRole && role != Qt::ToolTipRole)
        return {};
    const FindingCounts counts = countsOf(run);
    switch (role) {
    case PathRole:
        return run.path;
    case WorstSeverityRole:
        return counts.worst();
    case SortRole:
    case Qt::DisplayRole:
        switch (static_cast<Column>(column)) {
        case Name:
            return run.name;
        case Step:
            return stepRange(run);
        case Marks:
            return QString();
        case Findings:
            return findingsText(counts);
        case ColumnCount:
            break;
        }
        break;
    case Qt::DecorationRole:
        if (column == Findings && counts.worst() >= 0)
            return severityIcon(counts.worst());
        break;
    case Qt::ToolTipRole: {
        if (column == Findings && counts.worst() >= 0)
            return findingsText(counts, true);
        QString tip = run.path + QLatin1Char('\n') + tr("%n checkpoint(s)", nullptr, static_cast<int>(run.checkpoints.size()));
        if (run.audited)
            tip += QLatin1Char('\n') + tr("manifest audit done");
        if (!run.history.latestFrom.empty())
            tip += QLatin1Char('\n') + tr("latest: %1").arg(fromUtf8(run.history.latestFrom));
        if (!run.history.bestFrom.empty())
            tip += QLatin1Char('\n') + tr("best: %1").arg(fromUtf8(run.history.bestFrom));
        if (!run.auditNote.isEmpty())
            tip += QLatin1Char('\n') + tr("not audited: %1").arg(run.auditNote);
        return tip;
    }
    }
    return {};
}

QVariant RunBrowserModel::checkpointData(const RunCheckpointData& checkpoint, int column, int role) const
{
    const std::optional<int64_t> step = checkpoint.step();
    switch (role) {
    case PathRole:
        return fromUtf8(checkpoint.info.path);
    case WorstSeverityRole:
        return checkpoint.worstSeverity();
    case SortRole:
        if (column == Step)
            return step ? QVariant(static_cast<qlonglong>(*step)) : QVariant(-1LL);
        [[fallthrough]];
    case Qt::DisplayRole:
        switch (static_cast<Column>(column)) {
        case Name:
            return QFileInfo(fromUtf8(checkpoint.info.path)).fileName();
        case Step:
            return step ? QString::number(*step) : QStringLiteral("?");
        case Marks:
            return marksText(checkpoint.info);
        case Findings:
            if (!checkpoint.scanned && checkpoint.findings.empty())
                return QStringLiteral("…");
            return findingsText(countsOf(checkpoint));
        case ColumnCount:
            break;
        }
        break;
    case Qt::DecorationRole:
        if (column == Findings && checkpoint.worstSeverity() >= 0)
            return severityIcon(checkpoint.worstSeverity());
        break;
    case Qt::ForegroundRole:
        if (column == Marks && !checkpoint.info.complete)
            return severityColor(2);
        break;
    case Qt::ToolTipRole:
        if (column == Marks && !checkpoint.info.complete)
            return fromUtf8(checkpoint.info.incompleteReason);
        if (column == Findings && !checkpoint.findings.empty()) {
            QStringList lines;
            for (const ckpt::Finding& finding : checkpoint.findings)
                lines.append(QStringLiteral("%1: %2").arg(QLatin1String(ckpt::severityName(finding.severity)), fromUtf8(finding.message)));
            return lines.join(QLatin1Char('\n'));
        }
        return fromUtf8(checkpoint.info.path);
    }
    return {};
}

QVariant RunBrowserModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        switch (static_cast<Column>(section)) {
        case Name:
            return tr("Run / checkpoint");
        case Step:
            return tr("Step");
        case Marks:
            return tr("Marks");
        case Findings:
            return tr("Findings");
        case ColumnCount:
            break;
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (static_cast<Column>(section)) {
        case Name:
            return tr("The run folder, and each checkpoint in it (a folder or a file)");
        case Step:
            return tr("Global step: from the saved progress counters once read, else from the name");
        case Marks:
            return tr("latest: what a resume would load (the `latest` pointer, or the newest complete save); "
                      "best: named by the trainer; incomplete: the save did not finish (no commit marker)");
        case Findings:
            return tr("Manifest audit findings and read problems; the dot has the colour of the worst");
        case ColumnCount:
            break;
        }
    }
    return {};
}
