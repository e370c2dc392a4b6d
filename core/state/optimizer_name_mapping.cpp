// SPDX-License-Identifier: MIT
// Which model parameter each optimizer entry belongs to: optimizers key their state by index
// (or by name), so indices are matched to the model's parameters by name, by order, by shape
// when a safetensors model lost the order, or not at all, with a warning saying why.
#include "state_reader.h"

#include "state_structure.h"

#include <algorithm>
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
    opt.nameMapping = std::string("by shape (the model file's key order is not the optimizer's)") +
                      (ambiguous ? ", ambiguous among parameters of equal shape" : "");
    if (ambiguous)
        m_state.warnings.push_back("optimizer parameters were matched to model parameters by shape, and several parameters "
                                   "share a shape: names of those may be swapped");
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
    if (keysAreNames) {
        opt.nameMapping = "by name";
        for (auto& ps : opt.paramState)
            ps.name = ps.index;
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
    // Only a safetensors model loses the module's key order (it stores names sorted); with a
    // torch.save state_dict the order is the module's, and a disagreement is a real fault for
    // the rules (optimizer.moment-shape) to report, not something to paper over.
    const bool sortedModel = std::any_of(m_state.model->parameters.begin(), m_state.model->parameters.end(),
                                         [](const ParameterEntry& p) { return p.from.file.ends_with(".safetensors"); });
    if (sortedModel && !shapesAgree(order, *names)) {
        mapByShape(*names);
        return;
    }
    for (auto& ps : opt.paramState) {
        const auto it = std::find(order.begin(), order.end(), ps.index);
        if (it != order.end())
            ps.name = (*names)[static_cast<std::size_t>(it - order.begin())];
    }
}

} // namespace ckpt::detail
