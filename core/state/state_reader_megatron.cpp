// SPDX-License-Identifier: MIT
// Megatron-LM legacy checkpoints (docs/layouts.md §1, NVIDIA/Megatron-LM@d98e8a64
// megatron/training/checkpointing.py generate_state_dict): one model_optim_rng.pt per tensor x
// pipeline position, each an ordinary checkpoint of that rank's slice. Each file is read alone by
// the generic reader, then the slices are merged into one S_t: W by global parameter name (layers
// renumbered from the stage's local index, tensor-parallel shards joined along their split
// dimension), O as every rank's entries with their shard's shape, R per rank, C from `iteration`
// and `args`, L from `opt_param_scheduler`.
#include "state_reader.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/state/state_values.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

namespace ckpt::detail {
namespace {

// Which dimension a tensor-parallel layer splits (megatron/core/tensor_parallel/layers.py):
// column-parallel linears and the vocab-parallel embedding split their output rows, row-parallel
// linears their input columns; layernorms, row-parallel biases and position embeddings are
// replicated. Megatron-core names first, the older megatron/model names after.
int splitDimension(const std::string& name)
{
    static const char* const rows[] = {"linear_qkv.weight", "linear_qkv.bias", "linear_fc1.weight", "linear_fc1.bias",
                                       "word_embeddings.weight", "output_layer.weight", "query_key_value.weight",
                                       "query_key_value.bias", "dense_h_to_4h.weight", "dense_h_to_4h.bias"};
    static const char* const columns[] = {"linear_proj.weight", "linear_fc2.weight", "attention.dense.weight", "dense_4h_to_h.weight"};
    for (const char* s : rows) {
        if (name.ends_with(s))
            return 0;
    }
    for (const char* s : columns) {
        if (name.ends_with(s))
            return 1;
    }
    return -1;
}

// Legacy files number layers from 0 on every pipeline stage (the nn.ModuleList index); the global
// index adds the stage's offset, pp_rank x num_layers / pp with uniform stages
// (megatron/core/transformer/transformer_layer.py get_transformer_layer_offset).
std::string globalName(const std::string& name, int64_t offset)
{
    static const std::regex layer(R"(^((?:.*\.)?(?:decoder\.layers|layers)\.)(\d+)(\..*)$)");
    std::smatch m;
    if (offset == 0 || !std::regex_match(name, m, layer))
        return name;
    return m[1].str() + std::to_string(std::stoll(m[2].str()) + offset) + m[3].str();
}

std::optional<int64_t> intField(const std::vector<StateField>& fields, const std::string& name)
{
    for (const auto& f : fields) {
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

struct RankState {
    const LayoutFile* info = nullptr;
    TrainingState state;
};

} // namespace

// args (an argparse.Namespace, BUILD state of its fields), opt_param_scheduler and the grad scaler of
// a Megatron file (`checkpoint_version` beside `args`), read with the file's other parts: a rank's
// file opened alone shows them too, and the merge takes them from rank (0, 0)'s state.
void StateReader::readMegatronExtras(Opened& f)
{
    const CheckpointFile* file = f.file.get();
    const std::string& path = f.info.path;
    const ValueGraph& g = file->graph();
    const NodeId root = file->root();
    if (g.get(root, "checkpoint_version") == kNoNode || g.get(root, "args") == kNoNode)
        return;
    for (const auto& [k, v] : fieldsOf(g, g.get(root, "args"))) {
        const std::string text = simpleText(*file, v);
        if (text.empty() || text.size() > 200 || text == "None")
            continue;
        const Provenance from{path, {std::string("args"), k}};
        // Samples consumed: each iteration adds global_batch_size (training.py train), the data cursor.
        if (k == "consumed_train_samples" || k == "skipped_train_samples" || k == "consumed_valid_samples")
            field(m_state.data, "args." + k, text, from);
        else
            field(m_state.environment, "args." + k, text, from);
    }
    if (const NodeId n = g.get(root, "num_floating_point_operations_so_far"); n != kNoNode)
        field(m_state.progress, "num_floating_point_operations_so_far", simpleText(*file, n), {path, {std::string("num_floating_point_operations_so_far")}});
    if (const NodeId n = g.get(root, "checkpoint_version"); n != kNoNode)
        field(m_state.environment, "checkpoint_version", simpleText(*file, n), {path, {std::string("checkpoint_version")}});
    // Float16OptimizerWithFloat16Params keeps its DynamicGradScaler's state beside the inner
    // optimizer: {scale, growth_tracker, hysteresis_tracker}; the scaler is built with growth
    // factor 2, backoff 0.5 and growth_interval = args.loss_scale_window (megatron/core/optimizer/
    // __init__.py, grad_scaler.py: the tracker restarts at each growth, as GradScaler's).
    if (const NodeId gs = g.get(g.get(root, "optimizer"), "grad_scaler"); isDict(g, gs) && !m_state.scaler) {
        ScalerPart sc;
        sc.from = {path, {std::string("optimizer"), std::string("grad_scaler")}};
        sc.scale = scalarOf(*file, g.get(gs, "scale"));
        if (auto t = scalarOf(*file, g.get(gs, "growth_tracker")))
            sc.growthTracker = static_cast<int64_t>(*t);
        sc.growthFactor = 2.0;
        sc.backoffFactor = 0.5;
        for (const auto& f : m_state.environment) {
            if (f.name == "args.loss_scale_window") {
                try {
                    sc.growthInterval = std::stoll(f.value);
                } catch (const std::exception&) {
                }
            }
        }
        sc.enabled = sc.scale.has_value();
        if (sc.scale)
            m_state.scaler = std::move(sc);
    }
    // OptimizerParamScheduler.state_dict (megatron/core/optimizer_param_scheduler.py): max_lr,
    // lr_warmup_steps, num_steps, lr_decay_style, lr_decay_steps, min_lr, start_wd, end_wd,
    // wd_incr_style, wd_incr_steps. num_steps counts samples: train_step steps it by the global
    // batch size on every successful update.
    const NodeId sched = g.get(root, "opt_param_scheduler");
    if (!isDict(g, sched))
        return;
    SchedulerPart part;
    part.from = {path, {std::string("opt_param_scheduler")}};
    part.schedule.kind = "Megatron OptimizerParamScheduler";
    part.schedule.why = "Megatron's own scheduler: its position num_steps counts samples, checked against the samples consumed";
    for (const auto& [k, v] : dictItems(g, sched)) {
        const std::string text = simpleText(*file, v);
        part.schedule.fields.emplace_back(k, text);
        if (k == "num_steps" || k == "num_iters") {
            try {
                part.schedule.lastEpoch = std::stoll(text);
            } catch (const std::exception&) {
            }
        }
    }
    m_state.scheduler = std::move(part);
}

void StateReader::readMegatron()
{
    std::vector<RankState> ranks;
    for (const auto& info : m_state.layout.files) {
        if (info.role != "state")
            continue;
        RankState r{&info, {}};
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
    int tpSize = 0, ppSize = 0;
    for (const auto& r : ranks) {
        tpSize = std::max(tpSize, r.info->tp + 1);
        ppSize = std::max(ppSize, r.info->pp + 1);
    }
    // Megatron-LM records the sizes in args, NeMo in its model config (config.* facts).
    auto sized = [&](const char* name) {
        const auto v = intField(m_state.environment, std::string("args.") + name);
        return v ? v : intField(m_state.environment, std::string("config.") + name);
    };
    const auto argTp = sized("tensor_model_parallel_size");
    const auto argPp = sized("pipeline_model_parallel_size");
    if ((argTp && *argTp != tpSize) || (argPp && *argPp != ppSize))
        m_state.warnings.push_back("the args record tensor x pipeline parallel " + std::to_string(argTp.value_or(tpSize)) + " x "
                                   + std::to_string(argPp.value_or(ppSize)) + " but the folder holds mp_rank folders for "
                                   + std::to_string(tpSize) + " x " + std::to_string(ppSize));
    const auto numLayers = intField(m_state.environment, "args.num_layers") ? intField(m_state.environment, "args.num_layers")
                                                                            : intField(m_state.environment, "config.num_hidden_layers");
    auto offsetOf = [&](int pp) -> int64_t {
        if (!numLayers || ppSize <= 1 || *numLayers % ppSize != 0)
            return 0;
        return pp * (*numLayers / ppSize);
    };
    if (ppSize > 1 && (!numLayers || *numLayers % ppSize != 0))
        m_state.warnings.push_back("layers are numbered per pipeline stage and args.num_layers does not divide evenly over "
                                   + std::to_string(ppSize) + " stages: layer names are the stages' own");

    // W: one entry per global name, its tensor-parallel shards joined.
    struct Merged {
        std::map<int, const ParameterEntry*> byTp;
    };
    std::map<std::string, Merged> merged;
    std::vector<std::string> order;
    for (const auto& r : ranks) {
        if (!r.state.model)
            continue;
        for (const auto& p : r.state.model->parameters) {
            if (p.name.ends_with("_extra_state"))
                continue; // Transformer Engine's FP8 metadata, not a parameter
            const std::string name = globalName(p.name, offsetOf(r.info->pp));
            auto [it, fresh] = merged.try_emplace(name);
            if (fresh)
                order.push_back(name);
            it->second.byTp[r.info->tp] = &p;
        }
    }
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
        const ParameterEntry& first = *m.byTp.begin()->second;
        ParameterEntry e = first;
        e.name = name;
        const int dim = splitDimension(name);
        const bool sameShapes = std::all_of(m.byTp.begin(), m.byTp.end(), [&](const auto& kv) { return kv.second->shape == first.shape; });
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

    // O: every rank's entries, named globally, with the shape of the shard they update.
    for (const auto& r : ranks) {
        if (!r.state.optimizer)
            continue;
        const std::string rankName = "tp" + std::to_string(r.info->tp) + ".pp" + std::to_string(r.info->pp);
        const OptimizerPart& src = *r.state.optimizer;
        if (!m_state.optimizer) {
            OptimizerPart opt;
            opt.type = src.type;
            opt.from = src.from;
            opt.nameMapping = "per tensor x pipeline rank (" + std::to_string(ranks.size()) + " files), each " + src.nameMapping;
            for (const auto& gr : src.groups)
                opt.groups.push_back({gr.hyperparameters, {}});
            m_state.optimizer = std::move(opt);
        }
        OptimizerPart& opt = *m_state.optimizer;
        for (std::size_t gi = 0; gi < src.groups.size() && gi < opt.groups.size(); ++gi) {
            for (const auto& index : src.groups[gi].params)
                opt.groups[gi].params.push_back(rankName + "/" + index);
        }
        std::map<std::string, const ParameterEntry*> local;
        if (r.state.model) {
            for (const auto& p : r.state.model->parameters)
                local[p.name] = &p;
        }
        for (ParamState ps : src.paramState) {
            const auto it = local.find(ps.name);
            if (it != local.end())
                ps.shardShape = it->second->shape;
            ps.index = rankName + "/" + ps.index;
            if (!ps.name.empty())
                ps.name = globalName(ps.name, offsetOf(r.info->pp));
            ps.rank = r.info->pp * tpSize + r.info->tp;
            opt.paramState.push_back(std::move(ps));
        }
    }

    // R and C: every rank's generators and counters (a rank whose iteration differs is then seen).
    for (const auto& r : ranks) {
        if (r.state.rng) {
            if (!m_state.rng)
                m_state.rng = RngPart{};
            for (auto g : r.state.rng->generators) {
                g.rank = r.info->pp * tpSize + r.info->tp;
                m_state.rng->generators.push_back(std::move(g));
            }
        }
        for (const auto& f : r.state.progress)
            m_state.progress.push_back(f);
    }
}

} // namespace ckpt::detail
