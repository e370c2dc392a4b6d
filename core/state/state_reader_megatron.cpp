// SPDX-License-Identifier: MIT
// Megatron-LM legacy checkpoints (docs/layouts.md §1, NVIDIA/Megatron-LM@d98e8a64
// megatron/training/checkpointing.py generate_state_dict), and NeMo 1.x's per-rank copies of one
// .ckpt: one file per tensor x pipeline (x expert) parallel position, each an ordinary checkpoint of
// that rank's slice. Each file is read alone by the generic reader, then the slices are merged into
// one S_t: W by global parameter name (layers renumbered from the stage's and virtual stage's local
// index, experts from the expert rank's local index, tensor-parallel shards joined along their split
// dimension, copies of dense tensors on other expert ranks left as the replicas they are), O as every
// rank's entries with their shard's shape (the distributed optimizer's from distrib_optim.pt), R per
// rank, C from `iteration` and `args`, L from `opt_param_scheduler`.
#include "state_reader.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/state/state_values.h"
#include "megatron_distopt.h"
#include "megatron_layout.h"

#include <algorithm>
#include <map>
#include <set>

namespace ckpt::detail {
namespace {

struct RankState {
    const LayoutFile* info = nullptr;
    int tp = 0, pp = 0, ep = 0;
    TrainingState state;
};

std::string rankName(const RankState& r)
{
    return "tp" + std::to_string(r.tp) + ".pp" + std::to_string(r.pp) + (r.ep > 0 ? ".ep" + std::to_string(r.ep) : "");
}

// The distributed optimizer's file of a rank: distrib_optim.pt in the same folder.
const LayoutFile* distributedOptimizerFile(const CheckpointLayout& layout, const LayoutFile& state)
{
    for (const auto& f : layout.files) {
        if (f.role == "optimizer" && f.path.ends_with("distrib_optim.pt") && f.tp == state.tp && f.pp == state.pp && f.ep == state.ep)
            return &f;
    }
    return nullptr;
}

bool noDecay(const ParameterEntry& p) { return p.name.ends_with(".bias") || p.shape.size() == 1; }

std::optional<int64_t> envInt(const std::vector<StateField>& env, const std::string& name)
{
    for (const auto& f : env) {
        if (f.name == name) {
            try {
                return std::stoll(f.value);
            } catch (const std::exception&) {
                return std::nullopt;
            }
        }
    }
    return std::nullopt;
}

bool envFlag(const std::vector<StateField>& env, const std::string& name)
{
    for (const auto& f : env) {
        if (f.name == name)
            return f.value == "True";
    }
    return false;
}

// O: every rank's entries, named globally, with the shape of the shard they update. Dense entries
// of expert ranks above 0 are the replicas of expert rank 0's. With the distributed optimizer the
// rank's moments are in distrib_optim.pt, mapped through the buffer layout.
template <typename GlobalName>
void mergeOptimizers(TrainingState& state, const std::vector<RankState>& ranks, const GlobalName& globalOf, const MegatronShape& shape)
{
    const auto dp = envInt(state.environment, "args.data_parallel_size");
    BufferLayoutOptions options;
    options.dataParallel = dp.value_or(1);
    options.padForNcclBusBandwidth = envFlag(state.environment, "args.ddp_pad_buckets_for_high_nccl_busbw");
    for (const auto& r : ranks) {
        std::vector<ParamState> states;
        std::string mapping;
        if (r.state.optimizer) {
            states = r.state.optimizer->paramState;
            mapping = r.state.optimizer->nameMapping;
        }
        if (const LayoutFile* distributed = distributedOptimizerFile(state.layout, *r.info); distributed && r.state.model) {
            // The buffer holds the rank's dense parameters in its model file's order. Buckets split it
            // only with --overlap-grad-reduce, and never on later pipeline stages (distributed.py).
            std::vector<BufferParam> params;
            std::vector<std::string> shared;
            for (const auto& p : r.state.model->parameters) {
                if (p.name.ends_with("_extra_state") || p.name.ends_with("expert_bias") || isExpertTensor(p.name))
                    continue;
                params.push_back({p.name, p.dtype, p.shape, p.numel, splitChunkName(p.name).first});
            }
            BufferLayoutOptions rankOptions = options;
            if (envFlag(state.environment, "args.overlap_grad_reduce") && r.pp == 0) {
                const auto size = envInt(state.environment, "args.ddp_bucket_size");
                rankOptions.bucketSize = size ? *size : std::max<int64_t>(40000000, 1000000 * options.dataParallel);
            }
            // Tied embeddings over several stages: the first stage's embedding and the last stage's
            // output layer are the shared parameter (LanguageModule.setup_embeddings_and_output_layer).
            if (shape.pp > 1 && !envFlag(state.environment, "args.untie_embeddings_and_output_weights"))
                rankOptions.sharedEmbedding = {"embedding.word_embeddings.weight", "output_layer.weight"};
            std::vector<std::string> warnings;
            try {
                std::vector<ParamState> fromFile = readDistributedOptimizer(distributed->path, params, rankOptions, warnings);
                // The step is the optimizer's, kept in every group (DistributedOptimizer.state_dict).
                std::optional<double> step;
                for (const auto& g : r.state.optimizer ? r.state.optimizer->groups : std::vector<ParamGroup>{}) {
                    for (const auto& hp : g.hyperparameters) {
                        if (hp.name == "step" && !step) {
                            try {
                                step = std::stod(hp.value);
                            } catch (const std::exception&) {
                            }
                        }
                    }
                }
                for (auto& ps : fromFile) {
                    ps.step = step;
                    const auto param = std::find_if(r.state.model->parameters.begin(), r.state.model->parameters.end(),
                                                    [&](const ParameterEntry& p) { return p.name == ps.name; });
                    ps.group = param != r.state.model->parameters.end() && noDecay(*param) ? 1 : 0;
                }
                states = std::move(fromFile);
                mapping = "the distributed optimizer's buffer layout (distrib_optim.pt)";
            } catch (const std::exception& e) {
                state.warnings.push_back(e.what());
            }
            state.warnings.insert(state.warnings.end(), warnings.begin(), warnings.end());
        }
        if (!r.state.optimizer && states.empty())
            continue;
        if (!state.optimizer) {
            OptimizerPart opt;
            opt.type = r.state.optimizer ? r.state.optimizer->type : "Adam/AdamW";
            if (opt.type.empty() || opt.type == "unknown")
                opt.type = "Adam/AdamW";
            opt.from = r.state.optimizer ? r.state.optimizer->from : Provenance{r.info->path, {}};
            opt.nameMapping = "per tensor x pipeline rank (" + std::to_string(ranks.size()) + " files), each " + mapping;
            for (const auto& gr : r.state.optimizer ? r.state.optimizer->groups : std::vector<ParamGroup>{})
                opt.groups.push_back({gr.hyperparameters, {}});
            state.optimizer = std::move(opt);
        }
        OptimizerPart& opt = *state.optimizer;
        std::map<std::string, const ParameterEntry*> local;
        if (r.state.model) {
            for (const auto& p : r.state.model->parameters)
                local[p.name] = &p;
        }
        const std::string rank = rankName(r);
        for (ParamState ps : states) {
            if (r.ep > 0 && !ps.name.empty() && !isExpertTensor(ps.name))
                continue; // the dense optimizer's copy on another expert rank
            const auto it = local.find(ps.name);
            if (it != local.end())
                ps.shardShape = it->second->shape;
            ps.index = rank + "/" + ps.index;
            if (!ps.name.empty())
                ps.name = globalOf(r, ps.name);
            ps.rank = (r.ep * shape.pp + r.pp) * shape.tp + r.tp;
            if (ps.group >= 0 && static_cast<std::size_t>(ps.group) < opt.groups.size())
                opt.groups[static_cast<std::size_t>(ps.group)].params.push_back(ps.index);
            opt.paramState.push_back(std::move(ps));
        }
    }
}

} // namespace

void StateReader::readMegatron()
{
    std::vector<RankState> ranks;
    for (const auto& info : m_state.layout.files) {
        if (info.role != "state")
            continue;
        RankState r{&info, std::max(info.tp, 0), std::max(info.pp, 0), std::max(info.ep, 0), {}};
        try {
            // The rank's file alone: a NeMo rank file's own layout would stand for every rank again.
            r.state.path = info.path;
            r.state.layout.path = info.path;
            r.state.layout.layout = Layout::Generic;
            r.state.layout.files.push_back({info.path, "state", -1});
            StateReader(r.state).read();
        } catch (const std::exception& e) {
            m_state.warnings.push_back(info.path + ": " + e.what());
            continue;
        }
        for (const auto& w : r.state.warnings)
            m_state.warnings.push_back(w);
        ranks.push_back(std::move(r));
    }
    if (ranks.empty())
        return;
    // Rank (0, 0)'s args, scheduler and scaler stand for the checkpoint (every rank saves the same).
    const TrainingState& first = ranks.front().state;
    m_state.environment = first.environment;
    m_state.data = first.data;
    m_state.scheduler = first.scheduler;
    m_state.scaler = first.scaler;
    int tpFolders = 0, ppFolders = 0, epFolders = 0;
    bool thirdNumber = false;
    for (const auto& r : ranks) {
        tpFolders = std::max(tpFolders, r.tp + 1);
        ppFolders = std::max(ppFolders, r.pp + 1);
        epFolders = std::max(epFolders, r.ep + 1);
        thirdNumber = thirdNumber || r.info->ep >= 0;
    }
    MegatronShape shape = megatronShape(m_state.environment, tpFolders, ppFolders, epFolders);
    // mp_rank_TT_EEE: with one pipeline stage and several expert ranks the second number is the
    // expert rank (get_checkpoint_name appends _{ep:03d} whenever EP > 1).
    if (shape.recorded && shape.pp == 1 && shape.ep > 1 && !thirdNumber) {
        for (auto& r : ranks)
            std::swap(r.pp, r.ep);
        std::swap(ppFolders, epFolders);
    }
    if (shape.recorded && (shape.tp != tpFolders || shape.pp != ppFolders || (shape.ep > 1 && shape.ep != epFolders)))
        m_state.warnings.push_back("the args record tensor x pipeline" + std::string(shape.ep > 1 ? " x expert" : "") + " parallel "
                                   + std::to_string(shape.tp) + " x " + std::to_string(shape.pp) + (shape.ep > 1 ? " x " + std::to_string(shape.ep) : "")
                                   + " but the folder holds rank files for " + std::to_string(tpFolders) + " x " + std::to_string(ppFolders)
                                   + (shape.ep > 1 ? " x " + std::to_string(epFolders) : ""));

    // The global name of a rank's tensor: its virtual stage's and pipeline stage's layer offset,
    // its expert rank's expert offset.
    bool offsetUnknown = false;
    auto globalOf = [&](const RankState& r, const std::string& local) {
        const auto [v, name] = splitChunkName(local);
        const auto offset = layerOffset(shape, r.pp, v);
        offsetUnknown = offsetUnknown || !offset;
        return globalExpertName(globalLayerName(name, offset.value_or(0)), r.ep, shape);
    };

    // W: one entry per global name, its tensor-parallel shards joined. A dense tensor saved by
    // several expert ranks is a replica; the lowest expert rank's copy stands for it.
    struct Merged {
        std::map<int, const ParameterEntry*> byTp;
        int ep = -1;
    };
    std::map<std::string, Merged> merged;
    std::vector<std::string> order;
    for (const auto& r : ranks) {
        if (!r.state.model)
            continue;
        for (const auto& p : r.state.model->parameters) {
            if (p.name.ends_with("_extra_state"))
                continue; // Transformer Engine's FP8 metadata, not a parameter
            const std::string name = globalOf(r, p.name);
            auto [it, fresh] = merged.try_emplace(name);
            if (fresh)
                order.push_back(name);
            if (it->second.ep >= 0 && it->second.ep != r.ep)
                continue;
            it->second.ep = r.ep;
            it->second.byTp[r.tp] = &p;
        }
    }
    if (offsetUnknown)
        m_state.warnings.push_back("the layers' global numbers cannot be computed from the args (a pipeline layout string, or no "
                                   "num_layers): layer names are each stage's own");
    // A rank whose file could not be read leaves its shards out: joined without them, every split
    // parameter would look reshaped. W is then not assembled; the unreadable file is the finding.
    const auto unread = std::find_if(ranks.begin(), ranks.end(), [](const RankState& r) { return !r.state.model; });
    const auto files = std::count_if(m_state.layout.files.begin(), m_state.layout.files.end(),
                                     [](const LayoutFile& f) { return f.role == "state"; });
    if (unread != ranks.end() || static_cast<std::ptrdiff_t>(ranks.size()) != files) {
        m_state.warnings.push_back("the model is not assembled over the tensor x pipeline ranks: "
                                   + (unread != ranks.end() ? unread->info->path : std::string("a rank's file"))
                                   + " holds no readable model state");
        merged.clear();
        order.clear();
    }
    ModelPart model;
    model.from = ranks.front().state.model ? ranks.front().state.model->from : Provenance{ranks.front().info->path, {}};
    for (const auto& name : order) {
        const Merged& m = merged[name];
        const ParameterEntry& firstPiece = *m.byTp.begin()->second;
        ParameterEntry e = firstPiece;
        e.name = name;
        const int dim = splitDimension(name);
        const bool sameShapes = std::all_of(m.byTp.begin(), m.byTp.end(), [&](const auto& kv) { return kv.second->shape == firstPiece.shape; });
        if (!sameShapes)
            m_state.warnings.push_back(name + ": its tensor-parallel shards have different shapes");
        if (dim >= 0 && static_cast<std::size_t>(dim) < e.shape.size() && m.byTp.size() > 1) {
            e.shape[static_cast<std::size_t>(dim)] = 0;
            for (const auto& [tp, p] : m.byTp)
                e.shape[static_cast<std::size_t>(dim)] += p->shape[static_cast<std::size_t>(dim)];
            e.splitDim = dim;
        }
        e.numel = 1;
        for (int64_t d : e.shape)
            e.numel *= d;
        for (const auto& [tp, p] : m.byTp)
            e.pieces.push_back(p->from);
        if (e.pieces.size() == 1)
            e.pieces.clear();
        model.parameters.push_back(std::move(e));
    }
    if (!model.parameters.empty())
        m_state.model = std::move(model);

    mergeOptimizers(m_state, ranks, globalOf, shape);

    // R and C: every rank's generators and counters (a rank whose iteration differs is then seen).
    for (const auto& r : ranks) {
        const int rank = (r.ep * shape.pp + r.pp) * shape.tp + r.tp;
        if (r.state.rng) {
            if (!m_state.rng)
                m_state.rng = RngPart{};
            for (auto g : r.state.rng->generators) {
                g.rank = rank;
                m_state.rng->generators.push_back(std::move(g));
            }
        }
        for (const auto& f : r.state.progress)
            m_state.progress.push_back(f);
    }
}

} // namespace ckpt::detail
