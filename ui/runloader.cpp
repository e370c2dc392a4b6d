// SPDX-License-Identifier: MIT
#include "ui/runloader.h"

#include "ckpt/rules/check.h"
#include "ckpt/state/run_discovery.h"
#include "ui/backgroundpriority.h"
#include "ui/textformat.h"

#include <QDir>
#include <QFileInfo>
#include <QPointer>

#include <filesystem>

namespace {

struct Discovery {
    QString path;
    std::vector<ckpt::DiscoveredRun> runs;
    QString error;
};

Discovery discover(const QString& path)
{
    Discovery result{path, {}, {}};
    try {
        result.runs = ckpt::discoverRuns(path.toStdString());
    } catch (const std::exception& e) {
        result.error = fromUtf8(e.what());
    }
    return result;
}

QString runName(const QString& path, const QStringList& requested)
{
    // Inside a folder of runs, the path below it tells runs apart ("broken/hash-mismatch").
    if (requested.contains(path))
        return QFileInfo(path).fileName();
    for (const QString& root : requested) {
        if (path.startsWith(root + QLatin1Char('/')))
            return QDir(root).relativeFilePath(path);
    }
    return QFileInfo(path).fileName();
}

std::vector<std::pair<std::string, uint64_t>> fileSizes(const ckpt::TrainingState& state)
{
    std::vector<std::pair<std::string, uint64_t>> sizes;
    for (const ckpt::LayoutFile& file : state.layout.files) {
        std::error_code ec;
        const auto size = std::filesystem::file_size(file.path, ec);
        if (!ec)
            sizes.emplace_back(file.path, size);
    }
    return sizes;
}

} // namespace

RunLoader::RunLoader(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<RunDataPtr>();
    // Two cores shared with the user's other work: one listing/scan thread and one audit at most.
    m_pool.setMaxThreadCount(2);
}

RunLoader::~RunLoader()
{
    // A loader being destroyed tells nobody: its receivers (the main window) may be half
    // destroyed already, and cancel() would emit idle() into them.
    blockSignals(true);
    cancel();
    m_pool.clear(); // scans not started yet never run
    m_pool.waitForDone();
}

void RunLoader::open(const QStringList& paths, const QStringList& skip)
{
    QStringList absolute;
    for (const QString& path : paths)
        absolute.append(QDir::cleanPath(QFileInfo(path).absoluteFilePath()));
    ++m_openPending;
    QPointer<RunLoader> self(this);
    m_pool.start([self, absolute, skip] {
        std::vector<Discovery> found;
        for (const QString& path : absolute)
            found.push_back(discover(path));
        QMetaObject::invokeMethod(self.data(), [self, found = std::move(found), absolute, skip]() mutable {
            if (!self)
                return;
            QStringList seen = skip;
            for (Discovery& discovery : found) {
                if (!discovery.error.isEmpty())
                    emit self->openFailed(discovery.path, discovery.error);
                for (ckpt::DiscoveredRun& run : discovery.runs) {
                    const QString runPath = fromUtf8(run.path);
                    if (seen.contains(runPath))
                        continue;
                    seen.append(runPath);
                    auto data = std::make_shared<RunData>();
                    data->id = self->m_nextRunId++;
                    data->path = runPath;
                    data->name = runName(runPath, absolute);
                    data->singleCheckpoint = run.singleCheckpoint;
                    data->looseFiles = run.looseFiles;
                    data->fullHistory = std::make_shared<const ckpt::RunHistory>(run.history);
                    for (ckpt::RunCheckpoint& checkpoint : run.history.checkpoints) {
                        RunCheckpointData entry;
                        entry.info = std::move(checkpoint);
                        data->checkpoints.push_back(std::move(entry));
                    }
                    run.history.checkpoints.clear();
                    data->history = std::move(run.history);
                    for (const std::string& warning : data->history.warnings)
                        data->runFindings.push_back(loadWarningFinding(run.path, warning, ckpt::Severity::Warning));
                    emit self->runAvailable(data);
                    self->startScan(data);
                }
            }
            --self->m_openPending;
            if (!self->isBusy())
                emit self->idle();
        }, Qt::QueuedConnection);
    });
}

void RunLoader::startScan(const RunDataPtr& run)
{
    auto cancelled = std::make_shared<std::atomic_bool>(false);
    m_cancelFlags[run->id] = cancelled;
    const int runId = run->id;
    std::vector<std::string> paths;
    for (const RunCheckpointData& checkpoint : run->checkpoints)
        paths.push_back(checkpoint.info.path);
    m_unitsLeft[runId] = static_cast<int>(paths.size()) + 1;
    m_unitsTotal += m_unitsLeft[runId];
    emit progress(m_unitsDone, m_unitsTotal, tr("Reading %1…").arg(run->name));

    QPointer<RunLoader> self(this);
    auto deliverState = [self, runId, cancelled](int index, std::shared_ptr<const ckpt::TrainingState> state, QString error) {
        std::vector<std::pair<std::string, uint64_t>> sizes;
        if (state)
            sizes = fileSizes(*state);
        QMetaObject::invokeMethod(self.data(), [self, runId, index, state, error, sizes, cancelled] {
            if (!self || *cancelled)
                return;
            emit self->stateAvailable(runId, index, state, error, sizes);
            self->unitDone(runId);
        }, Qt::QueuedConnection);
    };
    // A checkpoint alone: its check reads the state and hands it over before running the rules,
    // with the parsed files kept for the Tensors tab, so nothing is parsed twice (a 163-shard
    // index, an 80k-tensor pickle). A run's states are read here, in parallel with its check, and
    // keep no files: hundreds of value graphs would stay in memory.
    const bool stateFromCheck = run->statesKeepFiles();
    if (!stateFromCheck) {
        m_pool.start([paths, cancelled, deliverState] {
            lowerThreadPriority();
            for (std::size_t i = 0; i < paths.size(); ++i) {
                if (*cancelled)
                    return; // cancel() already counted what is left
                try {
                    deliverState(static_cast<int>(i), std::make_shared<const ckpt::TrainingState>(ckpt::readTrainingState(paths[i])), {});
                } catch (const std::exception& e) {
                    deliverState(static_cast<int>(i), nullptr, fromUtf8(e.what()));
                }
            }
        });
    }

    // Loose files have no run to check as one: each file is checked as a checkpoint.
    const std::vector<std::string> inputs = run->looseFiles ? paths : std::vector<std::string>{run->path.toStdString()};
    // a run's timeline comes from the same check (core/report/timeline.h): nothing is read twice
    const auto history = run->looseFiles || run->singleCheckpoint ? nullptr : run->fullHistory;
    m_pool.start([self, runId, inputs, paths, cancelled, history, stateFromCheck, deliverState] {
        lowerThreadPriority();
        std::vector<ckpt::Finding> findings;
        std::shared_ptr<const ckpt::Timeline> timeline;
        QString note;
        ckpt::CheckOptions options;
        options.progress = [cancelled](const ckpt::CheckProgress&) { return !*cancelled; };
        bool stateDelivered = false;
        if (stateFromCheck) {
            options.keepFiles = true;
            options.stateRead = [&](const std::shared_ptr<const ckpt::TrainingState>& state) {
                if (!stateDelivered)
                    deliverState(0, state, {});
                stateDelivered = true;
            };
        }
        for (const std::string& input : inputs) {
            try {
                ckpt::CheckReport report = ckpt::checkPaths({input}, options);
                if (history && report.kind == "run" && !report.cancelled)
                    timeline = std::make_shared<const ckpt::Timeline>(ckpt::buildTimeline(*history, report));
                findings.insert(findings.end(), std::make_move_iterator(report.findings.begin()),
                                std::make_move_iterator(report.findings.end()));
            } catch (const std::exception& e) {
                note = fromUtf8(e.what()); // the states' own errors are findings already
            }
        }
        if (stateFromCheck && !stateDelivered)
            deliverState(0, nullptr, note.isEmpty() ? RunLoader::tr("the checkpoint could not be read") : note);
        // Sorted here: on the GUI thread, matching a run's hundreds of findings to its checkpoints
        // took longer than a frame.
        auto placed = std::make_shared<PlacedFindings>(placeFindings(paths, findings));
        placed->timeline = std::move(timeline);
        QMetaObject::invokeMethod(self.data(), [self, runId, placed, note, cancelled] {
            if (!self || *cancelled)
                return;
            emit self->auditAvailable(runId, placed, note);
            self->unitDone(runId);
        }, Qt::QueuedConnection);
    });
}

void RunLoader::unitDone(int runId)
{
    const auto it = m_unitsLeft.find(runId);
    if (it == m_unitsLeft.end())
        return;
    if (--it->second == 0) {
        m_unitsLeft.erase(it);
        m_cancelFlags.erase(runId);
    }
    ++m_unitsDone;
    emit progress(m_unitsDone, m_unitsTotal, QString());
    if (!isBusy()) {
        m_unitsDone = m_unitsTotal = 0;
        emit idle();
    }
}

void RunLoader::cancel()
{
    for (auto& [id, flag] : m_cancelFlags)
        *flag = true;
    m_cancelFlags.clear();
    m_unitsLeft.clear();
    m_unitsDone = m_unitsTotal = 0;
    if (m_openPending == 0)
        emit idle();
}

void RunLoader::forget(int runId)
{
    const auto it = m_cancelFlags.find(runId);
    if (it == m_cancelFlags.end())
        return;
    *it->second = true;
    m_cancelFlags.erase(it);
    m_unitsTotal -= m_unitsLeft[runId];
    m_unitsLeft.erase(runId);
    if (!isBusy()) {
        m_unitsDone = m_unitsTotal = 0;
        emit idle();
    }
}
