// SPDX-License-Identifier: MIT
// Where a Megatron-LM rank's tensors sit in the whole model, internal to core/state: the parallel
// sizes its args record, the global index of a pipeline stage's (and virtual stage's) local layer
// numbers, the global index of an expert-parallel rank's local experts, and the dimension a
// tensor-parallel layer splits. Read at NVIDIA/Megatron-LM@d98e8a64 (docs/layouts.md §1, §6).
#pragma once

#include "ckpt/state/training_state.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckpt::detail {

/// What the args (Megatron-LM) or the model config (NeMo) record about the parallel split.
struct MegatronShape {
    int tp = 1, pp = 1, ep = 1, vp = 1;
    std::optional<int64_t> numLayers, firstStageLayers, lastStageLayers, numExperts;
    bool accountForEmbedding = false, accountForLoss = false;
    bool customLayout = false; // --pipeline-model-parallel-layout: offsets from a layout string, not computed here
    bool recorded = false;     // the sizes came from the files (else from the folder names)
};

/// The shape `environment` records (args.* from Megatron-LM, config.* from NeMo), the folder
/// counts filling what it does not say.
MegatronShape megatronShape(const std::vector<StateField>& environment, int tpFolders, int ppFolders, int epFolders);

/// The global index of local layer 0 of virtual stage `v` on pipeline rank `pp`
/// (megatron/core/transformer/transformer_layer.py get_transformer_layer_offset); nullopt when the
/// files do not say enough to compute it (a pipeline layout string, no num_layers).
std::optional<int64_t> layerOffset(const MegatronShape& shape, int pp, int v);

/// `name` with its "decoder.layers.<i>." (or "layers.<i>.") index moved by `offset`.
std::string globalLayerName(const std::string& name, int64_t offset);

/// `name` with its local expert index made global for expert-parallel rank `ep`: SequentialMLP's
/// "experts.local_experts.<j>." and TEGroupedMLP's "experts.linear_fc1.weight<j>" become
/// ep * (num_experts / EP) + j (megatron/core/transformer/moe/experts.py). Unchanged when it names
/// no expert or the expert count is unknown.
std::string globalExpertName(const std::string& name, int ep, const MegatronShape& shape);

/// A routed expert's tensor (not a shared expert's): its copies differ per expert-parallel rank.
bool isExpertTensor(const std::string& name);

/// The dimension a tensor-parallel layer splits (0 column-parallel and vocabulary rows, 1
/// row-parallel), -1 for replicated tensors (megatron/core/tensor_parallel/layers.py).
int splitDimension(const std::string& name);

/// A virtual stage's tensors as one rank's file names them: "model1.decoder.layers.0.x" -> (1,
/// "decoder.layers.0.x"); (0, name) without the prefix.
std::pair<int, std::string> splitChunkName(const std::string& name);

} // namespace ckpt::detail
