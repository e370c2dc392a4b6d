// SPDX-License-Identifier: MIT
#include "ui/checkpointloader.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/frameworks/checkpoint_layout.h"
#include "ui/backgroundpriority.h"
#include "ui/textformat.h"

#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace {

struct OpenResult {
    std::shared_ptr<const ckpt::CheckpointFile> file;
    QString reason;
};

OpenResult openFile(const QString& path)
{
    lowerThreadPriority();
    OpenResult result;
    try {
        result.file = ckpt::CheckpointFile::open(path.toStdString());
    } catch (const ckpt::OpenError& e) {
        result.reason = fromUtf8(e.reason());
    } catch (const std::exception& e) {
        result.reason = fromUtf8(e.what());
    } catch (...) {
        result.reason = CheckpointLoader::tr("unexpected error while reading");
    }
    return result;
}

} // namespace

CheckpointLoader::CheckpointLoader(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<std::shared_ptr<const ckpt::CheckpointFile>>();
}

CheckpointLoader::~CheckpointLoader()
{
    // The tasks only touch their own result, but the watchers (our children) must not outlive
    // the pool they wait on: finish here, before QObject deletes them.
    m_pool.clear();
    m_pool.waitForDone();
}

QStringList CheckpointLoader::checkpointNameFilters()
{
    return {QStringLiteral("*.pt"), QStringLiteral("*.pth"), QStringLiteral("*.bin"), QStringLiteral("*.ckpt"),
            QStringLiteral("*.safetensors"), QStringLiteral("*.pkl"), QStringLiteral("*.nemo")};
}

QStringList CheckpointLoader::expandPaths(const QStringList& paths)
{
    // The files of a checkpoint as its layout names them (core/state's detectLayout): a folder's
    // files, Megatron's rank folders, NeMo's per-rank copies of one .ckpt, a .nemo's members; only
    // those that hold tensors or pickles (opensAsCheckpointFile, the state reader's own predicate).
    QStringList files;
    for (const QString& path : paths) {
        QStringList found;
        try {
            const ckpt::CheckpointLayout layout = ckpt::detectLayout(path.toStdString());
            for (const ckpt::LayoutFile& f : layout.files) {
                if (ckpt::opensAsCheckpointFile(f))
                    found.append(fromUtf8(f.path));
            }
        } catch (const std::exception&) {
            // a path that does not exist: kept, so it fails with the reason
        }
        if (found.isEmpty())
            found.append(path); // fails below: a folder "with no checkpoint files", a file with its reason
        files.append(found);
    }
    return files;
}

void CheckpointLoader::load(const QString& path)
{
    load(QStringList{path});
}

void CheckpointLoader::load(const QStringList& paths)
{
    load(paths, {});
}

void CheckpointLoader::load(const QString& path, const std::vector<std::shared_ptr<const ckpt::CheckpointFile>>& parsed)
{
    load(QStringList{path}, parsed);
}

void CheckpointLoader::load(const QStringList& paths, const std::vector<std::shared_ptr<const ckpt::CheckpointFile>>& parsed)
{
    const quint64 generation = ++m_generation;
    // Drop the previous batch: opens not started yet are removed from the pool, and its
    // watchers go with their batch object (later: one of them may be the caller right now).
    m_pool.clear();
    if (m_batch)
        m_batch->deleteLater();
    m_batch = new QObject(this);
    QObject* const batch = m_batch;
    const QStringList files = expandPaths(paths);
    m_total = static_cast<int>(files.size());
    m_pending = m_total;
    emit started(files);
    emit progress(0, m_total);

    if (files.isEmpty()) {
        QMetaObject::invokeMethod(batch, [this, generation] {
            if (generation == m_generation)
                emit finished();
        }, Qt::QueuedConnection);
        return;
    }
    for (const QString& file : files) {
        if (QFileInfo(file).isDir()) {
            const QString reason = tr("no checkpoint files (%1) in this folder")
                                       .arg(checkpointNameFilters().join(QStringLiteral(" ")));
            QMetaObject::invokeMethod(batch, [this, generation, file, reason] {
                if (generation != m_generation)
                    return;
                emit failed(file, reason);
                deliver(generation);
            }, Qt::QueuedConnection);
            continue;
        }
        const auto known = std::find_if(parsed.begin(), parsed.end(), [&](const auto& f) { return f && fromUtf8(f->path()) == file; });
        if (known != parsed.end()) {
            QMetaObject::invokeMethod(batch, [this, generation, file = *known] {
                if (generation != m_generation)
                    return;
                emit loaded(file);
                deliver(generation);
            }, Qt::QueuedConnection);
            continue;
        }
        // The watcher lives on the GUI thread and reports there; it is deleted once read.
        auto* watcher = new QFutureWatcher<OpenResult>(batch);
        connect(watcher, &QFutureWatcherBase::finished, batch, [this, watcher, generation, file] {
            watcher->deleteLater();
            if (generation != m_generation || watcher->future().isCanceled())
                return; // a newer batch started
            const OpenResult result = watcher->result();
            if (result.file)
                emit loaded(result.file);
            else
                emit failed(file, result.reason);
            deliver(generation);
        });
        watcher->setFuture(QtConcurrent::run(&m_pool, openFile, file));
    }
}

void CheckpointLoader::cancel()
{
    ++m_generation;
    m_pool.clear();
    if (m_batch)
        m_batch->deleteLater();
    m_batch = nullptr;
    m_pending = 0;
}

void CheckpointLoader::deliver(quint64 generation)
{
    if (generation != m_generation || m_pending == 0)
        return;
    --m_pending;
    emit progress(m_total - m_pending, m_total);
    if (m_pending == 0)
        emit finished();
}
