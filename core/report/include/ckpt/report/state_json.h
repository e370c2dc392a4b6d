// SPDX-License-Identifier: MIT
// JSON shapes of `ckpt show` (the training state) and `ckpt run` (a run history).
#pragma once

#include "ckpt/state/run_history.h"
#include "ckpt/state/training_state.h"

#include <nlohmann/json.hpp>

namespace ckpt {

/// {"path", "format", "layout", "files", "model", "optimizer", "scheduler", "scaler", "rng",
///  "data", "progress", "environment", "warnings"}; a part is null when the checkpoint lacks it.
nlohmann::json trainingStateToJson(const TrainingState& state);

/// {"path", "checkpoints": [{"path", "step", "complete", "latest", "best", "layout"}],
///  "series": {"loss": [[step, value]...], ...}, "warnings"}
nlohmann::json runHistoryToJson(const RunHistory& history);

} // namespace ckpt
