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
void StateReader::mapWithinGroups(const std::vector<std::string>& names)
{
    OptimizerPart& opt = *m_state.optimizer;
    std::map<std::string, ParamState*> stateOf;
    for (auto& ps : opt.paramState)
        stateOf[ps.index] = &ps;
    std::vector<const ParameterEntry*> entries;
    for (const auto& n : names)
        entries.push_back(param(n));
    std::vector<bool> taken(names.size(), false);
    std::map<ParamState*, std::string> picked;
    for (std::size_t gi = 0; gi < opt.groups.size(); ++gi) {
        std::size_t next = 0;
        for (const auto& index : opt.groups[gi].params) {
            const auto it = stateOf.find(index);
            const MomentInfo* m = nullptr;
            if (it != stateOf.end()) {
                for (const auto& mi : it->second->moments)
                    m = m ? m : (mi.shape.empty() ? nullptr : &mi);
            }
            if (!m)
                continue;
            std::size_t j = next;
            while (j < names.size() && (taken[j] || !entries[j] || entries[j]->shape != m->shape))
                ++j;
            if (j == names.size()) {
                opt.nameMapping = "none (optimizer index " + index + " of param group " + std::to_string(gi)
                                + " has no parameter of its shape left in the model's order)";
                m_state.warnings.push_back("optimizer parameters cannot be matched to model parameters: " + opt.nameMapping);
                return;
            }
            taken[j] = true;
            picked[it->second] = names[j];
            next = j + 1;
        }
    }
    for (auto& [ps, name] : picked)
        ps->name = name;
    opt.nameMapping = "within " + std::to_string(opt.groups.size())
                    + " param groups, each in the model's order (the HF Trainer's and nanoGPT's convention)";
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
    } else if (opt.paramState.size() == 1 && !opt.paramState[0].moments.empty()) {
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
        opt.nameMapping = "none (a flat partition of " + std::to_string(momentNumel) + " elements, the model has "
                        + std::to_string(modelNumel) + ")";
        m_state.warnings.push_back("optimizer parameters cannot be matched to model parameters: " + opt.nameMapping);
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
