// SPDX-License-Identifier: MIT
// Optimizer state O_t (recovery guide §2.2): present, one entry per trainable parameter, moments
// shaped like their parameters, and a `step` that matches the global step once the updates the
// AMP scaler skipped are accounted for (§3.2).
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"
#include "scaler_account.h"

#include <map>
#include <set>

namespace ckpt::rules {
namespace {

bool isBufferLike(const ParameterEntry& p) { return !isOptimizedParameter(p); }

bool keepsState(const OptimizerPart& o)
{
    if (o.type == "unknown")
        return false;
    if (o.type != "SGD")
        return true;
    for (const auto& g : o.groups) {
        for (const auto& hp : g.hyperparameters) {
            if (hp.name == "momentum" && toNumber(hp.value).value_or(0) > 0)
                return true;
        }
    }
    return false;
}

bool flatPartition(const OptimizerPart& o) { return o.nameMapping.starts_with("flat"); }

// The moment torch's optimizer of this type creates for every parameter on its first step (the
// _init_group of torch/optim/sgd.py, adam.py, rmsprop.py and adagrad.py; read in the snapshot the
// index holds, not pinned to one commit here). The finding that uses it is a warning for that reason too.
const char* ownMoment(const std::string& type)
{
    if (type == "SGD")
        return "momentum_buffer";
    if (type == "Adam/AdamW")
        return "exp_avg";
    if (type == "RMSprop")
        return "square_avg";
    if (type == "Adagrad")
        return "sum";
    return nullptr;
}

void stateMissing(const TrainingState& s, Findings& out)
{
    const OptimizerPart& o = *s.optimizer;
    if (!keepsState(o) || s.globalStep.value_or(0) <= 0)
        return;
    // A wrapper's own state (SAM's old_p, davda54/sam before PR#39) in place of the base optimizer's
    // is as missing as no state at all.
    const char* own = ownMoment(o.type);
    std::set<std::string> held;
    for (const auto& ps : o.paramState)
        for (const auto& m : ps.moments)
            held.insert(m.name);
    const bool wrapperOnly = !o.paramState.empty() && own && !held.contains(own) && !flatPartition(o);
    if (!o.paramState.empty() && !wrapperOnly)
        return;
    std::string heldText;
    for (const auto& h : held)
        heldText += (heldText.empty() ? "" : ", ") + h;
    Finding f = makeFinding("optimizer.state-missing",
        o.type + " keeps per-parameter state, but this optimizer has "
            + (wrapperOnly ? "none of its " + std::string(own) + " (only " + heldText + ")" : std::string("none"))
            + " at global step " + std::to_string(*s.globalStep),
        hintWithNext("A fresh optimizer was saved: the resume built a new optimizer without load_state_dict, or a wrapper "
                     "(SAM, Lookahead) returned its own empty state_dict instead of the base optimizer's (recovery guide §2.2 on optimizer state and §9.2 on building objects before loading state).",
                     Component::Optimizer));
    if (wrapperOnly) {
        // Proven: no entry holds the moment; inferred: that the optimizer is torch's o.type at all
        // (from its state and param-group keys), which keeps that moment for every stepped parameter.
        f.severity = Severity::Warning;
        f.assumes = "the optimizer is torch's " + o.type + " (inferred from its keys), which keeps " + own
                  + " for every parameter it stepped";
    }
    f.evidence.push_back(evidence("optimizer state", wrapperOnly ? "entries holding only " + heldText : "{} (no entry)", o.from));
    f.evidence.push_back(globalStepEvidence(s));
    out.push_back(std::move(f));
}

void paramsWithoutState(const TrainingState& s, Findings& out)
{
    const OptimizerPart& o = *s.optimizer;
    if (o.paramState.empty() || flatPartition(o))
        return;
    std::set<std::string> withState;
    for (const auto& ps : o.paramState)
        withState.insert(ps.index);
    std::vector<std::string> order;
    for (const auto& g : o.groups)
        order.insert(order.end(), g.params.begin(), g.params.end());
    std::vector<std::string> trainable;
    if (s.model) {
        for (const auto& p : s.model->parameters) {
            if (!isBufferLike(p))
                trainable.push_back(p.name);
        }
    }
    std::vector<std::string> missing;
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (withState.contains(order[i]))
            continue;
        std::string name = order[i];
        if (trainable.size() == order.size() && o.nameMapping.starts_with("by order")) // index i is parameter i
            name = trainable[i] + " (index " + order[i] + ")";
        missing.push_back(name);
    }
    if (missing.empty())
        return;
    std::string list;
    for (std::size_t i = 0; i < missing.size() && i < 8; ++i)
        list += (i ? ", " : "") + missing[i];
    if (missing.size() > 8)
        list += ", ...";
    Finding f = makeFinding("optimizer.param-without-state",
        std::to_string(missing.size()) + " of " + std::to_string(order.size()) + " optimizer parameters have no state while the others do: " + list,
        hintWithNext("Parameters that never received a gradient (frozen or unused branches) have no state; otherwise the "
                     "optimizer was rebuilt with different parameter groups and its state no longer lines up (recovery guide §9.2 on building objects before loading state).",
                     Component::Optimizer));
    f.evidence.push_back(evidence("parameters with state", std::to_string(withState.size()), o.from));
    f.evidence.push_back(evidence("parameters in param_groups", std::to_string(order.size()), o.from));
    out.push_back(std::move(f));
}

void unmatchedParams(const TrainingState& s, Findings& out)
{
    const OptimizerPart& o = *s.optimizer;
    // Fewer optimizer entries than model parameters, matched by stepping over the rest: frozen
    // parameters (fine-tuning) or parameters left out by mistake; the files cannot tell which.
    if (s.model && !o.namesNotRecorded && o.nameMapping.find("in no group (frozen)") != std::string::npos) {
        const std::string count = o.nameMapping.substr(o.nameMapping.find("; ") + 2, o.nameMapping.find(" model parameter") - o.nameMapping.find("; ") - 2);
        Finding f = makeFinding("optimizer.unmatched-params", count + " of the model's parameters are in no param group of the optimizer",
            hintWithNext("Frozen parameters (requires_grad=False) are left out of the optimizer on purpose; parameters left out "
                         "by mistake are never trained. The files cannot tell which: the training code's requires_grad settings "
                         "decide. A resume must freeze the same parameters, or the optimizer's state will not line up "
                         "(recovery guide §9.2 on building objects before loading state).", Component::Optimizer));
        f.severity = Severity::Info;
        f.evidence.push_back(evidence("name mapping", o.nameMapping, o.from));
        f.evidence.push_back(evidence("model", std::to_string(s.model->parameters.size()) + " tensors", s.model->from));
        out.push_back(std::move(f));
        return;
    }
    if (!s.model || o.namesNotRecorded || !o.nameMapping.starts_with("none (") || o.nameMapping.starts_with("none (no model")
        || o.nameMapping.find("flat partition") != std::string::npos || o.nameMapping.starts_with("none (0 optimizer"))
        return; // ZeRO partitions and optimizers without parameters cannot be compared this way
    Finding f = makeFinding("optimizer.unmatched-params", "optimizer parameters cannot be matched to the model's: " + o.nameMapping.substr(6, o.nameMapping.size() - 7),
        hintWithNext("The optimizer was built over a different parameter list than the model saved beside it (a changed "
                     "architecture, frozen layers, a wrapper's extra parameters); its moments may be applied to the wrong "
                     "tensors on resume (recovery guide §9.2 on building objects before loading state).", Component::Optimizer));
    f.evidence.push_back(evidence("optimizer", o.type, o.from));
    f.evidence.push_back(evidence("model", std::to_string(s.model->parameters.size()) + " tensors", s.model->from));
    out.push_back(std::move(f));
}

// The parameter each optimizer entry belongs to. When the state model fell back to matching by
// shape although the model file keeps the optimizer's order (anything but safetensors, which sorts
// its keys), the order is what torch will use on load: check the moments against that.
std::map<std::string, const ParameterEntry*> parameterOf(const TrainingState& s)
{
    const OptimizerPart& o = *s.optimizer;
    std::map<std::string, const ParameterEntry*> byIndex;
    const bool reordered = o.nameMapping.starts_with("by shape") && !s.model->sortedNames;
    if (reordered) {
        std::vector<const ParameterEntry*> trainable;
        for (const auto& p : s.model->parameters) {
            if (!isBufferLike(p))
                trainable.push_back(&p);
        }
        std::vector<std::string> order;
        for (const auto& g : o.groups)
            order.insert(order.end(), g.params.begin(), g.params.end());
        if (order.size() == trainable.size()) {
            for (std::size_t i = 0; i < order.size(); ++i)
                byIndex[order[i]] = trainable[i];
        }
        return byIndex;
    }
    std::map<std::string, const ParameterEntry*> byName;
    for (const auto& p : s.model->parameters)
        byName[p.name] = &p;
    for (const auto& ps : o.paramState) {
        if (const auto it = byName.find(ps.name); !ps.name.empty() && it != byName.end())
            byIndex[ps.index] = it->second;
    }
    return byIndex;
}

void momentShapes(const TrainingState& s, Findings& out)
{
    const OptimizerPart& o = *s.optimizer;
    if (!s.model || flatPartition(o))
        return;
    const auto params = parameterOf(s);
    for (const auto& ps : o.paramState) {
        const auto it = params.find(ps.index);
        if (it == params.end() || ps.fragmentNumel)
            continue;
        const std::vector<int64_t>& expected = ps.shardShape ? *ps.shardShape : it->second->shape;
        for (const auto& m : ps.moments) {
            if (m.shape == expected || m.shape.empty())
                continue;
            Finding f = makeFinding("optimizer.moment-shape",
                m.name + " of " + it->second->name + " (optimizer index " + ps.index + ") has shape " + shapeText(m.shape) + " but the parameter has "
                    + shapeText(it->second->shape),
                hintWithNext("Optimizer state is keyed by position: the model's parameter order changed (or the optimizer "
                             "was built over other parameters), so moments belong to different tensors (recovery guide §9.3 on validating right after a resume, story: "
                             "pytorch-i3d#38).", Component::Optimizer));
            f.evidence.push_back(evidence(m.name + " shape", shapeText(m.shape), m.from));
            f.evidence.push_back(evidence("parameter shape", shapeText(it->second->shape), it->second->from));
            out.push_back(std::move(f));
        }
    }
}

void stepsDiffer(const TrainingState& s, Findings& out)
{
    std::map<int64_t, std::vector<std::string>> byStep;
    for (const auto& ps : s.optimizer->paramState) {
        if (ps.step)
            byStep[static_cast<int64_t>(*ps.step)].push_back(ps.name.empty() ? ps.index : ps.name);
    }
    if (byStep.size() < 2)
        return;
    std::string detail;
    for (const auto& [step, names] : byStep)
        detail += (detail.empty() ? "" : "; ") + std::string("step ") + std::to_string(step) + ": " + std::to_string(names.size()) + " parameter(s) (" + names.front() + (names.size() > 1 ? ", ..." : "") + ")";
    Finding f = makeFinding("optimizer.steps-differ", "the optimizer's parameters are at different step counts: " + detail,
        hintWithNext("Parameters that skip updates (no gradient in some steps, late-unfrozen layers) lag behind; if none "
                     "should, part of the optimizer state comes from another run or another save (recovery guide §2.2 on optimizer state).", Component::Optimizer));
    f.evidence.push_back(evidence("steps", detail, s.optimizer->from));
    out.push_back(std::move(f));
}

// A global step read from the checkpoint's name alone is a naming convention, not a record: a name
// that is a whole multiple of the optimizer's step counts batches under accumulation, and any other
// disagreement rests on the name counting updates (a warning, not proof).
void stepVsGlobalStep(const TrainingState& s, Findings& out)
{
    const auto opt = optimizerStep(s);
    if (!opt || !s.globalStep)
        return;
    if (s.globalStepFromName && opt->step > 0 && *s.globalStep % opt->step == 0)
        return;
    const int64_t global = *s.globalStep, step = opt->step;
    const int64_t accumulation = gradientAccumulation(s);
    ScalerAccount scaler = accountScaler(s);
    const Evidence stepEv = evidence("optimizer step", std::to_string(step), opt->from);
    const Evidence globalEv = globalStepEvidence(s);
    auto add = [&](Severity severity, std::string message, std::string hint, const std::vector<Evidence>& extra = {}) {
        Finding f = makeFinding("optimizer.step-vs-global-step", std::move(message), std::move(hint));
        f.severity = severity;
        if (severity == Severity::Error && s.globalStepFromName) {
            f.severity = Severity::Warning;
            f.assumes = "the checkpoint's name (" + std::to_string(global) + ") counts optimizer updates; no file records a global step";
        }
        f.evidence = {stepEv, globalEv};
        f.evidence.insert(f.evidence.end(), extra.begin(), extra.end());
        out.push_back(std::move(f));
    };
    const int64_t skipped = global - step;
    if (skipped == 0)
        return;
    if (accumulation > 1 && (step * accumulation == global || global * accumulation == step))
        return; // one counter counts micro-batches, the other optimizer updates: consistent
    const StateField* counted = skippedStepsField(s);
    if (counted && skipped == static_cast<int64_t>(*toNumber(counted->value)))
        return; // the loop counts its skipped updates (scaler.skipped-steps reports them)
    if (skipped > 0 && scaler.known && skipped >= scaler.minSkips && skipped <= scaler.maxSkips)
        return; // scaler.skipped-steps explains it (reported by the scaler rules)
    if (skipped > 0 && !counted && scaler.present && !scaler.disabled) {
        // An enabled GradScaler can skip any number of updates; how many it did depends on
        // init_scale, which its state dict does not record (docs/conventions.md §1).
        Finding f = makeFinding("optimizer.step-vs-global-step",
            "the optimizer is " + std::to_string(skipped) + " update(s) behind the global step " + std::to_string(global)
                + "; the fp16 scaler may have skipped them, which the files cannot confirm"
                + (scaler.known ? "" : " (under the default init_scale 65536 its scale does not account for them)"),
            hintWithNext("Whether these are overflow skips or an optimizer that restarted is decided by GradScaler's init_scale "
                         "(not saved) or by a count of skipped steps the loop saves; across two checkpoints "
                         "optimizer.reset and scaler.unreachable compare the figures (recovery guide §3.2 on the AMP grad scaler as training state).",
                         Component::Optimizer));
        f.severity = Severity::Info;
        f.assumes = kAssumesDefaultInitScale;
        f.evidence = {stepEv, globalEv};
        f.evidence.insert(f.evidence.end(), scaler.evidence.begin(), scaler.evidence.end());
        out.push_back(std::move(f));
        return;
    }
    if (skipped < 0) {
        add(Severity::Error,
            "the optimizer took " + std::to_string(step) + " steps, more than the global step " + std::to_string(global),
            hintWithNext("The global step was not restored on resume (the loop restarted counting) while the optimizer "
                         "was, or the optimizer state comes from a later save (recovery guide §2.2 on optimizer state and §6.1 on consistent checkpoints).", Component::Optimizer));
        return;
    }
    if (counted)
        scaler = ScalerAccount{}; // the loop's own count is what the step must match
    std::string expected = counted ? std::to_string(global - static_cast<int64_t>(*toNumber(counted->value))) + " (global step less "
                                         + counted->value + " skipped_steps)"
                         : scaler.known
        ? std::to_string(global - scaler.maxSkips) + (scaler.minSkips != scaler.maxSkips ? " to " + std::to_string(global - scaler.minSkips) : "")
        : std::to_string(global);
    std::string why = counted ? "" : scaler.known ? " (the scaler accounts for " + (scaler.minSkips == scaler.maxSkips ? std::to_string(scaler.minSkips) : std::to_string(scaler.minSkips) + "-" + std::to_string(scaler.maxSkips)) + " skipped update(s))"
                                   : scaler.present ? "" : " (no GradScaler state to account for skipped updates)";
    add(Severity::Error,
        "the optimizer's step is " + std::to_string(step) + " at global step " + std::to_string(global) + "; expected "
            + expected + why,
        hintWithNext("The optimizer state restarted or is stale: the resume built a fresh optimizer and never called "
                     "optimizer.load_state_dict, a try/except swallowed a param-group mismatch, or a weights-only resume "
                     "path was used to continue training; the first updates after it ran with zero moments (recovery guide §2.2 on optimizer state and §9.2 on building objects before loading state, "
                     "recovery guide §10.1 on diagnosing a loss jump after a resume, row \"optimizer state not restored\").", Component::Optimizer),
        scaler.evidence);
}

} // namespace

void optimizerRules(const CheckpointFacts& c, Findings& out)
{
    const TrainingState& s = c.state;
    if (!s.optimizer)
        return;
    stateMissing(s, out);
    paramsWithoutState(s, out);
    unmatchedParams(s, out);
    momentShapes(s, out);
    stepsDiffer(s, out);
    stepVsGlobalStep(s, out);
}

} // namespace ckpt::rules
