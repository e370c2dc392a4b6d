// SPDX-License-Identifier: MIT
// Opens runs off the GUI thread, in stages the window can show as they come:
//   runAvailable   the listing (checkpoints by step, latest/best/incomplete): the browser fills at once
//   stateAvailable one checkpoint's training state (headers and pickles only, no tensor data)
//   auditAvailable the run's findings: the rule catalogue over the run (core/rules/include/ckpt/rules/check.h: the
//                  manifest audit, every checkpoint, each consecutive pair and the run rules)
// Everything is delivered on the GUI thread. cancel() stops the scans at the next checkpoint or
// hash chunk; results of a closed run are dropped.
#pragma once

#include "ui/rundata.h"

#include <QObject>
#include <QThreadPool>

#include <atomic>
#include <map>
#include <memory>

class RunLoader final : public QObject {
    Q_OBJECT
public:
    explicit RunLoader(QObject* parent = nullptr);
    /// Cancels and waits for the workers; their results are dropped.
    ~RunLoader() override;

    /// Each path becomes one or more runs (a folder of runs opens them all), in the given order.
    /// `skip` lists run paths already open, which are not opened twice.
    void open(const QStringList& paths, const QStringList& skip = {});
    /// Stops every scan still running; what has arrived stays.
    void cancel();
    /// Stops the scans of one run and drops its late results.
    void forget(int runId);

    bool isBusy() const { return m_openPending > 0 || !m_unitsLeft.empty(); }

signals:
    void runAvailable(const RunDataPtr& run);
    void openFailed(const QString& path, const QString& reason);
    void stateAvailable(int runId, int index, const std::shared_ptr<const ckpt::TrainingState>& state, const QString& error,
                        const std::vector<std::pair<std::string, uint64_t>>& fileSizes);
    /// `findings` (placed on the run's checkpoints off the GUI thread) is null when the run could
    /// not be checked; `note` says why. The one receiver may move the findings out.
    void auditAvailable(int runId, const std::shared_ptr<PlacedFindings>& findings, const QString& note);
    /// Units are checkpoints read plus runs audited, over everything opened since the last idle.
    void progress(int done, int total, const QString& what);
    /// Every open and scan has finished or been cancelled.
    void idle();

public:
    /// Blocks until every open and scan started so far has ended; what they posted is then
    /// waiting in the event queue (for tests that prove a cancelled result is dropped).
    void waitForWorkers() { m_pool.waitForDone(); }

private:
    void startScan(const RunDataPtr& run);
    void unitDone(int runId);

    QThreadPool m_pool;
    int m_nextRunId = 1;
    int m_openPending = 0;
    int m_unitsDone = 0;
    int m_unitsTotal = 0;
    std::map<int, std::shared_ptr<std::atomic_bool>> m_cancelFlags; // per run, shared with its workers
    std::map<int, int> m_unitsLeft;                                  // per run: states and audit still to come
};
