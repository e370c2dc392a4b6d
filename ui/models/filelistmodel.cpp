// SPDX-License-Identifier: MIT
#include "ui/models/filelistmodel.h"

#include "core/checkpoint_file.h"
#include "ui/palettecolors.h"
#include "ui/textformat.h"

#include <QFileInfo>

FileListModel::FileListModel(QObject* parent)
    : QAbstractListModel(parent)
{
}

FileListModel::~FileListModel() = default;

void FileListModel::setPaths(const QStringList& paths)
{
    beginResetModel();
    m_entries.clear();
    m_entries.reserve(static_cast<std::size_t>(paths.size()));
    for (const QString& path : paths)
        m_entries.push_back(Entry{path, State::Loading, tr("loading…"), nullptr});
    endResetModel();
}

int FileListModel::setLoaded(std::shared_ptr<const ckpt::CheckpointFile> file)
{
    const int row = rowOf(fromUtf8(file->path()));
    if (row < 0)
        return row;
    const std::size_t tensors = file->tensorEntries().size();
    Entry& entry = m_entries[static_cast<std::size_t>(row)];
    entry.state = State::Loaded;
    entry.detail = QLatin1String(ckpt::formatName(file->format())) + QStringLiteral(", ") + humanBytes(file->fileSize())
        + QStringLiteral(", ") + (tensors == 1 ? tr("1 tensor") : tr("%1 tensors").arg(tensors));
    entry.file = std::move(file);
    emit dataChanged(index(row), index(row));
    return row;
}

int FileListModel::setFailed(const QString& path, const QString& reason)
{
    const int row = rowOf(path);
    if (row < 0)
        return row;
    Entry& entry = m_entries[static_cast<std::size_t>(row)];
    entry.state = State::Failed;
    entry.detail = reason;
    entry.file.reset();
    emit dataChanged(index(row), index(row));
    return row;
}

int FileListModel::rowOf(const QString& path) const
{
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
        if (m_entries[i].path == path)
            return static_cast<int>(i);
    }
    return -1;
}

FileListModel::State FileListModel::stateAt(int row) const
{
    return m_entries.at(static_cast<std::size_t>(row)).state;
}

std::shared_ptr<const ckpt::CheckpointFile> FileListModel::fileAt(int row) const
{
    if (row < 0 || static_cast<std::size_t>(row) >= m_entries.size())
        return nullptr;
    return m_entries[static_cast<std::size_t>(row)].file;
}

int FileListModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

QVariant FileListModel::data(const QModelIndex& index, int role) const
{
    if (!hasIndex(index.row(), index.column(), index.parent()))
        return {};
    const Entry& entry = m_entries[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return QString(QFileInfo(entry.path).fileName() + QLatin1Char('\n') + entry.detail);
    case Qt::ToolTipRole:
        return QString(entry.path + QLatin1Char('\n') + entry.detail);
    case Qt::ForegroundRole:
        if (entry.state == State::Failed)
            return warningColor();
        return {};
    case PathRole:
        return entry.path;
    case StateRole:
        return static_cast<int>(entry.state);
    case DetailRole:
        return entry.detail;
    default:
        return {};
    }
}

QVariant FileListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (section != 0 || orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole)
        return tr("File");
    if (role == Qt::ToolTipRole)
        return tr("Files of the last open; a file that could not be read shows why");
    return {};
}
