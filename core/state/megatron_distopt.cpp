// SPDX-License-Identifier: MIT
#include "megatron_distopt.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/state/state_values.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace ckpt::detail {
namespace {

int64_t roundUp(int64_t value, int64_t divisor) { return (value + divisor - 1) / divisor * divisor; }

struct Buffer {
    int chunk = 0;
    std::string dtype;
    std::vector<std::size_t> params; // indices into the rank's parameters
};

// DistributedOptimizer's buffers: model chunk 0's, then chunk 1's..., each chunk's one buffer per
// parameter dtype in first-seen order (distributed_data_parallel.py group_params_for_buffers; the
// grad dtype follows the param dtype or is fp32 for all, so the param dtype decides).
std::vector<Buffer> buffersOf(const std::vector<BufferParam>& params)
{
    std::vector<Buffer> buffers;
    int maxChunk = 0;
    for (const auto& p : params)
        maxChunk = std::max(maxChunk, p.chunk);
    for (int v = 0; v <= maxChunk; ++v) {
        const std::size_t first = buffers.size();
        for (std::size_t i = 0; i < params.size(); ++i) {
            if (params[i].chunk != v)
                continue;
            auto it = std::find_if(buffers.begin() + static_cast<std::ptrdiff_t>(first), buffers.end(),
                                   [&](const Buffer& b) { return b.dtype == params[i].dtype; });
            if (it == buffers.end())
                it = buffers.insert(buffers.end(), Buffer{v, params[i].dtype, {}});
            it->params.push_back(i);
        }
    }
    return buffers;
}

} // namespace

BufferLayout bufferLayout(const std::vector<BufferParam>& params, const BufferLayoutOptions& options)
{
    // _compute_per_buffer_param_layout: parameters in reverse (backprop) order, each start aligned
    // to 64 elements (pad_param_start); a bucket closes once it reaches bucket_size, or around a shared
    // embedding; its end is padded to lcm(DP, 128) (pad_bucket_end), which the saved tensors leave out.
    const int64_t divisor = std::lcm(std::max<int64_t>(1, options.dataParallel), options.padForNcclBusBandwidth ? int64_t{1} << 16 : 128);
    BufferLayout out;
    int64_t start = 0, bucketStart = 0, savedBefore = 0, end = 0;
    bool open = false;
    auto closeBucket = [&](int64_t bucketEnd) {
        out.numelUnpadded += bucketEnd - bucketStart;
        savedBefore += bucketEnd - bucketStart;
        bucketStart = roundUp(bucketEnd, divisor);
        open = false;
        return bucketStart;
    };
    std::vector<std::pair<std::size_t, int64_t>> inBuffer; // (param, buffer start), to shift once buckets are known
    for (std::size_t k = params.size(); k-- > 0;) {
        const BufferParam& p = params[k];
        const bool shared = std::find(options.sharedEmbedding.begin(), options.sharedEmbedding.end(), p.name) != options.sharedEmbedding.end();
        start = roundUp(start, 64);
        if (shared && open)
            start = closeBucket(start);
        end = start + p.numel;
        out.ranges.push_back({k, savedBefore + (start - bucketStart)});
        open = true;
        if ((options.bucketSize && end - bucketStart >= *options.bucketSize) || shared)
            start = closeBucket(end);
        else
            start = end;
    }
    if (open)
        closeBucket(end);
    return out;
}

std::vector<ParamState> readDistributedOptimizer(const std::string& path, const std::vector<BufferParam>& params,
                                                 const BufferLayoutOptions& options, std::vector<std::string>& warnings)
{
    const auto file = CheckpointFile::open(path);
    const ValueGraph& g = file->graph();
    NodeId root = file->root();
    // ChainedOptimizer (dense and expert optimizers, MoE): a list of the members' states, None where
    // this rank is not the member's data-parallel rank 0 (optimizer.py ChainedOptimizer.save_parameter_state).
    if (g.valid(root) && g[root].kind == Kind::List) {
        if (g[root].items.size() > 1)
            warnings.push_back(path + ": the expert optimizer's state is not mapped to parameters; the dense one is");
        root = g[root].items.empty() ? kNoNode : g[root].items.front();
    }
    std::vector<ParamState> out;
    const std::vector<Buffer> buffers = buffersOf(params);
    for (std::size_t b = 0; b < buffers.size(); ++b) {
        NodeId buffer = kNoNode; // keyed by the buffer's int index
        for (const auto& [key, value] : dictItems(g, root)) {
            if (key == std::to_string(b))
                buffer = value;
        }
        const auto entries = dictItems(g, buffer);
        if (entries.size() != 1) {
            warnings.push_back(path + ": no buffer " + std::to_string(b) + " for the " + buffers[b].dtype + " parameters of model chunk "
                               + std::to_string(buffers[b].chunk));
            continue;
        }
        const Node& bufferDict = g[buffer];
        const KeyPart dtypeKey = keyPartOf(g, bufferDict.items[0]);
        const NodeId state = entries.front().second;
        std::vector<BufferParam> members;
        for (std::size_t i : buffers[b].params)
            members.push_back(params[i]);
        const BufferLayout layout = bufferLayout(members, options);
        const auto stored = scalarOf(*file, g.get(state, "numel_unpadded"));
        if (!stored || static_cast<int64_t>(*stored) != layout.numelUnpadded) {
            warnings.push_back(path + ": buffer " + std::to_string(b) + " holds " + (stored ? numberText(*stored) : std::string("an unknown number of"))
                               + " elements but its parameters lay out to " + std::to_string(layout.numelUnpadded)
                               + " (Megatron's buffer layout); its moments are not mapped to parameters");
            continue;
        }
        // Each parameter is whole in the buffer (its tensor-parallel shard, flattened): its elements
        // viewed in the shard's shape are its moments and fp32 master.
        auto at = [&](const std::string& key, int64_t start, const BufferParam& p) {
            return Provenance{path, {static_cast<int64_t>(b), dtypeKey, key}, ElementRange{start, p.numel, p.shape}};
        };
        std::vector<std::string> momentKeys;
        for (const auto& [key, value] : dictItems(g, state)) {
            if (key != "param" && key != "numel_unpadded" && g[value].kind == Kind::Tensor)
                momentKeys.push_back(key);
        }
        for (const auto& r : layout.ranges) {
            const BufferParam& p = members[r.param];
            ParamState ps;
            ps.index = p.name;
            ps.name = p.name;
            ps.shardShape = p.shape;
            for (const std::string& m : momentKeys)
                ps.moments.push_back({m, "float32", p.shape, at(m, r.start, p)});
            if (g.get(state, "param") != kNoNode)
                ps.master = at("param", r.start, p);
            out.push_back(std::move(ps));
        }
    }
    // Back in the model's order.
    std::map<std::string, std::size_t> order;
    for (std::size_t i = 0; i < params.size(); ++i)
        order.emplace(params[i].name, i);
    std::stable_sort(out.begin(), out.end(), [&](const ParamState& a, const ParamState& b) { return order[a.name] < order[b.name]; });
    return out;
}

} // namespace ckpt::detail
