// SPDX-License-Identifier: MIT
#include "ui/models/checkpointfilesmodel.h"

#include "ui/palettecolors.h"
#include "ui/rundata.h"
#include "ui/textformat.h"

#include <QDir>
#include <QFileInfo>

#include <filesystem>

namespace {

bool samePath(const std::string& a, const std::string& b)
{
    namespace fs = std::filesystem;
    return fs::path(a).lexically_normal() == fs::path(b).lexically_normal();
}

bool hasManifest(const ckpt::TrainingState& state)
{
    for (const ckpt::LayoutFile& file : state.layout.files) {
        if (file.role == "manifest")
            return true;
    }
    return false;
}

} // namespace

CheckpointFilesModel::CheckpointFilesModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void CheckpointFilesModel::setCheckpoint(const RunCheckpointData* checkpoint, bool audited, const QString& note)
{
    beginResetModel();
    m_rows.clear();
    if (checkpoint && checkpoint->state) {
        const ckpt::TrainingState& state = *checkpoint->state;
        const QDir base(QFileInfo(fromUtf8(state.layout.path)).isDir() ? fromUtf8(state.layout.path)
                                                                      : QFileInfo(fromUtf8(state.layout.path)).path());
        const bool manifest = hasManifest(state);
        std::vector<bool> used(checkpoint->findings.size(), false);
        for (const ckpt::LayoutFile& file : state.layout.files) {
            Row row;
            row.path = fromUtf8(file.path);
            row.name = base.relativeFilePath(row.path);
            row.role = fromUtf8(file.role);
            row.rank = file.rank;
            for (const auto& [path, bytes] : checkpoint->fileSizes) {
                if (path == file.path)
                    row.size = static_cast<qint64>(bytes);
            }
            QStringList rules;
            for (std::size_t i = 0; i < checkpoint->findings.size(); ++i) {
                const ckpt::Finding& finding = checkpoint->findings[i];
                if (finding.file.empty() || !samePath(finding.file, file.path))
                    continue;
                used[i] = true;
                rules.append(fromUtf8(finding.rule));
                row.severity = std::max(row.severity, static_cast<int>(finding.severity));
            }
            if (!rules.isEmpty())
                row.audit = rules.join(QStringLiteral(", "));
            else if (!audited)
                row.audit = note.isEmpty() ? tr("not audited yet") : tr("not audited");
            else if (file.role == "manifest" || file.role == "complete")
                row.audit = tr("present");
            else
                row.audit = manifest ? tr("verified (size, sha256)") : tr("no manifest to verify against");
            m_rows.push_back(std::move(row));
        }
        // What the audit found missing from the disk has no layout entry: show it anyway.
        for (std::size_t i = 0; i < checkpoint->findings.size(); ++i) {
            const ckpt::Finding& finding = checkpoint->findings[i];
            if (used[i] || finding.file.empty() || finding.rule != "integrity.missing-file")
                continue;
            Row row;
            row.path = fromUtf8(finding.file);
            row.name = base.relativeFilePath(row.path);
            row.role = tr("(missing)");
            row.audit = fromUtf8(finding.rule);
            row.severity = static_cast<int>(finding.severity);
            m_rows.push_back(std::move(row));
        }
    }
    endResetModel();
}

int CheckpointFilesModel::rowOfPath(const QString& path) const
{
    for (std::size_t row = 0; row < m_rows.size(); ++row) {
        if (samePath(m_rows[row].path.toStdString(), path.toStdString()))
            return static_cast<int>(row);
    }
    return -1;
}

int CheckpointFilesModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int CheckpointFilesModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CheckpointFilesModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Row& row = m_rows[static_cast<std::size_t>(index.row())];
    switch (role) {
    case PathRole:
        return row.path;
    case AuditSeverityRole:
        return row.severity;
    case SortRole:
        if (index.column() == Size)
            return row.size;
        if (index.column() == Rank)
            return row.rank;
        [[fallthrough]];
    case Qt::DisplayRole:
        switch (static_cast<Column>(index.column())) {
        case File:
            return row.name;
        case Role:
            return row.role;
        case Rank:
            return row.rank < 0 ? QString() : QString::number(row.rank);
        case Size:
            return row.size < 0 ? QStringLiteral("—") : humanBytes(static_cast<uint64_t>(row.size));
        case Audit:
            return row.audit;
        case ColumnCount:
            break;
        }
        break;
    case Qt::ForegroundRole:
        if (index.column() == Audit && row.severity >= 0)
            return severityColor(row.severity);
        break;
    case Qt::DecorationRole:
        if (index.column() == Audit && row.severity >= 0)
            return severityIcon(row.severity);
        break;
    case Qt::ToolTipRole:
        return row.path;
    case Qt::TextAlignmentRole:
        if (index.column() == Size || index.column() == Rank)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        break;
    }
    return {};
}

QVariant CheckpointFilesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        switch (static_cast<Column>(section)) {
        case File:
            return tr("File");
        case Role:
            return tr("Role");
        case Rank:
            return tr("Rank");
        case Size:
            return tr("Size");
        case Audit:
            return tr("Audit");
        case ColumnCount:
            break;
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (static_cast<Column>(section)) {
        case File:
            return tr("Path inside the checkpoint");
        case Role:
            return tr("What the file holds, recognised from its name and layout: model, optimizer, rng, manifest…");
        case Rank:
            return tr("The process rank of a per-rank file (RNG states, shards)");
        case Size:
            return tr("Bytes on disk");
        case Audit:
            return tr("verified: size and SHA-256 match manifest.json; otherwise the audit rule that failed, "
                      "or why it could not be checked");
        case ColumnCount:
            break;
        }
    }
    return {};
}
