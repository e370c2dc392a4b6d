// SPDX-License-Identifier: MIT
#include "zero_optimizer.h"

#include "ckpt/state/state_values.h"

#include <algorithm>
#include <map>
#include <set>

namespace ckpt {
namespace {

const char* const kOsd = "optimizer_state_dict";

NodeId zeroState(const CheckpointFile& file)
{
    const ValueGraph& g = file.graph();
    const NodeId osd = g.get(file.root(), kOsd);
    return isDict(g, osd) && g.get(osd, "base_optimizer_state") != kNoNode ? osd : kNoNode;
}

std::optional<int64_t> intOf(const CheckpointFile& file, NodeId id)
{
    if (auto v = scalarOf(file, id))
        return static_cast<int64_t>(*v);
    return std::nullopt;
}

// fragment_address(numel, start): a dataclass (BUILD state) in DeepSpeed >= 0.10, a namedtuple-like
// call with positional arguments before.
std::optional<std::pair<int64_t, int64_t>> fragmentAddress(const CheckpointFile& file, NodeId id)
{
    const ValueGraph& g = file.graph();
    std::optional<int64_t> numel, start;
    for (const auto& [k, v] : fieldsOf(g, id)) {
        if (k == "numel")
            numel = intOf(file, v);
        else if (k == "start")
            start = intOf(file, v);
    }
    if ((!numel || !start) && g.valid(id) && g[id].kind == Kind::Object && g.valid(g[id].a) && g[g[id].a].items.size() == 2) {
        numel = intOf(file, g[g[id].a].items[0]);
        start = intOf(file, g[g[id].a].items[1]);
    }
    if (!numel || !start)
        return std::nullopt;
    return std::pair{*numel, *start};
}

struct Fragment {
    std::string name;
    int64_t start = 0, numel = 0;
};

// One group's partition on one rank: the moments over it and where each parameter lies in it.
struct Partition {
    int rank = -1, group = 0;
    const ZeroFile* source = nullptr;
    std::optional<double> step;
    std::vector<MomentInfo> moments;
    int64_t length = 0; // elements of the (padded) partition
    std::vector<Fragment> fragments;
    std::optional<Provenance> master; // the flat fp32 master weights of this partition
};

std::vector<Partition> partitionsOf(const ZeroFile& zf)
{
    const CheckpointFile& file = *zf.file;
    const ValueGraph& g = file.graph();
    const NodeId osd = zeroState(file);
    std::vector<Partition> out;
    const NodeId base = g.get(osd, "base_optimizer_state");
    // Non-elastic: the inner optimizer's state_dict, state keyed by group index. Elastic: a list
    // with one lean state dict per group.
    std::vector<std::pair<KeyPath, NodeId>> perGroup;
    if (isDict(g, base)) {
        for (const auto& [k, v] : dictItems(g, g.get(base, "state")))
            perGroup.push_back({{std::string(kOsd), std::string("base_optimizer_state"), std::string("state"), k}, v});
    } else if (g.valid(base) && g[base].kind == Kind::List) {
        for (std::size_t i = 0; i < g[base].items.size(); ++i)
            perGroup.push_back({{std::string(kOsd), std::string("base_optimizer_state"), static_cast<int64_t>(i)}, g[base].items[i]});
    }
    const NodeId mappings = g.get(osd, "param_slice_mappings");
    // The rank's fp32 master weights per group, padding removed (DeepSpeed@38327e07
    // deepspeed/runtime/zero/stage_1_and_2.py state_dict: single_partition_of_fp32_groups). step()
    // copies them into the fp16/bf16 partitions after every update, so the module's weights are
    // their rounding at any save.
    const NodeId masters = g.get(osd, "single_partition_of_fp32_groups");
    for (std::size_t gi = 0; gi < perGroup.size(); ++gi) {
        Partition p;
        p.rank = zf.info.rank;
        p.group = static_cast<int>(gi);
        p.source = &zf;
        for (const auto& [name, value] : dictItems(g, perGroup[gi].second)) {
            KeyPath key = perGroup[gi].first;
            key.push_back(name);
            if (name == "step") {
                p.step = scalarOf(file, value);
            } else if (g[value].kind == Kind::Tensor) {
                const TensorInfo& t = file.tensors()[g[value].ref];
                p.moments.push_back({name, t.dtypeName, t.shape, {zf.info.path, key}});
                p.length = std::max(p.length, t.numel());
            }
        }
        if (!p.step) { // elastic checkpoints keep the step beside the groups
            if (const NodeId s = g.get(osd, "base_optimizer_state_step"); s != kNoNode)
                p.step = scalarOf(file, s);
        }
        if (g.valid(masters) && g[masters].kind == Kind::List && gi < g[masters].items.size()
            && g[g[masters].items[gi]].kind == Kind::Tensor)
            p.master = Provenance{zf.info.path, {std::string(kOsd), std::string("single_partition_of_fp32_groups"), static_cast<int64_t>(gi)}};
        if (g.valid(mappings) && g[mappings].kind == Kind::List && gi < g[mappings].items.size()) {
            for (const auto& [name, addr] : dictItems(g, g[mappings].items[gi])) {
                if (auto a = fragmentAddress(file, addr))
                    p.fragments.push_back({name, a->second, a->first});
            }
        }
        out.push_back(std::move(p));
    }
    return out;
}

// Without param_slice_mappings: the group's parameters laid end to end, split into equal
// partitions by rank (ZeRO-1/2 pad the group so that it divides evenly).
void fragmentsFromShapes(std::vector<Partition>& parts, const std::vector<std::vector<std::pair<std::string, int64_t>>>& shapes)
{
    // Every rank's partition of a group has the same length, except the last one in elastic
    // checkpoints, which drop its padding: the longest is the stride.
    std::map<int, int64_t> stride;
    for (const auto& p : parts)
        stride[p.group] = std::max(stride[p.group], p.length);
    for (auto& p : parts) {
        if (!p.fragments.empty() || p.group >= static_cast<int>(shapes.size()) || p.rank < 0 || p.length == 0)
            continue;
        const int64_t lo = p.rank * stride[p.group], hi = lo + p.length;
        int64_t at = 0;
        for (const auto& [name, numel] : shapes[static_cast<std::size_t>(p.group)]) {
            const int64_t b = at, e = at + numel;
            at = e;
            if (b < hi && e > lo)
                p.fragments.push_back({name, std::max(b, lo) - lo, std::min(e, hi) - std::max(b, lo)});
        }
    }
}

std::vector<ParamGroup> groupsOf(const ZeroFile& zf)
{
    const CheckpointFile& file = *zf.file;
    const ValueGraph& g = file.graph();
    const NodeId groups = g.get(g.get(zeroState(file), "base_optimizer_state"), "param_groups");
    std::vector<ParamGroup> out;
    if (!g.valid(groups) || g[groups].kind != Kind::List)
        return out;
    for (std::size_t gi = 0; gi < g[groups].items.size(); ++gi) {
        ParamGroup group;
        for (const auto& [k, v] : dictItems(g, g[groups].items[gi])) {
            KeyPath key{std::string(kOsd), std::string("base_optimizer_state"), std::string("param_groups"), static_cast<int64_t>(gi), k};
            if (k == "params")
                continue; // the flat partition's index, not the model's parameters
            if (const std::string text = simpleText(file, v); !text.empty())
                group.hyperparameters.push_back({k, text, {zf.info.path, key}});
        }
        out.push_back(std::move(group));
    }
    return out;
}

std::string inferType(const std::vector<Partition>& parts)
{
    std::set<std::string> keys;
    for (const auto& p : parts) {
        for (const auto& m : p.moments)
            keys.insert(m.name);
    }
    if (keys.contains("exp_avg") && keys.contains("exp_avg_sq"))
        return "Adam/AdamW";
    if (keys.contains("momentum_buffer"))
        return "SGD";
    return keys.empty() ? "unknown" : *keys.begin();
}

} // namespace

bool isZeroOptimizerFile(const CheckpointFile& file) { return zeroState(file) != kNoNode; }

std::vector<std::vector<std::pair<std::string, int64_t>>> readZeroParamShapes(const CheckpointFile& modelStates)
{
    const ValueGraph& g = modelStates.graph();
    const NodeId shapes = g.get(modelStates.root(), "param_shapes");
    std::vector<std::vector<std::pair<std::string, int64_t>>> out;
    if (!g.valid(shapes) || g[shapes].kind != Kind::List)
        return out;
    for (NodeId group : g[shapes].items) {
        auto& names = out.emplace_back();
        for (const auto& [name, size] : dictItems(g, group)) {
            int64_t numel = 1;
            for (NodeId d : g[size].items)
                numel *= g[d].kind == Kind::Int ? g[d].i : 0;
            names.emplace_back(name, numel);
        }
    }
    return out;
}

std::optional<OptimizerPart> readZeroOptimizer(const std::vector<ZeroFile>& files,
                                               const std::vector<std::vector<std::pair<std::string, int64_t>>>& paramShapes,
                                               std::vector<std::string>& warnings)
{
    std::vector<Partition> parts;
    const ZeroFile* first = nullptr;
    for (const auto& zf : files) {
        if (!isZeroOptimizerFile(*zf.file))
            continue;
        if (!first || (zf.info.rank >= 0 && zf.info.rank < first->info.rank))
            first = &zf;
        auto more = partitionsOf(zf);
        parts.insert(parts.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
    if (!first)
        return std::nullopt;
    const bool fromMappings = std::any_of(parts.begin(), parts.end(), [](const Partition& p) { return !p.fragments.empty(); });
    fragmentsFromShapes(parts, paramShapes);
    std::stable_sort(parts.begin(), parts.end(), [](const Partition& a, const Partition& b) {
        return std::pair(a.group, a.rank) < std::pair(b.group, b.rank);
    });

    OptimizerPart opt;
    opt.from = {first->info.path, {std::string(kOsd)}};
    opt.type = inferType(parts);
    opt.groups = groupsOf(*first);
    std::set<int> ranks;
    std::map<std::string, int64_t> covered; // parameter -> elements found over all ranks
    for (const auto& p : parts) {
        ranks.insert(p.rank);
        if (p.fragments.empty()) { // nothing says what lies where: keep the partition whole
            ParamState ps;
            ps.index = "rank " + std::to_string(p.rank) + " group " + std::to_string(p.group);
            ps.group = p.group;
            ps.rank = p.rank;
            ps.step = p.step;
            ps.moments = p.moments;
            opt.paramState.push_back(std::move(ps));
            continue;
        }
        for (const auto& f : p.fragments) {
            ParamState ps;
            ps.index = "rank " + std::to_string(p.rank) + " group " + std::to_string(p.group) + " [" + std::to_string(f.start) + ":"
                     + std::to_string(f.start + f.numel) + "]";
            ps.name = f.name;
            ps.group = p.group;
            ps.rank = p.rank;
            ps.step = p.step;
            ps.fragmentStart = f.start;
            ps.fragmentNumel = f.numel;
            for (const auto& m : p.moments) {
                Provenance from = m.from;
                from.elements = ElementRange{f.start, f.numel};
                ps.moments.push_back({m.name, m.dtype, {f.numel}, std::move(from)});
            }
            if (p.master) {
                ps.master = p.master;
                ps.master->elements = ElementRange{f.start, f.numel};
            }
            if (f.start < 0 || f.numel < 0 || f.start + f.numel > p.length)
                warnings.push_back(p.source->info.path + ": the fragment of " + f.name + " [" + std::to_string(f.start) + ":"
                                   + std::to_string(f.start + f.numel) + "] lies outside the " + std::to_string(p.length)
                                   + "-element partition");
            covered[f.name] += f.numel;
            opt.paramState.push_back(std::move(ps));
        }
    }
    const std::string rankText = std::to_string(ranks.size()) + " rank" + (ranks.size() == 1 ? "" : "s");
    if (std::any_of(parts.begin(), parts.end(), [](const Partition& p) { return p.fragments.empty(); }))
        opt.nameMapping = "none (flat ZeRO partitions on " + rankText + "; no param_slice_mappings or param_shapes to place parameters)";
    else
        opt.nameMapping = std::string(fromMappings ? "by name (DeepSpeed param_slice_mappings" : "by position (param_shapes and partition sizes")
                        + ", fragments on " + rankText + ")";
    // Every parameter must be covered exactly once over all ranks.
    for (std::size_t gi = 0; gi < paramShapes.size(); ++gi) {
        for (const auto& [name, numel] : paramShapes[gi]) {
            const auto it = covered.find(name);
            const int64_t have = it == covered.end() ? 0 : it->second;
            if (have != numel && !covered.empty())
                warnings.push_back("ZeRO partitions hold " + std::to_string(have) + " of the " + std::to_string(numel) + " elements of "
                                   + name + " (a rank's optimizer file is missing, or the files come from different saves)");
        }
    }
    return opt;
}

std::optional<ScalerPart> readDeepSpeedLossScaler(const CheckpointFile& file, const std::string& path)
{
    const ValueGraph& g = file.graph();
    const NodeId scaler = g.get(zeroState(file), "loss_scaler");
    if (!g.valid(scaler) || g[scaler].kind != Kind::Object)
        return std::nullopt;
    std::map<std::string, NodeId> f;
    for (const auto& [k, v] : fieldsOf(g, scaler))
        f[k] = v;
    auto num = [&](const char* k) { return f.contains(k) ? scalarOf(file, f[k]) : std::nullopt; };
    ScalerPart s;
    s.from = {path, {std::string(kOsd), std::string("loss_scaler")}};
    s.scale = num("cur_scale");
    if (!s.scale)
        return std::nullopt;
    const bool dynamic = num("dynamic").value_or(0) != 0;
    s.enabled = dynamic || *s.scale != 1.0; // a static LossScaler(1.0) is fp32 training: no scaling
    if (dynamic) {
        s.growthFactor = num("scale_factor");
        if (s.growthFactor && *s.growthFactor != 0)
            s.backoffFactor = 1.0 / *s.growthFactor;
        if (auto w = num("scale_window"))
            s.growthInterval = static_cast<int64_t>(*w);
        // GradScaler's growth tracker counts the clean steps since the last growth or overflow and
        // restarts at each growth. DeepSpeed keeps no such counter: it grows whenever
        // (cur_iter - last_overflow_iter) % scale_window == 0 and never moves last_overflow_iter on
        // growth (DeepSpeed@38327e07 deepspeed/runtime/fp16/loss_scaler.py DynamicLossScaler.update_scale,
        // cur_iter += 1 after each update). The clean steps since the last overflow are
        // cur_iter - last_overflow_iter - 1, and the tracker's equivalent is their remainder by the
        // window: a healthy run far past scale_window clean steps is not a tracker past its interval.
        if (auto it = num("cur_iter"), last = num("last_overflow_iter"); it && last) {
            int64_t sinceOverflow = static_cast<int64_t>(*it - *last - 1);
            if (s.growthInterval && *s.growthInterval > 0 && sinceOverflow >= 0)
                sinceOverflow %= *s.growthInterval;
            s.growthTracker = sinceOverflow;
        }
    }
    return s;
}

} // namespace ckpt
