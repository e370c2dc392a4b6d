// SPDX-License-Identifier: MIT
// `ckpt check`: every rule of the catalogue over a file, a checkpoint directory, a pair
// (A before B) or a run directory (run rules, every checkpoint, and each consecutive pair).
#pragma once

#include "ckpt/rules/checkpoint_facts.h"
#include "ckpt/state/state_summary.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ckpt {

struct CheckProgress {
    std::size_t done = 0, total = 0; // checkpoints (a run: checkpoints, then pairs)
    std::string stage;               // "reading checkpoint-0000200", "comparing ... -> ...", "auditing"
};

struct CheckOptions {
    bool audit = true;   // verify sizes and hashes against manifests (reads every byte)
    bool content = true; // read tensor bytes for the content rules
    /// Called before each checkpoint, pair and the audit (on the calling thread). Return false to
    /// cancel: the report then holds what was checked so far and cancelled = true.
    std::function<bool(const CheckProgress&)> progress;
    /// Called (on the calling thread) with each checkpoint's state as soon as it is read, before
    /// its rules run: a caller that shows the states (the GUI) need not read them a second time,
    /// and keeps them without a copy (the rules only read them).
    std::function<void(const std::shared_ptr<const TrainingState>&)> stateRead;
    /// The states given to stateRead keep their parsed files (TrainingState::files), for the
    /// caller to list tensors from without parsing again.
    bool keepFiles = false;
};

struct SeriesPoint {
    int64_t step = 0;
    double value = 0;
    std::string checkpoint;
};

/// Where a run's series breaks: at B's step for a pair finding, at the logged step for a run rule.
struct Discontinuity {
    std::string series;
    int64_t step = 0;
    std::string rule;
    std::string checkpoint;
};

struct CheckReport {
    std::string kind;                      // "checkpoint", "pair" or "run"
    std::vector<std::string> inputs;
    std::vector<std::string> checkpoints;  // checked, oldest first
    std::vector<Finding> findings;         // most severe first, then by component and rule
    std::map<std::string, std::vector<SeriesPoint>> series; // runs: one value per checkpoint
    std::vector<Discontinuity> discontinuities;
    std::vector<StateSummary> states;      // one per checked checkpoint, in the order of `checkpoints`
    bool cancelled = false;

    std::size_t count(Severity severity) const;
    bool hasProblems() const; // any warning or error
};

/// The single-checkpoint rules over one checkpoint's facts.
std::vector<Finding> checkCheckpoint(const CheckpointFacts& checkpoint);
/// The pair rules (A saved before B, or B a resume of A).
std::vector<Finding> checkPair(const CheckpointFacts& a, const CheckpointFacts& b);

/// One path: a file or checkpoint directory, or a run directory. Two paths: a pair.
/// Throws std::runtime_error (what(): "PATH: reason") when an input does not exist or holds
/// nothing readable.
CheckReport checkPaths(const std::vector<std::string>& paths, const CheckOptions& options = {});

/// Orders findings: error, warning, info; within a severity by component, then rule id.
void sortFindings(std::vector<Finding>& findings);

nlohmann::json findingToJson(const Finding& finding);
/// {"kind", "inputs", "checkpoints", "counts": {error, warning, info}, "findings": [...],
///  "groups": [{rule, severity, component, message, hint, count, findings: [indices], checkpoints}],
///  "series": {name: [{step, value, checkpoint}]}, "discontinuities": [{series, step, rule, checkpoint}],
///  "cancelled"}
nlohmann::json checkReportToJson(const CheckReport& report);

} // namespace ckpt
