// SPDX-License-Identifier: MIT
// Megatron-LM's distributed optimizer in the legacy checkpoint format, internal to core/state:
// distrib_optim.pt beside each rank's model_optim_rng.pt holds, per gradient buffer, the fp32 main
// parameters and Adam's moments of all the rank's parameters end to end
// ({"buckets_coalesced": True, <buffer>: {(param dtype, grad dtype): {param, exp_avg, exp_avg_sq,
// numel_unpadded}}}; NVIDIA/Megatron-LM@d98e8a64 megatron/core/optimizer/distrib_optimizer.py
// get_parameter_state_dp_zero). The file does not say which elements belong to which parameter;
// the buffer layout does, recomputed here from the model file's parameter order
// (_compute_per_buffer_param_layout, optimizer/param_layout.py) and checked against numel_unpadded.
#pragma once

#include "ckpt/state/training_state.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckpt::detail {

/// One parameter of a rank as its model file lists it: the buffer layout follows this order.
struct BufferParam {
    std::string name;   // as the rank's file names it (the merge renames it)
    std::string dtype;
    std::vector<int64_t> shape;
    int64_t numel = 0;
    int chunk = 0;      // virtual pipeline stage
};

struct BufferLayoutOptions {
    std::optional<int64_t> bucketSize; // elements per bucket; none: one bucket (no --overlap-grad-reduce)
    int64_t dataParallel = 1;          // pads each bucket's end to lcm(DP, 128)
    bool padForNcclBusBandwidth = false;
    /// Parameters shared between the first and last stage (tied embeddings with PP > 1) get a
    /// bucket of their own.
    std::vector<std::string> sharedEmbedding;
};

/// Where each parameter of one buffer lies in the saved flat tensors (buckets' unpadded parts
/// concatenated, as get_parameter_state_dp_zero writes them), and the total it predicts.
struct BufferLayout {
    struct Range {
        std::size_t param = 0; // index into the buffer's parameters
        int64_t start = 0;     // in the saved flat tensor
    };
    std::vector<Range> ranges;
    int64_t numelUnpadded = 0;
};

/// The layout of one buffer holding `params` (named_parameters order; laid out in reverse).
BufferLayout bufferLayout(const std::vector<BufferParam>& params, const BufferLayoutOptions& options);

/// The parameter states distrib_optim.pt at `path` holds for the rank whose parameters are `params`
/// (in its model file's order, dense parameters only): its moments and fp32 master, the
/// parameter's element range in the flat tensors viewed in its shard's shape. A buffer whose layout
/// cannot be recomputed (a different total than numel_unpadded) is reported in `warnings` and left
/// out. Throws OpenError when the file cannot be read.
std::vector<ParamState> readDistributedOptimizer(const std::string& path, const std::vector<BufferParam>& params,
                                                 const BufferLayoutOptions& options, std::vector<std::string>& warnings);

} // namespace ckpt::detail
