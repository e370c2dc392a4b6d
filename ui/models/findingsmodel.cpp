// SPDX-License-Identifier: MIT
#include "ui/models/findingsmodel.h"

#include "ui/palettecolors.h"
#include "ui/textformat.h"

#include <QFileInfo>

#include <limits>

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
    : QAbstractTableModel(parent)
{
}

void FindingsModel::setFindings(std::vector<FindingRow> rows)
{
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

int FindingsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int FindingsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FindingsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const FindingRow& row = m_rows[static_cast<std::size_t>(index.row())];
    const ckpt::Finding& finding = row.finding;
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
