// SPDX-License-Identifier: MIT
// What a GradScaler state says about the steps behind it (recovery guide §3.2). torch's
// GradScaler starts at init_scale 65536 (2^16, not saved in its state_dict); every overflow
// skips the optimizer update and multiplies the scale by backoff_factor (0.5) and restarts the
// growth tracker; every growth_interval (2000) clean steps in a row multiply it by growth_factor
// (2) and restart the tracker. So from the scale, the tracker and the global step one can tell how
// many updates were skipped, and whether the state can be reached at all.
#pragma once

#include "ckpt/findings/finding.h"
#include "ckpt/state/training_state.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckpt::rules {

constexpr double kDefaultInitScale = 65536.0;

struct ScalerAccount {
    bool present = false;      // a scaler state was saved
    bool unused = false;       // disabled (empty state) or never updated (initial scale, tracker 0)
    bool known = false;        // minSkips/maxSkips were derived
    bool consistent = true;    // false: the state cannot be reached from the initial one in the steps taken
    bool customInitLikely = false; // inconsistent only in a way a non-default init_scale would explain
    int64_t minSkips = 0, maxSkips = 0; // AMP-skipped optimizer updates the state accounts for
    std::string explanation;   // how the figures were derived, one sentence
    std::string problem;       // when !consistent: what cannot be reached
    std::vector<Evidence> evidence;
};

/// Accounts for `state`'s scaler over its global step. Without a scaler: present = false.
ScalerAccount accountScaler(const TrainingState& state);

/// Fewest growths needed to go from scale `from` to scale `to` (negative: backoffs), when both
/// are powers of the growth factor apart; nullopt otherwise.
std::optional<int64_t> growthsBetween(double from, double to, double growthFactor, double backoffFactor);

} // namespace ckpt::rules
