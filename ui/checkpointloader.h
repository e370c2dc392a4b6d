// SPDX-License-Identifier: MIT
// Opens checkpoints off the GUI thread. Each load() starts a new batch: a checkpoint becomes every
// file of it that holds tensors or pickles, each opened on its own so one failure never hides the
// others. Results arrive on the GUI thread; results of an earlier batch are dropped.
#pragma once

#include <QObject>
#include <QStringList>
#include <QThreadPool>

#include <memory>

namespace ckpt {
class CheckpointFile;
}

class CheckpointLoader final : public QObject {
    Q_OBJECT
public:
    explicit CheckpointLoader(QObject* parent = nullptr);
    /// Waits for opens still running (their results are dropped).
    ~CheckpointLoader() override;

    /// File name endings a folder is searched for: .pt .pth .bin .ckpt .safetensors .pkl
    static QStringList checkpointNameFilters();
    /// `paths` with every checkpoint replaced by the files its layout opens (a folder's, a .nemo's
    /// members, a NeMo rank file's copies on the other ranks). A folder without any stays in the list,
    /// so it can fail with a reason.
    static QStringList expandPaths(const QStringList& paths);

    void load(const QString& path);
    void load(const QStringList& paths);
    /// As load(path), with the files of `parsed` (a checkpoint's state kept them: TrainingState::files)
    /// delivered as they are instead of being opened and parsed again.
    void load(const QString& path, const std::vector<std::shared_ptr<const ckpt::CheckpointFile>>& parsed);

    /// Drops the current batch: opens not started are removed, results still coming are ignored,
    /// and nothing more is emitted for it.
    void cancel();

    bool isBusy() const { return m_pending > 0; }

signals:
    /// A new batch begins: `files` are the paths that will each get loaded() or failed().
    void started(const QStringList& files);
    void loaded(std::shared_ptr<const ckpt::CheckpointFile> file);
    void failed(const QString& path, const QString& reason);
    void progress(int done, int total);
    /// Every file of the batch has arrived.
    void finished();

public:
    /// Blocks until every job started so far has ended; what they posted is then waiting in the
    /// event queue. Lets a test prove that a stale result is dropped (drain, then deliver) rather
    /// than sleep and hope it would have arrived.
    void waitForWorkers() { m_pool.waitForDone(); }

private:
    void load(const QStringList& paths, const std::vector<std::shared_ptr<const ckpt::CheckpointFile>>& parsed);
    void deliver(quint64 generation);

    QThreadPool m_pool;
    QObject* m_batch = nullptr; // parent of the current batch's watchers
    quint64 m_generation = 0;
    int m_pending = 0;
    int m_total = 0;
};
