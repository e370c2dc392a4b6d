// SPDX-License-Identifier: MIT
// Structure across a pair (recovery guide §9.1, §10.3): the model's keys (allowing for wrapper
// prefixes such as DDP's `module.`), shapes and dtypes, and the environment a resume must match.
#include "ckpt/rules/rule_catalogue.h"
#include "environment_keys.h"
#include "rule_families.h"
#include "rule_support.h"

#include <map>
#include <set>

namespace ckpt::rules {
namespace {

std::string stripWrapper(const std::string& name, std::string* prefix = nullptr)
{
    std::string rest = name, stripped;
    bool again = true;
    while (again) {
        again = false;
        for (const char* p : {"module.", "_orig_mod.", "_fsdp_wrapped_module.", "_forward_module."}) {
            if (rest.starts_with(p)) {
                stripped += p;
                rest = rest.substr(std::string(p).size());
                again = true;
            }
        }
    }
    if (prefix)
        *prefix = stripped;
    return rest;
}

std::string listOf(const std::vector<std::string>& names)
{
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < 6; ++i)
        out += (i ? ", " : "") + names[i];
    return names.size() > 6 ? out + ", ... (" + std::to_string(names.size()) + ")" : out;
}

void modelKeys(const TrainingState& a, const TrainingState& b, Findings& out)
{
    if (!a.model || !b.model)
        return;
    std::map<std::string, const ParameterEntry*> pa, pb;
    std::set<std::string> prefixA, prefixB;
    for (const auto& p : a.model->parameters) {
        std::string prefix;
        pa[stripWrapper(p.name, &prefix)] = &p;
        prefixA.insert(prefix);
    }
    for (const auto& p : b.model->parameters) {
        std::string prefix;
        pb[stripWrapper(p.name, &prefix)] = &p;
        prefixB.insert(prefix);
    }
    std::vector<std::string> onlyA, onlyB, shape, dtype;
    for (const auto& [name, p] : pa) {
        const auto it = pb.find(name);
        if (it == pb.end()) {
            onlyA.push_back(name);
            continue;
        }
        if (p->shape != it->second->shape)
            shape.push_back(name + " " + shapeText(p->shape) + " -> " + shapeText(it->second->shape));
        else if (p->dtype != it->second->dtype)
            dtype.push_back(name + " " + p->dtype + " -> " + it->second->dtype);
    }
    for (const auto& [name, p] : pb) {
        if (!pa.contains(name))
            onlyB.push_back(name);
    }
    if (!onlyA.empty() || !onlyB.empty()) {
        Finding f = makeFinding("model.keys-differ",
            "the model keys differ: " + std::to_string(onlyA.size()) + " only in A, " + std::to_string(onlyB.size()) + " only in B",
            hintWithNext("The architecture or config changed, a checkpoint is truncated, or optimizer state was saved "
                         "where the model should be; load_state_dict(strict=False) would hide it (recovery guide §10.3 on missing or unexpected keys).", Component::Model));
        if (!onlyA.empty())
            f.evidence.push_back(evidence("only in A", listOf(onlyA), a.model->from));
        if (!onlyB.empty())
            f.evidence.push_back(evidence("only in B", listOf(onlyB), b.model->from));
        out.push_back(std::move(f));
    }
    if (prefixA != prefixB && onlyA.empty() && onlyB.empty()) {
        auto text = [](const std::set<std::string>& s) {
            std::string t;
            for (const auto& p : s)
                t += (t.empty() ? "" : " | ") + (p.empty() ? std::string("(none)") : p);
            return t;
        };
        Finding f = makeFinding("model.prefix-differs",
            "the same parameters are saved under wrapper prefix " + text(prefixA) + " in A and " + text(prefixB) + " in B",
            hintWithNext("One was saved from the DDP/compiled wrapper (model.module / _orig_mod) and one from the bare "
                         "model; strip the prefix when loading rather than using strict=False (recovery guide §10.3 on missing or unexpected keys).", Component::Model));
        f.evidence.push_back(evidence("first key in A", a.model->parameters.front().name, a.model->parameters.front().from));
        f.evidence.push_back(evidence("first key in B", b.model->parameters.front().name, b.model->parameters.front().from));
        out.push_back(std::move(f));
    }
    if (!shape.empty()) {
        Finding f = makeFinding("model.shape-changed", "parameter shapes changed: " + listOf(shape),
            hintWithNext("The model config changed between the saves (hidden size, vocabulary, heads); the optimizer state "
                         "of these parameters no longer fits (recovery guide §9.1 on checking the environment and §10.3 on missing or unexpected keys).", Component::Model));
        f.evidence.push_back(evidence("changed", listOf(shape), b.model->from));
        out.push_back(std::move(f));
    }
    if (!dtype.empty()) {
        Finding f = makeFinding("model.dtype-changed", "parameter dtypes changed: " + listOf(dtype),
            hintWithNext("Mixed-precision settings changed (fp32 master weights vs fp16/bf16 module weights), or one "
                         "checkpoint was converted for inference (recovery guide §9.1 on checking the environment).", Component::Model));
        f.evidence.push_back(evidence("changed", listOf(dtype), b.model->from));
        out.push_back(std::move(f));
    }
}

void environment(const TrainingState& a, const TrainingState& b, Findings& out)
{
    std::map<std::string, const StateField*> ea, eb;
    for (const auto& f : a.environment) {
        if (isCompatibilityKey(f.name))
            ea.emplace(f.name, &f);
    }
    for (const auto& f : b.environment) {
        if (isCompatibilityKey(f.name))
            eb.emplace(f.name, &f);
    }
    std::vector<std::pair<const StateField*, const StateField*>> changed;
    for (const auto& [name, fa] : ea) {
        const auto it = eb.find(name);
        if (it != eb.end() && it->second->value != fa->value)
            changed.emplace_back(fa, it->second);
    }
    if (changed.empty())
        return;
    std::string list;
    for (const auto& [fa, fb] : changed)
        list += (list.empty() ? "" : ", ") + fa->name + " " + fa->value + " -> " + fb->value;
    Finding f = makeFinding("environment.changed", "the environment changed between the checkpoints: " + list,
        hintWithNext("A resume in a different environment: fine when deliberate (a migration, a new training phase), "
                     "silent trouble otherwise; a world-size change also reshards data and per-rank RNG (recovery guide §7.3 on changing the world size and §9.1 on checking the environment).",
                     Component::Environment));
    for (const auto& [fa, fb] : changed) {
        f.evidence.push_back(evidence(fa->name + " in A", fa->value, fa->from));
        f.evidence.push_back(evidence(fb->name + " in B", fb->value, fb->from));
    }
    out.push_back(std::move(f));
}


// torch's Optimizer.load_state_dict pairs the saved per-parameter state with the new optimizer's
// parameters by position (torch/optim/optimizer.py: `id_map = dict(zip(saved ids, params))`), and an
// optimizer built over model.parameters() lists them in registration order, the state_dict's order. When
// B's model lists the same parameters in another order and its optimizer continued A's state, same-shape
// parameters now carry each other's moments (a refactor that declares layers in another order; Lightning
// and the Trainer load the weights by name but the optimizer by position). Judged where the optimizer
// state is named by order; a mismatch of shapes is optimizer.moment-shape's.
void paramOrderChanged(const TrainingState& a, const TrainingState& b, Findings& out)
{
    if (!a.model || !b.model || !a.optimizer || !b.optimizer || !b.optimizer->nameMapping.starts_with("by order")
        || !a.optimizer->nameMapping.starts_with("by order"))
        return;
    const auto sa = optimizerStep(a), sb = optimizerStep(b);
    if (!sa || !sb || sb->step < sa->step || sb->step == 0)
        return; // a fresh optimizer in B pairs nothing with A's state (optimizer.reset says so)
    std::vector<std::string> orderA, orderB;
    for (const auto& p : a.model->parameters)
        orderA.push_back(stripWrapper(p.name));
    for (const auto& p : b.model->parameters)
        orderB.push_back(stripWrapper(p.name));
    if (orderA == orderB || std::set<std::string>(orderA.begin(), orderA.end()) != std::set<std::string>(orderB.begin(), orderB.end()))
        return;
    std::map<std::string, const ParamState*> byIndexA;
    for (const auto& ps : a.optimizer->paramState)
        byIndexA[ps.index] = &ps;
    std::map<std::string, const ParameterEntry*> paramB;
    for (const auto& p : b.model->parameters)
        paramB[stripWrapper(p.name)] = &p;
    std::map<std::string, const ParameterEntry*> paramA;
    for (const auto& p : a.model->parameters)
        paramA[stripWrapper(p.name)] = &p;
    std::vector<std::string> swapped;
    for (const auto& ps : b.optimizer->paramState) {
        const auto it = byIndexA.find(ps.index);
        if (it == byIndexA.end() || ps.name.empty() || it->second->name.empty())
            continue;
        const std::string nb = stripWrapper(ps.name), na = stripWrapper(it->second->name);
        if (nb == na || !paramB.contains(nb) || !paramA.contains(na) || paramB.at(nb)->shape != paramA.at(na)->shape)
            continue;
        swapped.push_back(nb + " <- " + na);
    }
    if (swapped.empty())
        return;
    Finding f = makeFinding("optimizer.param-order-changed",
        "B's model lists its parameters in another order than A's while its optimizer continued A's state by position: "
            + std::to_string(swapped.size()) + " parameter(s) now carry the moments of another of the same shape ("
            + listOf(swapped) + ")",
        hintWithNext("The resumed code registers its modules in another order (a refactor, a layer moved), so parameters() and "
                     "the optimizer's positions changed; the weights were loaded by name, the optimizer state by position. Load "
                     "the optimizer with the old order (or remap its state by name) and resume again (recovery guide §2.2 on "
                     "optimizer state and §9.2 on building objects before loading state).", Component::Optimizer));
    f.assumes = "the optimizer is built over model.parameters() (or groups in the model's order), so its positions follow the "
                "modules' registration order, the state_dict's";
    f.evidence.push_back(evidence("parameter order in A", listOf(orderA), a.model->parameters.front().from));
    f.evidence.push_back(evidence("parameter order in B", listOf(orderB), b.model->parameters.front().from));
    f.evidence.push_back(evidence("optimizer step in A", std::to_string(sa->step), sa->from));
    f.evidence.push_back(evidence("optimizer step in B", std::to_string(sb->step), sb->from));
    if (auto w = writerEvidence(b))
        f.evidence.push_back(*w);
    out.push_back(std::move(f));
}

} // namespace

void structurePairRules(const CheckpointFacts& a, const CheckpointFacts& b, Findings& out)
{
    modelKeys(a.state, b.state, out);
    paramOrderChanged(a.state, b.state, out);
    environment(a.state, b.state, out);
}

} // namespace ckpt::rules
