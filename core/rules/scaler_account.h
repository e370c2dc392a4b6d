// SPDX-License-Identifier: MIT
// What a GradScaler state says about the steps behind it (recovery guide §3.2), and what it does
// not. Every overflow skips the optimizer update, multiplies the scale by backoff_factor and
// restarts the growth tracker; every growth_interval clean updates in a row multiply it by
// growth_factor and restart the tracker (pytorch@e402fa84:aten/src/ATen/native/cpu/
// AmpGradScalerKernels.cpp, _amp_update_scale_cpu_kernel). The state dict does not record
// init_scale (pytorch@3f34c068:torch/amp/grad_scaler.py, state_dict()), so how many updates were
// skipped can only be derived under an assumption about it: the default 65536 (2^16). Rules use
// that derivation to explain figures, never to call a state inconsistent (docs/conventions.md §1).
#pragma once

#include "ckpt/findings/finding.h"
#include "ckpt/state/training_state.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckpt::rules {

constexpr double kDefaultInitScale = 65536.0;
inline constexpr const char* kAssumesDefaultInitScale =
    "GradScaler's default init_scale 65536; the scaler's state dict does not record init_scale, so a run built "
    "with another one is not decided by the files";

struct ScalerAccount {
    bool present = false;      // a scaler state was saved
    bool disabled = false;     // an empty state: GradScaler(enabled=False), no update is ever skipped
    bool known = false;        // minSkips/maxSkips were derived, assuming the default init_scale
    int64_t minSkips = 0, maxSkips = 0; // AMP-skipped optimizer updates, under that assumption
    std::string explanation;   // how the figures were derived, one sentence
    std::vector<Evidence> evidence;
};

/// Accounts for `state`'s scaler over its global step. Without a scaler: present = false.
ScalerAccount accountScaler(const TrainingState& state);

/// What the scaler state proves wrong by itself, whatever init_scale was: a scale that is not a
/// positive finite number, a negative tracker. Empty when nothing.
std::string scalerDefect(const ScalerPart& scaler);

/// Fewest growths needed to go from scale `from` to scale `to` (negative: backoffs), when both
/// are powers of the growth factor apart; nullopt otherwise.
std::optional<int64_t> growthsBetween(double from, double to, double growthFactor, double backoffFactor);

} // namespace ckpt::rules
