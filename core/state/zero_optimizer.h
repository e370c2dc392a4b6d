// SPDX-License-Identifier: MIT
// DeepSpeed ZeRO-1/2 optimizer partitions (formats.md §9.1): each data-parallel rank's
// *_optim_states.pt holds one flat fp32 partition per parameter group with the inner optimizer's
// moments over it. The partitions are mapped back to parameter names through the files'
// `param_slice_mappings` (name -> fragment_address(numel, start)), or, for files without them,
// through the model states' `param_shapes` and the partition sizes. The DeepSpeed loss scaler
// object becomes the scaler part.
#pragma once

#include "ckpt/state/training_state.h"

#include <optional>
#include <string>
#include <vector>

namespace ckpt {

struct ZeroFile {
    LayoutFile info;             // rank: the data-parallel rank from zero_pp_rank_<r>_
    const CheckpointFile* file = nullptr;
};

/// True when the file holds a ZeRO optimizer state ({"optimizer_state_dict": {..., "base_optimizer_state"...}}).
bool isZeroOptimizerFile(const CheckpointFile& file);

/// All ranks' partitions as per-parameter fragments. `paramShapes`: parameter names and element
/// counts per group in flat order (the model states' param_shapes), used when the optimizer files
/// lack param_slice_mappings. Problems (a parameter not covered exactly, a rank missing) go to
/// `warnings`. nullopt when no file holds a ZeRO state.
std::optional<OptimizerPart> readZeroOptimizer(const std::vector<ZeroFile>& files,
                                               const std::vector<std::vector<std::pair<std::string, int64_t>>>& paramShapes,
                                               std::vector<std::string>& warnings);

/// The model states' param_shapes: per group, (name, numel) in flat order; empty when absent.
std::vector<std::vector<std::pair<std::string, int64_t>>> readZeroParamShapes(const CheckpointFile& modelStates);

/// optimizer_state_dict.loss_scaler (a deepspeed LossScaler / DynamicLossScaler object).
std::optional<ScalerPart> readDeepSpeedLossScaler(const CheckpointFile& file, const std::string& path);

} // namespace ckpt
