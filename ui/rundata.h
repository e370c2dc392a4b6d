// SPDX-License-Identifier: MIT
// What the window knows about the runs that are open, filled in stages by RunLoader: the
// listing first (so the run browser shows at once), then per checkpoint its training state,
// then the audit findings. Plain data shared read-only between the models and the pages.
#pragma once

#include "ckpt/findings/finding.h"
#include "ckpt/report/timeline.h"
#include "ckpt/state/run_history.h"
#include "ckpt/state/training_state.h"

#include <QMetaType>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

struct RunCheckpointData {
    ckpt::RunCheckpoint info;
    std::shared_ptr<const ckpt::TrainingState> state; // null until the scan reaches it
    QString stateError;                                // why the state could not be read
    std::vector<ckpt::Finding> findings;               // audit findings and load warnings of this checkpoint
    std::vector<std::pair<std::string, uint64_t>> fileSizes; // path -> bytes, for the layout's files
    bool scanned = false;

    /// The step the browser shows: the state's agreed global step once read, else the name's.
    std::optional<int64_t> step() const;
    /// -1 without findings, else the worst ckpt::Severity.
    int worstSeverity() const;
};

/// A run's audit findings sorted by the checkpoint they name (in the run's order), sorted off the
/// GUI thread; those naming no checkpoint of the run concern the run as a whole.
struct PlacedFindings {
    std::vector<std::vector<ckpt::Finding>> byCheckpoint;
    std::vector<ckpt::Finding> run;
    /// The run's timeline, built in the same background job from the check's report (null for
    /// loose files and single checkpoints).
    std::shared_ptr<const ckpt::Timeline> timeline;
};

/// Places each finding on every checkpoint it names (ckpt::Finding::checkpoints, compared as
/// normalised paths).
PlacedFindings placeFindings(const std::vector<std::string>& checkpointPaths, const std::vector<ckpt::Finding>& findings);

struct RunData {
    int id = 0;
    QString path;
    QString name; // shown in the browser: the folder name (or "broken/hash-mismatch" when nested)
    bool singleCheckpoint = false;
    bool looseFiles = false; // not a run: a folder of checkpoint files, each checked alone
    ckpt::RunHistory history; // checkpoints emptied: they live in `checkpoints`
    std::shared_ptr<const ckpt::RunHistory> fullHistory; // as read, checkpoints included: what the data pages take
    std::vector<RunCheckpointData> checkpoints;
    std::vector<ckpt::Finding> runFindings; // about the run as a whole (the latest pointer...)
    std::shared_ptr<const ckpt::Timeline> timeline; // null until the run's check has finished
    bool audited = false;
    QString auditNote; // why there is no audit (a Lightning folder has no manifests)

    /// The scan's result for checkpoint `index`: its read warnings become findings.
    void applyState(int index, std::shared_ptr<const ckpt::TrainingState> state, const QString& error,
                    std::vector<std::pair<std::string, uint64_t>> sizes);
    /// Audit findings go to the checkpoints they name; the others concern the run. Takes them.
    void applyAudit(PlacedFindings&& placed);

    /// The folder paths of the run are shown from: the run's folder, or a lone file's folder.
    QString folder() const;
    int latestIndex() const;
    int bestIndex() const; // -1 when the run names no best checkpoint
    int indexOfPath(const QString& path) const;
    /// A checkpoint alone in its run: RunLoader takes its state from its check, with the parsed
    /// files kept (TrainingState::files) for the pages to list; a run's states keep none.
    bool statesKeepFiles() const { return checkpoints.size() == 1; }
};

using RunDataPtr = std::shared_ptr<RunData>;

/// A load warning or read error as a finding, so the findings dock shows all problems in one list.
ckpt::Finding loadWarningFinding(const std::string& checkpoint, const std::string& message, ckpt::Severity severity);

Q_DECLARE_METATYPE(RunDataPtr)
