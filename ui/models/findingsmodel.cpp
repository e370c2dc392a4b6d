// SPDX-License-Identifier: MIT
#include "ui/models/findingsmodel.h"

#include "ui/palettecolors.h"
#include "ui/textformat.h"

#include "ckpt/findings/finding_groups.h"

#include <QFileInfo>

#include <limits>
#include <map>
#include <set>

namespace {

QString evidenceText(const ckpt::Finding& finding)
{
    QStringList lines;
    for (const ckpt::Evidence& evidence : finding.evidence)
        lines.append(QStringLiteral("%1: %2  (%3)").arg(fromUtf8(evidence.what), fromUtf8(evidence.value), fromUtf8(evidence.where)));
    return lines.join(QLatin1Char('\n'));
}

// Paths under the run's folder, shown from there: the run is in the Checkpoint column already,
// and a full path would push the rest of the text out of the cell. The tooltip keeps them whole.
QString belowRoot(const QString& text, const QString& root)
{
    if (root.isEmpty())
        return text;
    QString shown = text;
    shown.replace(root + QLatin1Char('/'), QString());
    shown.replace(root, QFileInfo(root).fileName()); // the folder itself: by its name
    return shown;
}

QString whereText(const ckpt::Finding& finding)
{
    return finding.evidence.empty() ? fromUtf8(finding.file) : fromUtf8(finding.evidence.front().where);
}

} // namespace

FindingsModel::FindingsModel(QObject* parent)
    : QAbstractItemModel(parent)
{
}

void FindingsModel::setGrouped(bool grouped)
{
    if (grouped == m_grouped)
        return;
    beginResetModel();
    m_grouped = grouped;
    regroup();
    endResetModel();
}

void FindingsModel::setFindings(std::vector<FindingRow> rows)
{
    beginResetModel();
    m_rows = std::move(rows);
    regroup();
    endResetModel();
}

// Core's groups, within each run (the same rule in two runs is two groups): the checkpoints in the
// run's order, so "first ... last" reads along the run.
void FindingsModel::regroup()
{
    m_groups.clear();
    if (!m_grouped)
        return;
    std::map<int, std::vector<int>> byRun;
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        byRun[m_rows[i].runId].push_back(static_cast<int>(i));
    for (const auto& [run, members] : byRun) {
        // A row is about the checkpoint the run browser lists it under: that is what a group counts,
        // in the run's order.
        std::vector<ckpt::Finding> findings;
        std::set<int> checkpoints;
        findings.reserve(members.size());
        for (int m : members) {
            const FindingRow& row = m_rows[static_cast<std::size_t>(m)];
            ckpt::Finding f = row.finding;
            f.checkpoints = {std::to_string(row.checkpointIndex)};
            findings.push_back(std::move(f));
            checkpoints.insert(row.checkpointIndex);
        }
        std::vector<std::string> order;
        for (int c : checkpoints)
            order.push_back(std::to_string(c));
        for (const ckpt::FindingGroup& g : ckpt::groupFindings(findings, order)) {
            Group group;
            for (std::size_t m : g.members)
                group.members.push_back(members[m]);
            std::vector<ckpt::Finding> instances;
            for (int m : group.members)
                instances.push_back(m_rows[static_cast<std::size_t>(m)].finding);
            group.distinct = static_cast<int>(ckpt::withoutRepeats(instances).size());
            if (group.members.size() > 1) {
                const FindingRow& first = m_rows[static_cast<std::size_t>(group.members.front())];
                const FindingRow& last = m_rows[static_cast<std::size_t>(group.members.back())];
                const QString name = first.checkpointName.isEmpty() ? tr("(run)") : first.checkpointName;
                const QString lastName = last.checkpointName.isEmpty() ? tr("(run)") : last.checkpointName;
                if (group.distinct == 1) // one finding about a pair, listed under each of its checkpoints
                    group.where = tr("pair: %1 → %2").arg(name, lastName);
                else
                    group.where = name == lastName ? tr("%n times: %1", nullptr, group.distinct).arg(name)
                                                   : tr("%n findings: %1 … %2", nullptr, group.distinct).arg(name, lastName);
            }
            m_groups.push_back(std::move(group));
        }
    }
}

int FindingsModel::findingOf(const QModelIndex& index) const
{
    if (!m_grouped)
        return index.row();
    if (index.internalId() == kTopLevel)
        return m_groups[static_cast<std::size_t>(index.row())].members.front();
    return m_groups[static_cast<std::size_t>(index.internalId())].members[static_cast<std::size_t>(index.row())];
}

const FindingRow& FindingsModel::rowAt(const QModelIndex& index) const
{
    return m_rows[static_cast<std::size_t>(findingOf(index))];
}

std::vector<const FindingRow*> FindingsModel::membersOf(const QModelIndex& index) const
{
    if (!m_grouped || index.internalId() != kTopLevel)
        return {&rowAt(index)};
    std::vector<const FindingRow*> out;
    for (int m : m_groups[static_cast<std::size_t>(index.row())].members)
        out.push_back(&m_rows[static_cast<std::size_t>(m)]);
    return out;
}

QModelIndex FindingsModel::index(int row, int column, const QModelIndex& parent) const
{
    if (row < 0 || column < 0 || column >= ColumnCount)
        return {};
    if (!parent.isValid())
        return row < rowCount() ? createIndex(row, column, kTopLevel) : QModelIndex();
    if (!m_grouped || parent.internalId() != kTopLevel || row >= rowCount(parent))
        return {};
    return createIndex(row, column, static_cast<quintptr>(parent.row()));
}

QModelIndex FindingsModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || child.internalId() == kTopLevel)
        return {};
    return createIndex(static_cast<int>(child.internalId()), 0, kTopLevel);
}

int FindingsModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return static_cast<int>(m_grouped ? m_groups.size() : m_rows.size());
    if (!m_grouped || parent.column() != 0 || parent.internalId() != kTopLevel)
        return 0;
    // A group of one is its finding: no children.
    const std::size_t members = m_groups[static_cast<std::size_t>(parent.row())].members.size();
    return members > 1 ? static_cast<int>(members) : 0;
}

int FindingsModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

QVariant FindingsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const FindingRow& row = rowAt(index);
    const ckpt::Finding& finding = row.finding;
    const Group* group = m_grouped && index.internalId() == kTopLevel ? &m_groups[static_cast<std::size_t>(index.row())] : nullptr;
    const bool many = group && group->members.size() > 1;
    if (role == MemberCountRole)
        return group ? static_cast<int>(group->members.size()) : 1;
    if (role == FindingCountRole)
        return group ? group->distinct : 1;
    if (many && role == Qt::DisplayRole && index.column() == Checkpoint)
        return group->where;
    if (many && group->distinct > 1 && role == Qt::DisplayRole && index.column() == Message)
        return tr("%1  (×%2)").arg(belowRoot(fromUtf8(finding.message), row.root)).arg(group->distinct);
    switch (role) {
    case SeverityRole:
        return static_cast<int>(finding.severity);
    case ComponentRole:
        return static_cast<int>(finding.component);
    case RunIdRole:
        return row.runId;
    case CheckpointIndexRole:
        return row.checkpointIndex;
    case SortRole:
        // Severity, then the order found in (reversed, so that worst-first keeps that order): a
        // total order, so rows keep their places when a filter changes.
        if (index.column() == Severity)
            return static_cast<qlonglong>(finding.severity) * (qlonglong(1) << 32) + (std::numeric_limits<int>::max() - index.row());
        if (index.column() == Component) // the recovery guide's order for a loss jump (§10.1)
            return ckpt::diagnosisRank(finding.component);
        [[fallthrough]];
    case Qt::DisplayRole:
        switch (static_cast<Column>(index.column())) {
        case Severity:
            return QLatin1String(ckpt::severityName(finding.severity));
        case Component:
            return QLatin1String(ckpt::componentName(finding.component));
        case Checkpoint:
            return row.checkpointName.isEmpty() ? tr("(run)") : row.checkpointName;
        case Message:
            return belowRoot(fromUtf8(finding.message), row.root);
        case Rule:
            return fromUtf8(finding.rule);
        case Where:
            return belowRoot(whereText(finding), row.root);
        case ColumnCount:
            break;
        }
        break;
    case Qt::DecorationRole:
        if (index.column() == Severity)
            return severityIcon(static_cast<int>(finding.severity));
        break;
    case Qt::ToolTipRole: {
        if (index.column() == Where)
            return whereText(finding).isEmpty() || finding.file.empty() ? whereText(finding)
                                                                        : whereText(finding) + QLatin1Char('\n') + fromUtf8(finding.file);
        QString tip = fromUtf8(finding.message);
        const QString evidence = evidenceText(finding);
        if (!evidence.isEmpty())
            tip += QStringLiteral("\n\n") + evidence;
        if (!finding.assumes.empty())
            tip += QStringLiteral("\n\n") + tr("Assumes: %1").arg(fromUtf8(finding.assumes));
        if (!finding.hint.empty())
            tip += QStringLiteral("\n\n") + tr("Hint: %1").arg(fromUtf8(finding.hint));
        return tip;
    }
    }
    return {};
}

QVariant FindingsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        switch (static_cast<Column>(section)) {
        case Severity:
            return tr("Severity");
        case Component:
            return tr("Component");
        case Checkpoint:
            return tr("Checkpoint");
        case Message:
            return tr("Message");
        case Rule:
            return tr("Rule");
        case Where:
            return tr("Where");
        case ColumnCount:
            break;
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (static_cast<Column>(section)) {
        case Severity:
            return tr("error: the resume or the file is wrong; warning: check it; info: worth knowing");
        case Component:
            return tr("The part of the training state: model, optimizer, scheduler, scaler, rng, data, progress, "
                      "environment, integrity (files, manifest), security (pickle imports)");
        case Checkpoint:
            return tr("The checkpoint the finding concerns; (run) for the run as a whole");
        case Message:
            return tr("What was found; hover a row for the evidence and a hint");
        case Rule:
            return tr("Stable rule id, as `ckpt audit` prints it");
        case Where:
            return tr("Provenance of the first piece of evidence: file and key path, from the run's folder "
                      "(hover a cell for the full path)");
        case ColumnCount:
            break;
        }
    }
    return {};
}
