// SPDX-License-Identifier: MIT
// Step 1 of the validation (guide §9.1): the environment the checkpoint, the probe's run and this
// validator come from. Mismatches become notes, never a refusal: the comparison says what they cost.
#pragma once

#include "ckpt/state/training_state.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ckpt::validate {

/// [{"check", "checkpoint", "probe", "match"}]: torch versions, the validator's LibTorch, world size,
/// the checkpoint the probe names, the config hash. Adds a note per mismatch.
nlohmann::json environmentChecks(const TrainingState& state, const nlohmann::json& probe, const std::string& checkpointPath,
                                 std::vector<std::string>& notes);

} // namespace ckpt::validate
