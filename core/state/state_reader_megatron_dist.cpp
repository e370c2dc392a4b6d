// SPDX-License-Identifier: MIT
// Megatron-core's distributed checkpoint (ckpt_format torch_dist; docs/layouts.md §6, read at
// NVIDIA/Megatron-LM@d98e8a64 megatron/core/dist_checkpointing/): a torch.distributed.checkpoint
// folder whose keys are Megatron's own ShardedTensor keys, flat ("decoder.layers.mlp.linear_fc1.weight",
// every layer of one name stacked on a leading axis), pickled objects wrapped in one-element lists
// (rng_state/shard_<pp>.<tp>_<PP>.<TP>), and the state that is not sharded in common.pt or, since
// core 0.19, the item common_state/shard_0_1. Megatron-LM's iter_N/, NeMo 1.x's Megatron-core
// checkpoint folders and NeMo 2.0's weights/ are all this format; NeMo's common state is
// Lightning's checkpoint dict without the weights.
#include "state_reader.h"

#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/state/state_values.h"
#include "state_structure.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

namespace ckpt::detail {
namespace {

// A sharded object's payload: torch.save([data]) (strategies/torch.py: the list of one rank's shards).
void unwrapShardedObject(CheckpointFile& item)
{
    const ValueGraph& g = item.graph();
    const NodeId root = item.root();
    if (g.valid(root) && g[root].kind == Kind::List && g[root].items.size() == 1)
        item.setRoot(g[root].items.front());
}

// A stacked layer key holds every layer on its first axis: the tensor of one layer has one
// dimension less.
bool isStackedLayerKey(const std::string& key)
{
    static const std::regex stacked(R"((^|\.)layers\.[^0-9])");
    return std::regex_search(key, stacked);
}

// The distributed optimizer's object {param_groups: [...]} (DistributedOptimizer.state_dict: the
// groups without their parameters, `step` in each).
std::vector<ParamGroup> megatronParamGroups(const CheckpointFile& item, NodeId optimizer, const Provenance& from)
{
    const ValueGraph& g = item.graph();
    std::vector<ParamGroup> out;
    const NodeId groups = g.get(optimizer, "param_groups");
    for (NodeId group : g.valid(groups) && g[groups].kind == Kind::List ? g[groups].items : std::vector<NodeId>{}) {
        ParamGroup pg;
        for (const auto& [k, v] : dictItems(g, group)) {
            const std::string text = simpleText(item, v);
            if (k != "params" && !text.empty())
                pg.hyperparameters.push_back({k, text, from});
        }
        out.push_back(std::move(pg));
    }
    return out;
}

} // namespace

void StateReader::readMegatronDist()
{
    const std::string& dir = m_state.layout.distributedDir;
    DcpCheckpoint dcp;
    try {
        dcp = readDcpCheckpoint(dir);
    } catch (const std::exception& e) {
        m_state.warnings.push_back(e.what());
        return;
    }
    m_state.warnings.insert(m_state.warnings.end(), dcp.warnings.begin(), dcp.warnings.end());
    const std::string metadata = dir + "/" + (dcp.metadataFiles.empty() ? std::string(".metadata") : dcp.metadataFiles.front());
    if (!dcp.version.empty())
        field(m_state.environment, "dcp_version", dcp.version, {metadata, {std::string("version")}});

    // The common state: common.pt (core <= 0.18, NeMo) or the common_state item (core >= 0.19).
    const std::string commonPt = dir + "/common.pt";
    std::unique_ptr<CheckpointFile> common;
    try {
        common = CheckpointFile::open(commonPt);
    } catch (const OpenError&) {
        // absent: the item below (opened apart from the push: GCC 12 destroys a braced aggregate's
        // members twice when an initializer throws)
    }
    const bool commonPtRead = common != nullptr;
    if (common)
        m_files.push_back({{commonPt, "state", -1}, std::move(common)});

    std::vector<ParamGroup> groups; // the distributed optimizer's, from its object
    std::unique_ptr<CheckpointFile> scalerItem;
    Provenance scalerFrom;
    ModelPart model;
    model.from = {metadata, {}};
    OptimizerPart opt;
    opt.from = {metadata, {}};
    std::map<std::string, std::size_t> stateOf; // model key -> paramState index
    std::set<std::string> stateKeys;
    static const std::regex rngShard(R"(^rng_state/shard_(\d+)\.(\d+)_(\d+)\.(\d+)$)");
    for (const DcpEntry& e : dcp.entries) {
        if (e.isBytes) {
            std::smatch m;
            const bool common = e.fqn.starts_with("common_state/") && !commonPtRead;
            const bool rng = std::regex_match(e.fqn, m, rngShard);
            // Every tensor x pipeline rank's param groups and scaler are the same: rank 0's stand for them.
            const bool optimizerObject = e.fqn == "optimizer.distributed.dp_group_idx_0.optimizer/shard_0_1";
            const bool scalerObject = e.fqn == "optimizer.distributed.dp_group_idx_0.grad_scaler/shard_0_1";
            if ((!common && !rng && !optimizerObject && !scalerObject) || e.chunks.size() != 1)
                continue; // _extra_state objects, the rerun state machine's per-rank state
            try {
                auto item = dcp.openChunk(e.chunks.front());
                unwrapShardedObject(*item);
                if (scalerObject) { // read once args (its growth interval) are
                    scalerItem = std::move(item);
                    scalerFrom = {metadata, e.path};
                    continue;
                }
                if (optimizerObject) {
                    groups = megatronParamGroups(*item, item->root(), {metadata, e.path});
                    continue;
                }
                // rng_state/shard_<pp>.<tp>_<PP>.<TP>: rank pp * TP + tp (parallel_state's tp-major order).
                const int rank = rng ? std::stoi(m[1].str()) * std::stoi(m[4].str()) + std::stoi(m[2].str()) : -1;
                m_files.push_back({{item->path(), rng ? "rng" : common ? "state" : "optimizer", rank}, std::move(item)});
            } catch (const std::exception& ex) {
                m_state.warnings.push_back(ex.what());
            }
            continue;
        }
        if (e.fqn.find("_extra_state") != std::string::npos)
            continue;
        std::vector<int64_t> shape = e.originalShape.empty() ? e.size : e.originalShape;
        int64_t numel = 1;
        for (const int64_t d : shape)
            numel *= d;
        // optimizer.state.<moment>.<model key> (fully_reshardable, fully_sharded_model_space, the
        // non-distributed optimizer: dist_checkpointing/optimizer.py make_sharded_optimizer_tensor).
        static const std::string statePrefix = "optimizer.state.";
        if (e.fqn.starts_with(statePrefix)) {
            const std::string rest = e.fqn.substr(statePrefix.size());
            const auto dot = rest.find('.');
            if (dot == std::string::npos)
                continue;
            const std::string moment = rest.substr(0, dot), param = rest.substr(dot + 1);
            auto [it, fresh] = stateOf.try_emplace(param, opt.paramState.size());
            if (fresh)
                opt.paramState.push_back({param, param, std::nullopt, {}, -1});
            ParamState& ps = opt.paramState[it->second];
            if (moment == "fp32_param" || moment == "param") {
                ps.master = Provenance{metadata, e.path};
            } else {
                stateKeys.insert(moment);
                ps.moments.push_back({moment, e.dtype.starts_with("torch.") ? e.dtype.substr(6) : e.dtype, shape, {metadata, e.path}});
            }
            continue;
        }
        // optimizer.distributed.dp_group_idx_<g>.gbuf_idx_<i>.dtype_(...).bucket_idx_<b>.<moment>
        // (dp_reshardable, the default with the distributed optimizer): each tensor x pipeline rank's
        // buffer, flat. Which elements are which parameter is the rank's buffer layout, which the files
        // do not record (the parameters' order on the rank): kept as buckets, not named.
        if (e.fqn.starts_with("optimizer.distributed.")) {
            const auto dot = e.fqn.rfind('.');
            const std::string bucket = e.fqn.substr(0, dot), moment = e.fqn.substr(dot + 1);
            auto [it, fresh] = stateOf.try_emplace(bucket, opt.paramState.size());
            if (fresh)
                opt.paramState.push_back({bucket.substr(std::string("optimizer.distributed.").size()), "", std::nullopt, {}, -1});
            ParamState& ps = opt.paramState[it->second];
            if (moment == "param")
                ps.master = Provenance{metadata, e.path};
            else if (moment != "numel_unpadded") {
                stateKeys.insert(moment);
                ps.moments.push_back({moment, "float32", shape, {metadata, e.path}});
            }
            continue;
        }
        if (e.fqn.starts_with("optimizer."))
            continue;
        model.parameters.push_back({e.fqn, e.dtype.starts_with("torch.") ? e.dtype.substr(6) : e.dtype, shape, numel, {metadata, e.path}});
    }
    if (!model.parameters.empty())
        m_state.model = std::move(model);

    // The common state and the objects: counters, args, scheduler, scaler, param groups, RNG, as from
    // any checkpoint file (NeMo's common state is Lightning's checkpoint dict).
    for (auto& f : m_files) {
        readOptimizer(f);
        readScheduler(f);
        readScaler(f);
        readRng(f);
        readCounters(f);
        readMegatronExtras(f);
    }
    if (scalerItem)
        readMegatronGradScaler(*scalerItem, scalerItem->root(), scalerFrom);
    if (opt.paramState.empty())
        return;
    // The groups: Megatron's two standard groups, weight-decayed matrices then biases and 1-D
    // parameters (optimizer/__init__.py _get_param_groups), as the common state or the optimizer
    // object records them; the step is theirs (DistributedOptimizer.state_dict writes it in each).
    // Without the distributed optimizer's object the groups are in the common state: NeMo 2.0's
    // optimizer[0].optimizer, NeMo 1.x's optimizer_states[0].optimizer, Megatron-LM's optimizer.optimizer
    // (param groups without their parameters, which are the sharded state's keys).
    for (const auto& f : m_files) {
        const ValueGraph& g = f.file->graph();
        auto first = [&](NodeId n) { return g.valid(n) && g[n].kind == Kind::List && !g[n].items.empty() ? g[n].items.front() : n; };
        for (const char* top : {"optimizer", "optimizer_states"}) {
            const NodeId outer = first(g.get(f.file->root(), top));
            for (const NodeId candidate : {g.get(outer, "optimizer"), outer}) {
                if (groups.empty() && g.get(candidate, "param_groups") != kNoNode)
                    groups = megatronParamGroups(*f.file, candidate, {f.info.path, {std::string(top)}});
            }
        }
    }
    opt.groups = std::move(groups);
    if (m_state.optimizer) {
        if (opt.groups.empty())
            opt.groups = m_state.optimizer->groups;
        opt.type = m_state.optimizer->type;
    }
    std::optional<double> step;
    for (auto& g : opt.groups) {
        g.params.clear();
        for (const auto& hp : g.hyperparameters) {
            if (hp.name == "step" && !step) {
                try {
                    step = std::stod(hp.value);
                } catch (const std::exception&) {
                }
            }
        }
    }
    bool buckets = false;
    for (auto& ps : opt.paramState) {
        ps.step = step;
        if (ps.name.empty()) {
            buckets = true;
            continue;
        }
        const ParameterEntry* p = param(ps.name);
        if (p && opt.groups.size() == 2) {
            const std::size_t dims = p->shape.size() - (isStackedLayerKey(p->name) ? 1 : 0);
            ps.group = p->name.ends_with(".bias") || dims <= 1 ? 1 : 0;
            opt.groups[static_cast<std::size_t>(ps.group)].params.push_back(ps.index);
        }
    }
    if (opt.type.empty() || opt.type == "unknown")
        opt.type = inferOptimizerType(stateKeys, {});
    opt.namesNotRecorded = buckets;
    opt.nameMapping = buckets ? "none (Megatron's dp_reshardable buffers keep each tensor x pipeline rank's parameters flat and "
                                "unnamed; which elements are which parameter follows the rank's parameter order, which the "
                                "distributed checkpoint does not record)"
                              : "by name (the distributed checkpoint's optimizer.state keys)";
    m_state.optimizer = std::move(opt);
}

} // namespace ckpt::detail
