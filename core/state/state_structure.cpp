// SPDX-License-Identifier: MIT
#include "state_structure.h"

#include "ckpt/state/state_values.h"

#include <filesystem>

namespace fs = std::filesystem;

namespace ckpt {

const std::set<std::string>& momentNames()
{
    static const std::set<std::string> names = {"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer", "step",
                                                "sum", "square_avg", "grad_avg", "exp_inf", "mu_product", "acc_delta",
                                                "ax", "eta", "prev", "step_size"};
    return names;
}

bool isOptimizerDict(const ValueGraph& g, NodeId id)
{
    const NodeId state = g.get(id, "state");
    const NodeId groups = g.get(id, "param_groups");
    return isDict(g, state) && g.valid(groups) && g[groups].kind == Kind::List;
}

// A model state_dict: string keys, tensors as values (a per-parameter optimizer state looks
// alike but uses moment names as keys).
int stateDictScore(const ValueGraph& g, NodeId id)
{
    const auto items = dictItems(g, id);
    if (items.empty())
        return 0;
    int tensors = 0, extraStates = 0;
    bool allMoments = true;
    for (const auto& [k, v] : items) {
        tensors += g[v].kind == Kind::Tensor;
        // A module's get_extra_state() is saved under "<prefix>_extra_state" (torch/nn/modules/
        // module.py _EXTRA_STATE_KEY_SUFFIX) whatever it returns: None from megatron.core's linears,
        // a BytesIO from Transformer Engine. Not a tensor, still part of a state_dict.
        extraStates += k.ends_with("_extra_state") && g[v].kind != Kind::Tensor;
        allMoments = allMoments && momentNames().contains(k);
    }
    if (allMoments || tensors * 5 < (static_cast<int>(items.size()) - extraStates) * 4)
        return 0;
    return tensors;
}

bool isSchedulerDict(const ValueGraph& g, NodeId id)
{
    // DeepSpeed's own schedulers (WarmupLR, WarmupDecayLR, OneCycle, WarmupCosineLR) save only
    // {"last_batch_iteration": n} (microsoft/DeepSpeed@eb07d41f deepspeed/runtime/lr_schedules.py state_dict).
    const bool deepspeed = isDict(g, id) && g[id].items.size() == 2 && g.get(id, "last_batch_iteration") != kNoNode;
    return isDict(g, id) && (g.get(id, "last_epoch") != kNoNode || g.get(id, "_last_lr") != kNoNode || g.get(id, "_schedulers") != kNoNode || deepspeed);
}

bool isScalerDict(const ValueGraph& g, NodeId id)
{
    return isDict(g, id) && g.get(id, "scale") != kNoNode && g.get(id, "growth_factor") != kNoNode;
}

bool looksLikeBuffer(const ParameterEntry& p) { return !isOptimizedParameter(p); }

std::string inferOptimizerType(const std::set<std::string>& stateKeys, const std::set<std::string>& groupKeys)
{
    if (stateKeys.contains("mu_product"))
        return "NAdam";
    if (stateKeys.contains("exp_inf"))
        return "Adamax";
    if (stateKeys.contains("exp_avg") && stateKeys.contains("exp_avg_sq"))
        return "Adam/AdamW";
    if (stateKeys.contains("square_avg"))
        return "RMSprop";
    if (stateKeys.contains("sum"))
        return "Adagrad";
    if (stateKeys.contains("momentum_buffer") || groupKeys.contains("nesterov"))
        return "SGD";
    if (groupKeys.contains("betas"))
        return "Adam/AdamW";
    if (groupKeys.contains("lr_decay"))
        return "Adagrad";
    if (groupKeys.contains("alpha"))
        return "RMSprop";
    return "unknown";
}

// Which part a counter belongs to, by its key: C (progress), D (data cursor) or E (environment).
const std::set<std::string> kProgressKeys = {"global_step", "global_steps", "step", "iteration", "iter", "epoch",
                                             "micro_step", "skipped_steps", "global_samples", "steps_run", "epochs_run", "total_epochs",
                                             "consumed_samples", "gradient_accumulation_steps"};
const std::set<std::string> kDataKeys = {"batch_pos", "data_seed", "position", "cursor", "sampler_seed",
                                         "consumed_train_samples", "data_sampler", "sampler"};
const std::set<std::string> kEnvKeys = {"torch_version", "format_version", "pytorch-lightning_version",
                                        "ds_version", "transformers_version", "world_size", "dp_world_size",
                                        "mp_world_size", "config_sha256", "dataset_version",
                                        "tokenizer_version", "code_commit", "cuda_version", "model_arch",
                                        "precision", "seed", "hparams_name"};

std::string fileStem(const std::string& path)
{
    std::string name = fs::path(path).filename().string();
    return name.substr(0, name.find('.'));
}

// A copy of a tensor-free value into another graph (DCP byte items rebuilt into one dict).
NodeId copyValue(const ValueGraph& from, NodeId id, ValueGraph& to, int depth)
{
    if (!from.valid(id) || depth > 32)
        return to.add(Kind::None);
    Node n = from[id];
    switch (n.kind) {
    case Kind::List:
    case Kind::Tuple:
    case Kind::Dict:
    case Kind::Set:
        for (auto& item : n.items)
            item = copyValue(from, item, to, depth + 1);
        n.state = kNoNode;
        return to.add(std::move(n));
    case Kind::None: case Kind::Bool: case Kind::Int: case Kind::BigInt: case Kind::Float: case Kind::String:
    case Kind::Dtype: case Kind::Device:
        n.items.clear();
        return to.add(std::move(n));
    default:
        return to.addText(Kind::Invalid, "not copied: a " + std::string(kindName(n.kind)));
    }
}

bool isOptimizedParameter(const ParameterEntry& p)
{
    if (!p.tiedTo.empty())
        return false;
    // BatchNorm's running statistics; fairseq's `version` buffer (a float tensor, register_buffer in
    // fairseq/models/transformer/transformer_decoder.py).
    for (const char* suffix : {"running_mean", "running_var", "num_batches_tracked", ".version"}) {
        if (p.name.ends_with(suffix))
            return false;
    }
    return p.dtype.starts_with("float") || p.dtype.starts_with("bfloat") || p.dtype.starts_with("complex");
}

} // namespace ckpt
