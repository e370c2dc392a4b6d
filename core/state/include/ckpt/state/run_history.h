// SPDX-License-Identifier: MIT
// A run directory as a history: every checkpoint in it (any layout, nested a few levels),
// ordered by step, with the `latest` and `best` marks and incomplete saves flagged, plus the
// metric series logged beside them. Reads names, pointers, manifests and JSON/CSV logs only:
// never tensor data, and a pickle only when a step cannot be told otherwise.
#pragma once

#include "ckpt/frameworks/checkpoint_layout.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ckpt {

struct RunCheckpoint {
    std::string path;
    std::optional<int64_t> step;
    Layout layout = Layout::Generic;
    bool complete = true;
    std::string incompleteReason;
    bool latest = false;
    bool best = false;
    /// accelerate's automatic naming: the i of checkpoints/checkpoint_<i>, which counts saves, not
    /// steps (accelerate@16cb6eb8 src/accelerate/accelerator.py save_state). Orders a run whose
    /// checkpoints record no global step.
    std::optional<int64_t> saveIndex;
};

/// A logged step series that goes back: the run was resumed from an earlier checkpoint and logged
/// those steps again (TensorBoard purges them on such a restart; a metrics file keeps both).
struct LogRestart {
    std::string file;     // the log file
    int64_t step = 0;     // the first step logged after the restart
    int64_t previous = 0; // the last step logged before it (>= step)
    int line = 0;         // where in the file the restart is (1-based; 0 for formats without lines)
};

struct RunHistory {
    std::string path;
    std::vector<RunCheckpoint> checkpoints;                              // ordered by step (else save index)
    std::map<std::string, std::vector<std::pair<int64_t, double>>> series; // metric -> (step, value)
    std::vector<LogRestart> logRestarts; // in file order
    std::string latestFrom; // how `latest` was decided: "latest file", "newest complete checkpoint"...
    std::string bestFrom;
    std::vector<std::string> warnings;
};

/// Throws std::runtime_error when `dir` is not a directory.
RunHistory readRunHistory(const std::string& dir);

/// The global step a checkpoint records when its name does not say it (manifest.json,
/// trainer_state.json, a single file's global_step); nullopt when it records none.
std::optional<int64_t> recordedStep(const RunCheckpoint& checkpoint);

/// Whether the folder `dir` (whose layout is `layout`) is one checkpoint rather than a folder
/// holding some. `standalone`: it was opened by itself, so a folder of model weights (a Hugging
/// Face model folder, however many shards) is that one checkpoint; inside a run such a folder
/// counts only when its name carries a step (torchtitan's step-N export).
bool isCheckpointFolder(const std::string& dir, const CheckpointLayout& layout, bool standalone);

} // namespace ckpt
