// SPDX-License-Identifier: MIT
// Two checkpoints compared part by part (files, directories or any layout, also of different
// layouts): model tensors aligned by name after stripping wrapper prefixes (`module.`,
// `_orig_mod.`, `model.`), optimizer moments by parameter name, every other tensor by file and
// key path; and the non-tensor parts of the TrainingState: scheduler, scaler, RNG (per
// generator per rank: same / advanced / different), data cursor, counters and environment.
#pragma once

#include "ckpt/state/training_state.h"
#include "ckpt/stats/tensor_compare.h"

#include <string>
#include <vector>

namespace ckpt {

struct StateDiff {
    std::string component;  // "optimizer", "scheduler", "scaler", "rng", "data", "progress", "environment", "model"
    std::string name;       // "lr", "scale", "torch_cpu@rank0", "global_step"...
    std::string a, b;       // the values as text ("" when absent on that side)
    std::string status;     // "same", "changed", "only_a", "only_b"; RNG: "same", "advanced", "different"
    std::string whereA, whereB; // provenance: "file: key/path"
};

struct DiffCounts {
    std::size_t equal = 0, changed = 0, onlyA = 0, onlyB = 0, shapeChanged = 0, dtypeChanged = 0, unreadable = 0;
};

struct CheckpointDiff {
    std::string pathA, pathB;
    std::string prefixA, prefixB;      // wrapper prefix stripped from A's / B's model keys ("" when none)
    std::vector<TensorDiff> tensors;   // model first, then optimizer, then other; A's order, B-only last
    std::vector<StateDiff> states;
    DiffCounts counts;
    bool cancelled = false;            // tensors compared so far only
    std::vector<std::string> warnings;
};

/// Reads both training states and compares them. Throws std::runtime_error when a path does
/// not exist. Cancellation returns what was compared with cancelled = true.
CheckpointDiff diffCheckpoints(const std::string& a, const std::string& b, const StatsOptions& options = {});
CheckpointDiff diffCheckpoints(const TrainingState& a, const TrainingState& b, const StatsOptions& options = {});

/// The wrapper prefix every name starts with, built from `module.`, `_orig_mod.` and `model.`
/// in any nesting ("module._orig_mod."); "" when the names do not all share one.
std::string wrapperPrefix(const std::vector<std::string>& names);

} // namespace ckpt
