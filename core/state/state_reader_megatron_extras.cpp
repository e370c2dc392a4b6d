// SPDX-License-Identifier: MIT
// What one Megatron-LM rank file holds beside its model, read with the file's other parts (a
// rank's file opened alone shows them too): args, counters, the grad scaler, the sample-counting
// LR scheduler, and the ChainedOptimizer's list of states of expert-parallel runs.
#include "state_reader.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/state/state_values.h"
#include "megatron_layout.h"
#include "state_structure.h"

#include <algorithm>
#include <map>
#include <set>

namespace ckpt::detail {

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
    // With a dense and an expert optimizer (MoE) `optimizer` is the list of their states; the first holds the scaler.
    NodeId optimizer = g.get(root, "optimizer");
    if (g.valid(optimizer) && g[optimizer].kind == Kind::List && !g[optimizer].items.empty())
        optimizer = g[optimizer].items.front();
    if (const NodeId gs = g.get(optimizer, "grad_scaler"); isDict(g, gs))
        readMegatronGradScaler(*file, gs, {path, {std::string("optimizer"), std::string("grad_scaler")}});
    readChainedOptimizer(f);
    readFp32Masters(f, optimizer);
    const NodeId sched = g.get(root, "opt_param_scheduler");
    if (!isDict(g, sched))
        return;
    // The scheduler does not save the LR warmup starts from (args.lr_warmup_init, default 0): it joins
    // the fields the formula is read from (training.py get_optimizer_param_scheduler).
    ValueGraph copy;
    const NodeId dict = copyValue(g, sched, copy);
    for (const auto& [k, v] : fieldsOf(g, g.get(root, "args"))) {
        if (k != "lr_warmup_init" || copy[dict].kind != Kind::Dict)
            continue;
        const NodeId key = copy.addText(Kind::String, "init_lr");
        const NodeId value = copyValue(g, v, copy);
        copy[dict].items.push_back(key);
        copy[dict].items.push_back(value);
    }
    if (auto schedule = readLrSchedule(copy, dict))
        m_state.scheduler = SchedulerPart{std::move(*schedule), {path, {std::string("opt_param_scheduler")}}};
}


// Megatron's DynamicGradScaler state {scale, growth_tracker, hysteresis_tracker}; the scaler is built
// with growth factor 2, backoff 0.5 and growth_interval = args.loss_scale_window (megatron/core/optimizer/
// __init__.py, grad_scaler.py: the tracker restarts at each growth, as GradScaler's).
void StateReader::readMegatronGradScaler(const CheckpointFile& file, NodeId gs, Provenance from)
{
    const ValueGraph& g = file.graph();
    if (m_state.scaler || !isDict(g, gs))
        return;
    ScalerPart sc;
    sc.from = std::move(from);
    sc.scale = scalarOf(file, g.get(gs, "scale"));
    if (auto t = scalarOf(file, g.get(gs, "growth_tracker")))
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

// Float16OptimizerWithFloat16Params keeps the fp32 main copy of every parameter beside the inner
// optimizer, fp32_from_fp16_params[group][i] for the group's i-th parameter (megatron/core/optimizer/
// optimizer.py state_dict): the master the module's fp16/bf16 weights are the rounding of.
void StateReader::readFp32Masters(Opened& f, NodeId optimizer)
{
    const ValueGraph& g = f.file->graph();
    const NodeId masters = g.get(optimizer, "fp32_from_fp16_params");
    if (!m_state.optimizer || !g.valid(masters) || g[masters].kind != Kind::List || m_state.optimizer->from.file != f.info.path)
        return;
    KeyPath base{std::string("optimizer")};
    if (optimizer != g.get(f.file->root(), "optimizer"))
        base.push_back(int64_t{0});
    OptimizerPart& opt = *m_state.optimizer;
    for (std::size_t gi = 0; gi < opt.groups.size() && gi < g[masters].items.size(); ++gi) {
        const NodeId list = g[masters].items[gi];
        const auto& params = opt.groups[gi].params;
        for (std::size_t i = 0; g[list].kind == Kind::List && i < params.size() && i < g[list].items.size(); ++i) {
            if (g[g[list].items[i]].kind != Kind::Tensor)
                continue;
            for (auto& ps : opt.paramState) {
                if (ps.index != params[i])
                    continue;
                KeyPath key = base;
                key.insert(key.end(), {std::string("fp32_from_fp16_params"), static_cast<int64_t>(gi), static_cast<int64_t>(i)});
                ps.master = Provenance{f.info.path, std::move(key)};
            }
        }
    }
}

// Megatron-LM with expert parallelism builds a dense and an expert optimizer and saves a
// ChainedOptimizer's state: a list of the members' dicts, each a Float16OptimizerWithFloat16Params
// state ({optimizer: torch state, fp32_from_fp16_params, grad_scaler}) or a torch state
// (NVIDIA/Megatron-LM@d98e8a64 megatron/core/optimizer/optimizer.py ChainedOptimizer.state_dict;
// __init__.py get_megatron_optimizer). Each member's groups (_get_param_groups) hold its parameters
// in the model's order: weight-decayed ones (wd_mult 1), then biases and 1-D parameters (wd_mult 0);
// the dense member the dense parameters, the expert member the routed experts' (is_expert_parallel).
void StateReader::readChainedOptimizer(Opened& f)
{
    const CheckpointFile& file = *f.file;
    const ValueGraph& g = file.graph();
    const NodeId list = g.get(file.root(), "optimizer");
    if (!g.valid(list) || g[list].kind != Kind::List || g[list].items.size() < 2)
        return;
    OptimizerPart opt;
    opt.from = {f.info.path, {std::string("optimizer")}};
    std::set<std::string> stateKeys, groupKeys;
    bool mapped = true;
    for (std::size_t m = 0; m < g[list].items.size(); ++m) {
        NodeId inner = g[list].items[m];
        KeyPath at{std::string("optimizer"), static_cast<int64_t>(m)};
        if (g.get(inner, "param_groups") == kNoNode) {
            inner = g.get(inner, "optimizer");
            at.push_back(std::string("optimizer"));
        }
        const NodeId groups = g.get(inner, "param_groups");
        if (!g.valid(groups) || g[groups].kind != Kind::List)
            continue;
        const std::string prefix = "m" + std::to_string(m) + "/";
        std::map<std::string, std::size_t> groupOf; // optimizer key -> group index in opt
        for (std::size_t gi = 0; gi < g[groups].items.size(); ++gi) {
            ParamGroup group;
            bool expert = false, noDecay = false;
            for (const auto& [k, v] : dictItems(g, g[groups].items[gi])) {
                KeyPath key = at;
                key.insert(key.end(), {std::string("param_groups"), static_cast<int64_t>(gi), k});
                if (k == "params") {
                    for (NodeId p : g[v].items)
                        group.params.push_back(prefix + simpleText(file, p));
                    continue;
                }
                groupKeys.insert(k);
                const std::string text = simpleText(file, v);
                expert = expert || (k == "is_expert_parallel" && text == "True");
                noDecay = noDecay || (k == "wd_mult" && scalarOf(file, v) == 0.0);
                if (!text.empty())
                    group.hyperparameters.push_back({k, text, {f.info.path, std::move(key)}});
            }
            // The group's parameter names, in the model's order.
            std::vector<std::string> names;
            for (const auto& p : m_state.model ? m_state.model->parameters : std::vector<ParameterEntry>{}) {
                if (p.name.ends_with("_extra_state") || isExpertTensor(p.name) != expert)
                    continue;
                const bool pNoDecay = p.name.ends_with(".bias") || p.shape.size() == 1;
                if (pNoDecay == noDecay)
                    names.push_back(p.name);
            }
            if (names.size() != group.params.size())
                mapped = false;
            for (std::size_t i = 0; i < group.params.size(); ++i)
                groupOf[group.params[i]] = opt.groups.size();
            for (std::size_t i = 0; i < group.params.size() && names.size() == group.params.size(); ++i) {
                ParamState ps;
                ps.index = group.params[i];
                ps.name = names[i];
                ps.group = static_cast<int>(opt.groups.size());
                opt.paramState.push_back(std::move(ps));
            }
            opt.groups.push_back(std::move(group));
        }
        for (const auto& [index, entry] : dictItems(g, g.get(inner, "state"))) {
            const std::string full = prefix + index; // clang 14 cannot capture a structured binding
            auto ps = std::find_if(opt.paramState.begin(), opt.paramState.end(), [&](const ParamState& s) { return s.index == full; });
            if (ps == opt.paramState.end()) {
                opt.paramState.push_back({prefix + index, "", std::nullopt, {}, groupOf.contains(prefix + index) ? static_cast<int>(groupOf[prefix + index]) : -1});
                ps = opt.paramState.end() - 1;
            }
            for (const auto& [k, v] : dictItems(g, entry)) {
                KeyPath key = at;
                key.insert(key.end(), {std::string("state"), index, k});
                if (k == "step") {
                    ps->step = scalarOf(file, v);
                } else if (g[v].kind == Kind::Tensor) {
                    stateKeys.insert(k);
                    const TensorInfo& t = file.tensors()[g[v].ref];
                    ps->moments.push_back({k, t.dtypeName, t.shape, {f.info.path, std::move(key)}});
                }
            }
        }
    }
    opt.type = inferOptimizerType(stateKeys, groupKeys);
    opt.nameMapping = mapped ? "by Megatron's parameter groups (a dense and an expert optimizer, each weight-decayed then not)"
                             : "none (the dense and expert optimizers' groups do not match the model's parameters)";
    m_state.optimizer = std::move(opt);
}

} // namespace ckpt::detail
