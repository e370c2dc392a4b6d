// SPDX-License-Identifier: MIT
// The files of the current load: one row each, loading, loaded (format, size, tensor count) or
// failed (the reason, in the warning colour). Holds the opened files for the pages.
#pragma once

#include <QAbstractListModel>
#include <QStringList>

#include <memory>
#include <vector>

namespace ckpt {
class CheckpointFile;
}

class FileListModel final : public QAbstractListModel {
    Q_OBJECT
public:
    enum class State { Loading, Loaded, Failed };
    enum Role {
        PathRole = Qt::UserRole, // QString: the path as requested
        StateRole,               // int: State
        DetailRole,              // QString: "torch_zip, 4.79 KiB, 15 tensors" or the failure reason
    };

    explicit FileListModel(QObject* parent = nullptr);
    ~FileListModel() override;

    /// Replaces the list: every path starts as Loading.
    void setPaths(const QStringList& paths);
    /// The row of `file->path()` becomes Loaded; returns the row, -1 when the path is not listed.
    int setLoaded(std::shared_ptr<const ckpt::CheckpointFile> file);
    int setFailed(const QString& path, const QString& reason);

    int rowOf(const QString& path) const;
    State stateAt(int row) const;
    std::shared_ptr<const ckpt::CheckpointFile> fileAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Entry {
        QString path;
        State state = State::Loading;
        QString detail;
        std::shared_ptr<const ckpt::CheckpointFile> file;
    };
    std::vector<Entry> m_entries;
};
