// SPDX-License-Identifier: MIT
// readLrSchedule: a scheduler recognised by the keys of its state_dict, and its parameters read.
// Its graph readers are lr_schedule_values.cpp's, the LR formulas lr_schedule_formulas.cpp's.
#include "ckpt/state/lr_schedule.h"

#include "lr_schedule_builder.h"
#include "lr_schedule_values.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace ckpt {
namespace {

using detail::kMaxNesting;

// Keys every LRScheduler carries, or that a kind shows in its own way: not listed as hyperparameters.
bool isCommonKey(std::string_view key)
{
    static const char* const common[] = {"base_lrs",  "last_epoch",  "verbose",          "_step_count",
                                         "_get_lr_called_within_step", "_last_lr",        "_is_initial",
                                         "_schedulers", "anneal_func", "_anneal_func_type", "_schedule_phases",
                                         "lr_lambdas", "_scale_fn_ref", "milestones", "_milestones"};
    return std::find(std::begin(common), std::end(common), key) != std::end(common);
}

bool isMultiplicative(const std::string& kind)
{
    return kind == "StepLR" || kind == "MultiStepLR" || kind == "ExponentialLR" || kind == "ConstantLR" ||
           kind == "LinearLR" || kind == "PolynomialLR";
}

} // namespace

std::optional<LrSchedule> LrScheduleBuilder::read(NodeId sd, int depth)
{
    if (!isDict(g, sd) || depth > kMaxNesting || budget <= 0)
        return std::nullopt;
    --budget;
    auto h = [&](std::string_view k) { return has(sd, k); };
    const bool scheduler = h("last_epoch") && h("base_lrs");

    LrSchedule s;
    if (h("_schedulers") && h("_milestones") && h("last_epoch"))
        s.kind = "SequentialLR";
    else if (h("_schedulers") && h("_last_lr") && !h("_milestones"))
        s.kind = h("_step_count") ? "unknown" : "ChainedScheduler"; // newest ParamwiseScheduler: unsupported
    else if (h("mode") && h("patience") && h("cooldown") && h("num_bad_epochs") && h("last_epoch"))
        s.kind = "ReduceLROnPlateau";
    // Megatron-LM's OptimizerParamScheduler.state_dict (megatron/core/optimizer_param_scheduler.py at
    // d98e8a64): no last_epoch, no base_lrs; num_steps counts samples. load_state_dict accepts the
    // older names too (start_lr, warmup_iter/warmup_steps, decay_style, end_iter/decay_steps, num_iters).
    else if ((h("max_lr") || h("start_lr")) && (h("num_steps") || h("num_iters")) && (h("lr_decay_style") || h("decay_style")))
        s.kind = "Megatron OptimizerParamScheduler";
    else if (h("last_batch_iteration") && g[sd].items.size() == 2)
        s.kind = "DeepSpeed scheduler"; // its state is this one key; the schedule itself is in ds_config
    else if (!scheduler)
        return std::nullopt;
    // NeMo's schedulers are _LRSchedulers whose state is their __dict__ (NVIDIA/NeMo@8cfedd72
    // nemo/core/optim/lr_scheduler.py). Only CosineAnnealing derives from WarmupAnnealHoldPolicy,
    // the one with constant_steps and decay_steps; the WarmupPolicy family (WarmupAnnealing,
    // SquareRootAnnealing, PolynomialDecayAnnealing...) all save max_steps, warmup_steps, min_lr.
    else if (h("max_steps") && h("warmup_steps") && h("constant_steps") && h("decay_steps") && h("min_lr"))
        s.kind = "NeMo CosineAnnealing";
    else if (h("max_steps") && h("warmup_steps") && h("min_lr"))
        s.kind = "NeMo WarmupPolicy";
    else if (h("lr_lambdas"))
        s.kind = "LambdaLR";
    else if (h("total_steps") && h("_schedule_phases"))
        s.kind = "OneCycleLR";
    else if (h("T_0") && h("T_i") && h("T_mult") && h("T_cur"))
        s.kind = "CosineAnnealingWarmRestarts";
    else if (h("T_max") && h("eta_min"))
        s.kind = "CosineAnnealingLR";
    else if (h("max_lrs") && h("total_size") && h("step_ratio"))
        s.kind = "CyclicLR";
    else if (h("start_factor") && h("end_factor") && h("total_iters"))
        s.kind = "LinearLR";
    else if (h("factor") && h("total_iters"))
        s.kind = "ConstantLR";
    else if (h("total_iters") && h("power"))
        s.kind = "PolynomialLR";
    else if (h("milestones") && h("gamma"))
        s.kind = "MultiStepLR";
    else if (h("step_size") && h("gamma"))
        s.kind = "StepLR";
    else if (h("gamma"))
        s.kind = "ExponentialLR";

    readCommon(s, sd);
    listFields(s, sd);
    s.recomputable = true; // until a reader below finds a reason it is not
    if (s.kind == "unknown")
        notRecomputable(s, "the keys match no scheduler this reader knows");
    else if (s.kind == "SequentialLR" || s.kind == "ChainedScheduler")
        readComposite(s, sd, depth);
    else if (s.kind == "ReduceLROnPlateau")
        notRecomputable(s, "ReduceLROnPlateau lowers the LR when a validation metric stops improving; the "
                           "metric history is not saved, so only the recorded LR is known");
    else if (s.kind == "LambdaLR")
        readLambdas(s, sd);
    else if (s.kind == "DeepSpeed scheduler")
        readDeepSpeed(s, sd);
    else if (s.kind == "NeMo WarmupPolicy")
        notRecomputable(s, "NeMo's warmup-policy schedulers (WarmupAnnealing, SquareRootAnnealing, PolynomialDecayAnnealing, "
                           "NoamHoldAnnealing...) save the same keys; the class is named in the model config "
                           "(optim.sched.name), not in the state");
    else
        readFormula(s, sd);
    if (s.recomputable && s.baseLrs.empty())
        notRecomputable(s, "base_lrs is empty");
    return s;
}

void LrScheduleBuilder::readCommon(LrSchedule& s, NodeId sd)
{
    bool tensors = false;
    if (const NodeId b = g.get(sd, "base_lrs"); b != kNoNode) {
        if (auto v = numbersOf(g, b, &tensors))
            s.baseLrs = *v;
    }
    if (const NodeId l = g.get(sd, "_last_lr"); l != kNoNode) {
        if (auto v = numbersOf(g, l, &tensors))
            s.lastLr = *v;
    }
    if (auto e = integerOf(g, g.get(sd, "last_epoch")))
        s.lastEpoch = *e;
    if (auto c = integerOf(g, g.get(sd, "_step_count")))
        s.stepCount = *c;
    if (tensors)
        s.warning = "learning rates are saved as tensors (tensor LR); their values are in the tensor data, "
                    "not in the state dict";
}

void LrScheduleBuilder::listFields(LrSchedule& s, NodeId sd)
{
    const Node& d = g[sd];
    for (std::size_t i = 0; i + 1 < d.items.size(); i += 2) {
        const Node& k = g[d.items[i]];
        if (k.kind != Kind::String || isCommonKey(k.text))
            continue;
        s.fields.emplace_back(k.text, display(g, d.items[i + 1]));
    }
}

// A required number; records why not when absent or not a number.
std::optional<double> LrScheduleBuilder::need(LrSchedule& s, NodeId sd, const char* key)
{
    auto v = numberOf(g, g.get(sd, key));
    if (!v)
        notRecomputable(s, std::string(key) + (has(sd, key) ? " is not a number" : " is missing"));
    return v;
}

std::optional<int64_t> LrScheduleBuilder::needInt(LrSchedule& s, NodeId sd, const char* key)
{
    auto v = integerOf(g, g.get(sd, key));
    if (!v)
        notRecomputable(s, std::string(key) + (has(sd, key) ? " is not an integer" : " is missing"));
    return v;
}

void LrScheduleBuilder::readFormula(LrSchedule& s, NodeId sd)
{
    if (s.baseLrs.empty() && !s.warning.empty()) {
        notRecomputable(s, s.warning);
        return;
    }
    const std::string& k = s.kind;
    auto positive = [&](double v, const char* name) {
        if (!(v > 0))
            notRecomputable(s, std::string(name) + " is not positive");
    };
    auto& wd = s.m_warmupDecay;
    if (k == "NeMo CosineAnnealing") {
        wd.total = needInt(s, sd, "max_steps").value_or(0);
        wd.warmup = needInt(s, sd, "warmup_steps").value_or(0);
        wd.constant = needInt(s, sd, "constant_steps").value_or(0);
        wd.decay = needInt(s, sd, "decay_steps").value_or(0);
        wd.minLr = need(s, sd, "min_lr").value_or(0);
        positive(static_cast<double>(wd.total), "max_steps");
    } else if (k == "Megatron OptimizerParamScheduler") {
        readMegatron(s, sd);
    } else if (k == "StepLR") {
        s.m_stepSize = needInt(s, sd, "step_size").value_or(1);
        s.m_gamma = need(s, sd, "gamma").value_or(1);
        positive(static_cast<double>(s.m_stepSize), "step_size");
    } else if (k == "MultiStepLR") {
        s.m_gamma = need(s, sd, "gamma").value_or(1);
        const NodeId m = g.get(sd, "milestones");
        std::vector<int64_t> ms;
        bool ok = g.valid(m);
        if (ok && g[m].kind == Kind::Dict) { // collections.Counter: milestone -> multiplicity
            const Node& c = g[m];
            for (std::size_t i = 0; ok && i + 1 < c.items.size(); i += 2) {
                const auto at = integerOf(g, c.items[i]);
                const auto count = integerOf(g, c.items[i + 1]);
                ok = at && count && *count >= 0 && *count < 1'000'000;
                for (int64_t j = 0; ok && j < *count; ++j)
                    ms.push_back(*at);
            }
        } else if (ok && isSequence(g, m)) {
            for (NodeId item : g[m].items) {
                const auto at = integerOf(g, item);
                ok = ok && at;
                if (at)
                    ms.push_back(*at);
            }
        } else {
            ok = false;
        }
        if (!ok)
            notRecomputable(s, "milestones is not a Counter or list of integers");
        std::sort(ms.begin(), ms.end());
        s.m_milestones = ms;
        std::string text = "[";
        for (std::size_t i = 0; i < ms.size(); ++i)
            text += (i ? ", " : "") + std::to_string(ms[i]);
        s.fields.insert(s.fields.begin(), {"milestones", text + "]"});
    } else if (k == "ExponentialLR") {
        s.m_gamma = need(s, sd, "gamma").value_or(1);
    } else if (k == "CosineAnnealingLR") {
        s.m_tMax = need(s, sd, "T_max").value_or(1);
        s.m_etaMin = need(s, sd, "eta_min").value_or(0);
        if (s.m_tMax == 0)
            notRecomputable(s, "T_max is 0");
    } else if (k == "CosineAnnealingWarmRestarts") {
        s.m_t0 = needInt(s, sd, "T_0").value_or(1);
        s.m_tMult = needInt(s, sd, "T_mult").value_or(1);
        s.m_etaMin = need(s, sd, "eta_min").value_or(0);
        if (s.m_t0 <= 0 || s.m_tMult < 1)
            notRecomputable(s, "T_0 must be positive and T_mult at least 1");
        else if (s.recomputable && s.lastEpoch >= 0) {
            // integer stepping from 0 must land on the saved cycle position
            const auto tCur = numberOf(g, g.get(sd, "T_cur"));
            const auto tI = numberOf(g, g.get(sd, "T_i"));
            const auto [cur, len] = s.warmRestartPosition(s.lastEpoch);
            if (tCur && tI && (*tCur != static_cast<double>(cur) || *tI != static_cast<double>(len)))
                s.warning = "the saved T_cur/T_i (" + formatNumber(*tCur) + "/" + formatNumber(*tI) +
                            ") are not where stepping one epoch at a time would be at last_epoch " +
                            std::to_string(s.lastEpoch) + " (" + std::to_string(cur) + "/" +
                            std::to_string(len) + "): step(epoch) was called with other epochs";
        }
    } else if (k == "LinearLR") {
        s.m_startFactor = need(s, sd, "start_factor").value_or(1);
        s.m_endFactor = need(s, sd, "end_factor").value_or(1);
        s.m_totalIters = needInt(s, sd, "total_iters").value_or(1);
        positive(static_cast<double>(s.m_totalIters), "total_iters");
    } else if (k == "ConstantLR") {
        s.m_factor = need(s, sd, "factor").value_or(1);
        s.m_totalIters = needInt(s, sd, "total_iters").value_or(0);
    } else if (k == "PolynomialLR") {
        s.m_totalIters = needInt(s, sd, "total_iters").value_or(1);
        s.m_power = need(s, sd, "power").value_or(1);
        positive(static_cast<double>(s.m_totalIters), "total_iters");
    } else if (k == "OneCycleLR") {
        readOneCycle(s, sd);
    } else if (k == "CyclicLR") {
        readCyclic(s, sd);
    }
}

void LrScheduleBuilder::readComposite(LrSchedule& s, NodeId sd, int depth)
{
    const bool sequential = s.kind == "SequentialLR";
    const NodeId list = g.get(sd, "_schedulers");
    std::string names;
    if (isSequence(g, list)) {
        for (NodeId child : g[list].items) {
            auto c = read(child, depth + 1);
            if (!c) {
                c = LrSchedule{};
                c->why = "not a scheduler state_dict";
            }
            names += (names.empty() ? "" : ", ") + c->kind;
            s.children.push_back(std::move(*c));
        }
    }
    s.fields.insert(s.fields.begin(), {"schedulers", names});
    if (s.children.empty()) {
        notRecomputable(s, "_schedulers holds no scheduler state");
        return;
    }
    const LrSchedule& first = s.children.front();
    if (s.baseLrs.empty())
        s.baseLrs = first.baseLrs;
    for (std::size_t i = 0; i < s.children.size(); ++i) {
        const LrSchedule& c = s.children[i];
        if (!c.recomputable)
            notRecomputable(s, "scheduler " + std::to_string(i) + " (" + c.kind + ") cannot be recomputed: " + c.why);
        else if (c.kind == "SequentialLR" || c.kind == "ChainedScheduler")
            notRecomputable(s, "nested " + c.kind + " inside " + s.kind + " (torch versions step it differently)");
        else if (c.baseLrs.size() != first.baseLrs.size())
            notRecomputable(s, "the schedulers disagree on the number of param groups");
    }
    if (sequential) {
        const NodeId m = g.get(sd, "_milestones");
        bool ok = isSequence(g, m);
        if (ok) {
            for (NodeId item : g[m].items) {
                const auto v = integerOf(g, item);
                ok = ok && v;
                if (v)
                    s.m_milestones.push_back(*v);
            }
        }
        if (!ok)
            notRecomputable(s, "_milestones is not a list of integers");
        else if (!std::is_sorted(s.m_milestones.begin(), s.m_milestones.end()))
            notRecomputable(s, "_milestones is not in increasing order");
        else if (s.m_milestones.size() + 1 != s.children.size())
            notRecomputable(s, "SequentialLR needs one milestone fewer than schedulers");
        s.fields.insert(s.fields.begin() + 1, {"_milestones", display(g, m)});
        // a scheduler entered at a milestone is restarted with step(0): CosineAnnealingLR's
        // recursion then starts from its closed form at 0
        for (std::size_t i = 1; i < s.children.size(); ++i)
            s.children[i].m_cosineStartsClosedForm = true;
    } else {
        // ChainedScheduler: every child multiplies the LR by its own factor, so only schedulers
        // whose chainable form is a pure factor compose into a closed form
        for (const LrSchedule& c : s.children) {
            if (c.recomputable && !isMultiplicative(c.kind))
                notRecomputable(s, "ChainedScheduler over " + c.kind + " (only StepLR, MultiStepLR, ExponentialLR, "
                                   "ConstantLR, LinearLR and PolynomialLR compose into a formula)");
            else if (c.lastEpoch != first.lastEpoch)
                notRecomputable(s, "the chained schedulers are at different positions");
        }
        s.lastEpoch = first.lastEpoch;
    }
}


std::optional<LrSchedule> readLrSchedule(const ValueGraph& graph, NodeId stateDict, NodeId optimizerState)
{
    LrScheduleBuilder builder{graph, optimizerState};
    auto s = builder.read(stateDict, 0);
    if (!s || !s->recomputable || s->lastEpoch < 0 || s->lastLr.size() != s->baseLrs.size())
        return s;
    // the formula should give back the recorded LR; it does not when something else changed the LR
    // (another scheduler on the same optimizer, a manual edit, a resume with other settings)
    try {
        const std::vector<double> lr = s->lrAt(s->lastEpoch);
        for (std::size_t g = 0; g < lr.size(); ++g) {
            if (!closeTo(lr[g], s->lastLr[g], 1e-9)) {
                if (!s->warning.empty())
                    s->warning += "; ";
                s->warning += "the recorded _last_lr " + formatNumbers(s->lastLr) + " differs from the formula at "
                              "last_epoch " + std::to_string(s->lastEpoch) + " " + formatNumbers(lr) +
                              ": the LR was also changed outside this scheduler";
                break;
            }
        }
    } catch (const std::exception& e) {
        if (!s->warning.empty())
            s->warning += "; ";
        s->warning += e.what();
    }
    return s;
}

} // namespace ckpt
