// SPDX-License-Identifier: MIT
// One line per part of S_t for a checkpoint: what a report or a timeline shows of it without the
// whole state (the state can be large; its summary is a few hundred bytes).
#pragma once

#include "ckpt/state/training_state.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckpt {

struct StateSummary {
    std::string path;
    std::optional<int64_t> step;
    /// (part, text) in S_t's order: W, O, L, A, R, D, C, E; a part the checkpoint lacks says so.
    std::vector<std::pair<std::string, std::string>> parts;
    std::string rngFingerprint; // rank 0's (else the first) torch CPU generator; "" when none
    /// The first group's LR the saved scheduler gives at positions 0..last_epoch (every position up
    /// to 2048 of them, else an even sample), when its formula is known: (position, lr).
    std::vector<std::pair<int64_t, double>> lrCurve;
};

/// withLrCurve: also replay the scheduler over its positions (O(last_epoch)); a run's timeline
/// draws only its latest checkpoint's curve, so the others skip it.
StateSummary summarizeState(const TrainingState& state, bool withLrCurve = false);

} // namespace ckpt
