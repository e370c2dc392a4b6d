// SPDX-License-Identifier: MIT
// Which model parameter each optimizer entry belongs to: optimizers key their state by index
// (or by name), so indices are matched to the model's parameters by name, by order, within
// each param group when there are several, by shape when a safetensors model lost the order, or
// not at all, with a warning saying why.
#include "state_reader.h"

#include "state_structure.h"

#include <algorithm>
#include <map>
#include <set>

namespace ckpt::detail {

// Moments have their parameter's shape: with a safetensors model (tensors sorted by name, not in
// the optimizer's order) an order-based mapping whose shapes disagree is wrong. Then each
// optimizer entry takes the next unused parameter of its shape.
bool StateReader::shapesAgree(const std::vector<std::string>& order, const std::vector<std::string>& names) const
{
    for (const auto& ps : m_state.optimizer->paramState) {
        const auto it = std::find(order.begin(), order.end(), ps.index);
        const ParameterEntry* p = it == order.end() ? nullptr : param((names)[static_cast<std::size_t>(it - order.begin())]);
        for (const auto& m : ps.moments) {
            if (p && !m.shape.empty() && m.shape != p->shape)
                return false;
        }
    }
    return true;
}

const ParameterEntry* StateReader::param(const std::string& name) const
{
    for (const auto& p : m_state.model->parameters) {
        if (p.name == name)
            return &p;
    }
    return nullptr;
}

void StateReader::mapByShape(const std::vector<std::string>& names)
{
    OptimizerPart& opt = *m_state.optimizer;
    std::set<std::string> used;
    bool ambiguous = false;
    for (auto& ps : opt.paramState) {
        const MomentInfo* m = nullptr;
        for (const auto& mi : ps.moments)
            m = m ? m : (mi.shape.empty() ? nullptr : &mi);
        if (!m)
            continue;
        int candidates = 0;
        std::string pick;
        for (const auto& n : names) {
            const ParameterEntry* p = param(n);
            if (p && p->shape == m->shape && !used.contains(n)) {
                if (candidates++ == 0)
                    pick = n;
            }
        }
        ambiguous = ambiguous || candidates > 1;
        if (!pick.empty()) {
            ps.name = pick;
            used.insert(pick);
        }
    }
    // How sure the names are is said where the names are shown (the optimizer's name mapping), not
    // as a load warning: nothing in the files is wrong, only the names of equal-shape parameters
    // are uncertain (moment-shape checks stay exact: the shapes agree by construction).
    opt.nameMapping = std::string("by shape (the model file's key order is not the optimizer's)") +
                      (ambiguous ? ", ambiguous among parameters of equal shape: their names may be swapped" : "");
}

// torch numbers the parameters of optimizer.state_dict() consecutively across param_groups, in
// group order, each group in the order it was given its parameters (pytorch@bf6a61dc,
// torch/optim/optimizer.py, Optimizer.state_dict's pack_group; load_state_dict maps them back
// the same way, chaining the groups: pytorch@002d2f0b, same file). With one group that is the
// model's order. With several (weight decay and no decay) it is not, and the file does not record
// which parameter went to which group. The common builders fill every group from
// named_parameters(), so each group lists a subsequence of the model's order: the HF Trainer's
// create_optimizer (transformers@000945a9, src/transformers/trainer.py: decay group first, then
// no decay) and nanoGPT's configure_optimizers. That is the convention used here: walking each
// group, an entry takes the next unused parameter after the group's previous one whose shape is
// its moments' shape. Entries without moments (never stepped) keep no name.
// frozen: model parameters in no group (requires_grad=False; the HF Trainer's create_optimizer
// keeps only `p.requires_grad` parameters in its groups, transformers@000945a9 trainer.py). Which
// ones are frozen is not in the files, so each group is aligned twice: from its start (an entry
// takes the first fitting parameter) and from its end (the last). When both agree the names are
// sure. When not, the alignment whose frozen parameters make up whole modules wins (fine-tuning
// freezes modules: an embedding, the first layers), ties going to the end-aligned one (frozen
// parameters come first in the usual cases), and nameMapping says the names are uncertain.
void StateReader::mapWithinGroups(const std::vector<std::string>& names, std::size_t frozen)
{
    OptimizerPart& opt = *m_state.optimizer;
    std::map<std::string, ParamState*> stateOf;
    for (auto& ps : opt.paramState)
        stateOf[ps.index] = &ps;
    std::vector<const ParameterEntry*> entries;
    for (const auto& n : names)
        entries.push_back(param(n));
    struct Entry {
        ParamState* state;
        const MomentInfo* moment;
    };
    std::vector<std::vector<Entry>> groups(opt.groups.size());
    for (std::size_t gi = 0; gi < opt.groups.size(); ++gi) {
        for (const auto& index : opt.groups[gi].params) {
            const auto it = stateOf.find(index);
            const MomentInfo* m = nullptr;
            if (it != stateOf.end()) {
                for (const auto& mi : it->second->moments)
                    m = m ? m : (mi.shape.empty() ? nullptr : &mi);
            }
            if (m)
                groups[gi].push_back({it->second, m});
        }
    }
    std::string failure;
    const auto align = [&](bool fromEnd) {
        std::map<ParamState*, std::size_t> picked;
        std::vector<bool> taken(names.size(), false);
        const auto fits = [&](std::size_t j, const MomentInfo* m) { return !taken[j] && entries[j] && entries[j]->shape == m->shape; };
        for (std::size_t gi = 0; gi < groups.size(); ++gi) {
            const std::size_t n = groups[gi].size();
            std::size_t bound = fromEnd ? names.size() : 0; // exclusive upper bound / inclusive lower bound
            for (std::size_t e = 0; e < n; ++e) {
                const Entry& entry = groups[gi][fromEnd ? n - 1 - e : e];
                std::size_t j = bound;
                bool found = false;
                if (fromEnd) {
                    while (j > 0 && !(found = fits(j - 1, entry.moment)))
                        --j;
                    j = found ? j - 1 : j;
                } else {
                    while (j < names.size() && !(found = fits(j, entry.moment)))
                        ++j;
                }
                if (!found) {
                    failure = "none (optimizer index " + entry.state->index + " of param group " + std::to_string(gi)
                            + " has no parameter of its shape left in the model's order)";
                    return std::map<ParamState*, std::size_t>{};
                }
                taken[j] = true;
                picked[entry.state] = j;
                bound = fromEnd ? j : j + 1;
            }
        }
        return picked;
    };
    std::map<ParamState*, std::size_t> chosen = align(false);
    if (chosen.empty() && !failure.empty()) {
        opt.nameMapping = failure;
        m_state.warnings.push_back("optimizer parameters cannot be matched to model parameters: " + opt.nameMapping);
        return;
    }
    std::size_t uncertain = 0;
    if (frozen > 0) {
        const std::map<ParamState*, std::size_t> right = align(true);
        if (!right.empty()) {
            for (const auto& [ps, j] : chosen)
                uncertain += right.at(ps) != j;
            // modules (names up to the last '.') left partly frozen by an alignment
            const auto splitModules = [&](const std::map<ParamState*, std::size_t>& a) {
                std::vector<bool> used(names.size(), false);
                for (const auto& [_, j] : a)
                    used[j] = true;
                std::map<std::string, std::pair<bool, bool>> seen; // module -> (has frozen, has trained)
                for (std::size_t j = 0; j < names.size(); ++j) {
                    auto& [f, t] = seen[names[j].substr(0, names[j].rfind('.') == std::string::npos ? 0 : names[j].rfind('.'))];
                    (used[j] ? t : f) = true;
                }
                return std::count_if(seen.begin(), seen.end(), [](const auto& kv) { return kv.second.first && kv.second.second; });
            };
            if (uncertain > 0 && splitModules(right) <= splitModules(chosen))
                chosen = right;
        }
    }
    for (auto& [ps, j] : chosen)
        ps->name = names[j];
    opt.nameMapping = "within " + std::to_string(opt.groups.size())
                    + " param groups, each in the model's order (the HF Trainer's and nanoGPT's convention)";
    if (frozen > 0)
        opt.nameMapping += "; " + std::to_string(frozen) + " model parameter(s) in no group (frozen) stepped over"
                         + (uncertain ? ", " + std::to_string(uncertain) + " entr" + (uncertain == 1 ? "y" : "ies")
                                            + " fit other parameters of the same shape too: names uncertain (whole frozen "
                                              "modules assumed)"
                                      : ", every entry's shape leaves one choice");
}

// Fewer optimizer entries than model parameters: the others are frozen (in no group).
void StateReader::mapFrozen(const std::vector<std::string>& params, const std::vector<std::string>& order)
{
    if (m_state.model->sortedNames) { // a safetensors model lost the order: shapes only
        mapByShape(params);
        return;
    }
    mapWithinGroups(params, params.size() - order.size());
}

// torchtune keys its optimizer by its own module names while its HF checkpointer writes the weights
// under Hugging Face names (pytorch/torchtune@bd2a0fc7 torchtune/models/convert_weights.py _FROM_HF:
// model.embed_tokens <-> tok_embeddings, self_attn.o_proj <-> attn.output_proj, mlp.gate/up/down_proj
// <-> mlp.w1/w3/w2, input_layernorm / post_attention_layernorm <-> sa_norm / mlp_norm.scale,
// model.norm <-> norm.scale, lm_head <-> output). Used only when no optimizer name is in W and every
// one converts to a name that is.
void StateReader::mapTorchtuneNames()
{
    if (!m_state.model)
        return;
    std::set<std::string> inModel;
    for (const auto& p : m_state.model->parameters)
        inModel.insert(p.name);
    OptimizerPart& opt = *m_state.optimizer;
    if (std::any_of(opt.paramState.begin(), opt.paramState.end(), [&](const ParamState& ps) { return inModel.contains(ps.name); }))
        return;
    static const std::vector<std::pair<std::string, std::string>> layer = {
        {"attn.q_proj.weight", "self_attn.q_proj.weight"},   {"attn.k_proj.weight", "self_attn.k_proj.weight"},
        {"attn.v_proj.weight", "self_attn.v_proj.weight"},   {"attn.output_proj.weight", "self_attn.o_proj.weight"},
        {"mlp.w1.weight", "mlp.gate_proj.weight"},           {"mlp.w3.weight", "mlp.up_proj.weight"},
        {"mlp.w2.weight", "mlp.down_proj.weight"},           {"sa_norm.scale", "input_layernorm.weight"},
        {"mlp_norm.scale", "post_attention_layernorm.weight"}};
    static const std::map<std::string, std::string> top = {
        {"tok_embeddings.weight", "model.embed_tokens.weight"}, {"norm.scale", "model.norm.weight"}, {"output.weight", "lm_head.weight"}};
    auto convert = [&](const std::string& name) -> std::string {
        if (const auto it = top.find(name); it != top.end())
            return it->second;
        if (!name.starts_with("layers."))
            return {};
        const auto dot = name.find('.', 7);
        if (dot == std::string::npos)
            return {};
        const std::string index = name.substr(7, dot - 7), rest = name.substr(dot + 1);
        for (const auto& [tt, hf] : layer) {
            if (rest == tt)
                return "model.layers." + index + "." + hf;
        }
        return {};
    };
    std::vector<std::string> converted;
    for (const auto& ps : opt.paramState) {
        std::string hf = convert(ps.name);
        if (hf.empty() || !inModel.contains(hf))
            return; // not torchtune's names, or another architecture: keep the names as they are
        converted.push_back(std::move(hf));
    }
    for (std::size_t i = 0; i < opt.paramState.size(); ++i)
        opt.paramState[i].name = converted[i];
    opt.nameMapping = "by name, torchtune's module names converted to the Hugging Face names of the weights";
}

void StateReader::mapOptimizerNames()
{
    if (!m_state.optimizer || !m_state.optimizer->nameMapping.empty())
        return;
    OptimizerPart& opt = *m_state.optimizer;
    std::vector<std::string> order; // optimizer keys in param_groups order
    for (const auto& gr : opt.groups)
        order.insert(order.end(), gr.params.begin(), gr.params.end());
    const bool keysAreNames = !order.empty() && std::any_of(order.begin(), order.end(), [](const std::string& k) {
        return !k.empty() && !std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; });
    });
    // torch >= 2.6 records each group's parameter names when the optimizer is built from
    // named_parameters() (pytorch/pytorch#134107, torch/optim/optimizer.py add_param_group and
    // state_dict's pack_group keep `param_names` beside `params`): then nothing is inferred.
    const bool namesRecorded = !opt.groups.empty() && std::all_of(opt.groups.begin(), opt.groups.end(), [](const ParamGroup& g) {
        return g.paramNames.size() == g.params.size();
    });
    if (namesRecorded) {
        std::map<std::string, std::string> nameOf;
        for (const auto& gr : opt.groups) {
            for (std::size_t i = 0; i < gr.params.size(); ++i)
                nameOf[gr.params[i]] = gr.paramNames[i];
        }
        for (auto& ps : opt.paramState) {
            if (const auto it = nameOf.find(ps.index); it != nameOf.end())
                ps.name = it->second;
        }
        opt.nameMapping = "by name (param_names recorded in the param groups)";
        return;
    }
    if (keysAreNames) {
        opt.nameMapping = "by name";
        for (auto& ps : opt.paramState)
            ps.name = ps.index;
        mapTorchtuneNames();
        return;
    }
    if (!m_state.model) {
        opt.nameMapping = "none (no model state in this checkpoint)";
        return;
    }
    std::vector<std::string> all, params;
    for (const auto& p : m_state.model->parameters) {
        all.push_back(p.name);
        if (!looksLikeBuffer(p))
            params.push_back(p.name);
    }
    const std::vector<std::string>* names = nullptr;
    if (params.size() == order.size()) {
        names = &params;
        opt.nameMapping = params.size() == all.size() ? "by order" : "by order, buffers skipped";
    } else if (all.size() == order.size()) {
        names = &all;
        opt.nameMapping = "by order";
    } else if (opt.paramState.size() == 1 && !opt.paramState[0].moments.empty() && order.size() == 1) {
        // ZeRO / flat optimizers keep one flat fp32 partition for all parameters.
        int64_t modelNumel = 0, momentNumel = 1;
        for (const auto& p : m_state.model->parameters)
            modelNumel += looksLikeBuffer(p) ? 0 : p.numel;
        for (int64_t d : opt.paramState[0].moments[0].shape)
            momentNumel *= d;
        if (momentNumel >= modelNumel && momentNumel < modelNumel + 4096) {
            opt.nameMapping = "flat partition of all " + std::to_string(params.size()) + " parameters";
            opt.paramState[0].name = "(all parameters, flattened)";
            return;
        }
        if (momentNumel >= 4096 && params.size() > 1) { // not one of the model's parameters: a partition
            opt.nameMapping = "none (a flat partition of " + std::to_string(momentNumel) + " elements, the model has "
                            + std::to_string(modelNumel) + ")";
            m_state.warnings.push_back("optimizer parameters cannot be matched to model parameters: " + opt.nameMapping);
            return;
        }
        mapFrozen(params, order);
        return;
    } else if (!order.empty() && order.size() < params.size()) {
        mapFrozen(params, order);
        return;
    } else {
        opt.nameMapping = "none (" + std::to_string(order.size()) + " optimizer parameters, "
                        + std::to_string(params.size()) + " model parameters)";
        m_state.warnings.push_back("optimizer parameters cannot be matched to model parameters: " + opt.nameMapping);
        return;
    }
    // Only a safetensors model loses the module's key order (it stores names sorted, and a sharded
    // set's index lists them sorted too: save_pretrained dumps it with sort_keys); with a
    // torch.save state_dict the order is the module's, and a disagreement is a real fault for
    // the rules (optimizer.moment-shape) to report, not something to paper over.
    const bool sortedModel = m_state.model->sortedNames;
    if (sortedModel && !shapesAgree(order, *names)) {
        mapByShape(*names);
        return;
    }
    if (opt.groups.size() > 1) {
        mapWithinGroups(*names);
        return;
    }
    for (auto& ps : opt.paramState) {
        const auto it = std::find(order.begin(), order.end(), ps.index);
        if (it != order.end())
            ps.name = (*names)[static_cast<std::size_t>(it - order.begin())];
    }
}

} // namespace ckpt::detail
