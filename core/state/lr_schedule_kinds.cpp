// SPDX-License-Identifier: MIT
// The schedulers read by their own rules rather than torch's closed formulas: OneCycleLR and CyclicLR,
// lambdas (transformers' get_scheduler among them), and the frameworks' own schedulers (Megatron's
// OptimizerParamScheduler, DeepSpeed's engine schedules).
#include "lr_schedule_builder.h"
#include "lr_schedule_values.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace ckpt {

// The fields under their current names or the aliases older checkpoints use; the LR at warmup's
// start (args.lr_warmup_init) is not saved: the reader of the args passes it as init_lr.
void LrScheduleBuilder::readMegatron(LrSchedule& s, NodeId sd)
{
    auto first = [&](std::initializer_list<const char*> keys) {
        for (const char* k : keys) {
            if (g.get(sd, k) != kNoNode)
                return g.get(sd, k);
        }
        return kNoNode;
    };
    auto& wd = s.m_warmupDecay;
    const auto maxLr = numberOf(g, first({"max_lr", "start_lr"}));
    wd.minLr = numberOf(g, first({"min_lr"})).value_or(0);
    wd.initLr = numberOf(g, first({"init_lr"})).value_or(0);
    wd.warmup = integerOf(g, first({"lr_warmup_steps", "warmup_iter", "warmup_steps"})).value_or(0);
    wd.decay = integerOf(g, first({"lr_decay_steps", "end_iter", "decay_steps"})).value_or(0);
    const NodeId style = first({"lr_decay_style", "decay_style"});
    wd.style = g.valid(style) && g[style].kind == Kind::String ? g[style].text : "";
    if (auto n = integerOf(g, first({"num_steps", "num_iters"})))
        s.lastEpoch = *n;
    if (maxLr)
        s.baseLrs = {*maxLr};
    static const std::set<std::string> styles = {"constant", "linear", "cosine", "inverse-square-root"};
    if (!maxLr)
        notRecomputable(s, "max_lr is not saved");
    else if (!styles.contains(wd.style))
        notRecomputable(s, "decay style '" + wd.style + "' needs settings the scheduler does not save (WSD: args.lr_wsd_decay_iters)");
    else if (wd.style != "constant" && wd.style != "inverse-square-root" && wd.decay <= wd.warmup)
        notRecomputable(s, "lr_decay_steps is not past lr_warmup_steps");
}

void LrScheduleBuilder::readOneCycle(LrSchedule& s, NodeId sd)
{
    s.m_totalSteps = needInt(s, sd, "total_steps").value_or(0);
    // phases: end_step plus the names of the param-group keys they anneal between
    const NodeId phases = g.get(sd, "_schedule_phases");
    std::string phaseText;
    if (isSequence(g, phases) && !g[phases].items.empty()) {
        double start = 0;
        for (NodeId p : g[phases].items) {
            LrSchedule::Phase ph;
            const auto end = numberOf(g, g.get(p, "end_step"));
            const NodeId a = g.get(p, "start_lr"), b = g.get(p, "end_lr");
            if (!end || !g.valid(a) || g[a].kind != Kind::String || !g.valid(b) || g[b].kind != Kind::String) {
                notRecomputable(s, "_schedule_phases has an unexpected layout");
                break;
            }
            ph.endStep = *end;
            ph.startKey = g[a].text;
            ph.endKey = g[b].text;
            phaseText += (phaseText.empty() ? "" : ", ") + formatNumber(start) + ".." + formatNumber(*end) +
                         ": " + ph.startKey + " -> " + ph.endKey;
            start = *end;
            s.m_phases.push_back(ph);
        }
    } else {
        notRecomputable(s, "_schedule_phases is not a list of phases");
    }
    s.fields.emplace_back("phases", phaseText);

    // the anneal function: a string from torch 2.4 on, a pickled bound method before
    const NodeId type = g.get(sd, "_anneal_func_type");
    const NodeId method = g.get(sd, "anneal_func");
    NodeId boundTo = kNoNode;
    std::string anneal;
    if (g.valid(type) && g[type].kind == Kind::String) {
        anneal = g[type].text;
    } else if (g.valid(method) && g[method].kind == Kind::Object) {
        const std::string& text = g[method].text;
        if (text.ends_with("._annealing_cos"))
            anneal = "cos";
        else if (text.ends_with("._annealing_linear"))
            anneal = "linear";
        boundTo = g[method].b;
    }
    if (anneal != "cos" && anneal != "linear")
        notRecomputable(s, "the anneal strategy (cos or linear) is not recognisable in the state");
    s.m_annealCos = anneal == "cos";
    s.fields.emplace_back("anneal", anneal.empty() ? "?" : anneal);

    // max_lr/min_lr (and initial_lr) are param-group entries of the optimizer: torch <= 2.3 pickles
    // the whole scheduler, optimizer included, through the bound method; later ones need the
    // optimizer state_dict saved beside the scheduler
    NodeId groups = kNoNode;
    if (g.valid(boundTo))
        groups = attributeOf(g, attributeOf(g, boundTo, "optimizer"), "param_groups");
    if (!isSequence(g, groups) && g.valid(optimizerState))
        groups = attributeOf(g, optimizerState, "param_groups");
    std::vector<std::string> keys;
    for (const auto& ph : s.m_phases)
        for (const std::string* key : {&ph.startKey, &ph.endKey})
            if (std::find(keys.begin(), keys.end(), *key) == keys.end())
                keys.push_back(*key);
    if (!isSequence(g, groups)) {
        notRecomputable(s, "OneCycleLR keeps max_lr and min_lr in the optimizer's param_groups, which this "
                           "state does not carry (torch >= 2.4 saves no bound method); read it together "
                           "with the optimizer state_dict");
        return;
    }
    const auto& groupItems = g[groups].items;
    if (groupItems.size() != s.baseLrs.size())
        notRecomputable(s, "the optimizer has " + std::to_string(groupItems.size()) + " param groups, the "
                           "scheduler " + std::to_string(s.baseLrs.size()));
    for (std::size_t gi = 0; gi < groupItems.size(); ++gi) {
        std::vector<std::pair<std::string, double>> values;
        for (const std::string& key : keys) {
            auto v = numberOf(g, g.get(groupItems[gi], key));
            if (!v && key == "initial_lr" && gi < s.baseLrs.size())
                v = s.baseLrs[gi];
            if (!v) {
                notRecomputable(s, "param group " + std::to_string(gi) + " has no number " + key);
                continue;
            }
            values.emplace_back(key, *v);
        }
        s.m_groupValues.push_back(std::move(values));
    }
    for (const std::string& key : keys) {
        if (key == "initial_lr")
            continue;
        std::vector<double> column;
        for (const auto& values : s.m_groupValues)
            for (const auto& [k, v] : values)
                if (k == key)
                    column.push_back(v);
        s.fields.emplace_back(key, formatNumbers(column));
    }
}

void LrScheduleBuilder::readCyclic(LrSchedule& s, NodeId sd)
{
    s.m_totalSize = need(s, sd, "total_size").value_or(1);
    s.m_stepRatio = need(s, sd, "step_ratio").value_or(0.5);
    s.m_gamma = need(s, sd, "gamma").value_or(1);
    if (auto m = numbersOf(g, g.get(sd, "max_lrs")))
        s.m_maxLrs = *m;
    else
        notRecomputable(s, "max_lrs is not a list of numbers");
    if (s.m_maxLrs.size() != s.baseLrs.size())
        notRecomputable(s, "max_lrs and base_lrs differ in length");
    const NodeId mode = g.get(sd, "mode");
    const NodeId scaleMode = g.get(sd, "scale_mode");
    const NodeId custom = g.get(sd, "_scale_fn_custom");
    s.m_mode = g.valid(mode) && g[mode].kind == Kind::String ? g[mode].text : "";
    s.m_scaleMode = g.valid(scaleMode) && g[scaleMode].kind == Kind::String ? g[scaleMode].text : "";
    if (g.valid(custom) && g[custom].kind != Kind::None)
        notRecomputable(s, "CyclicLR uses a custom scale_fn, whose code is not saved");
    else if (s.m_mode != "triangular" && s.m_mode != "triangular2" && s.m_mode != "exp_range")
        notRecomputable(s, "unknown CyclicLR mode '" + s.m_mode + "'");
    else if (s.m_scaleMode != "cycle" && s.m_scaleMode != "iterations")
        notRecomputable(s, "unknown CyclicLR scale_mode '" + s.m_scaleMode + "'");
    if (s.m_totalSize <= 0 || s.m_stepRatio <= 0 || s.m_stepRatio >= 1)
        notRecomputable(s, "total_size/step_ratio out of range");
}

// The engine steps its scheduler once per engine.step() from last_batch_iteration -1 (microsoft/DeepSpeed
// @eb07d41f deepspeed/runtime/engine.py _take_model_step, lr_schedules.py): after n updates it holds
// n - 1, so the position in updates is last_batch_iteration + 1. The schedule's kind and parameters are
// in the checkpoint's ds_config, not here: only the position is known.
void LrScheduleBuilder::readDeepSpeed(LrSchedule& s, NodeId sd)
{
    if (auto n = integerOf(g, g.get(sd, "last_batch_iteration")))
        s.lastEpoch = *n + 1;
    notRecomputable(s, "DeepSpeed's schedulers save only last_batch_iteration; the schedule (WarmupLR, WarmupDecayLR...) "
                       "is in the config");
}

// transformers' get_scheduler builds a LambdaLR over functools.partial(_get_<type>_..._lr_lambda,
// num_warmup_steps=W, num_training_steps=T), saved as an empty dict (transformers@c26b2a29e500
// src/transformers/optimization.py; the constant schedule's plain function as None). The state reader
// adds the Trainer's type, W and T (training_args.bin, trainer_state.json: readTransformersSchedule)
// under "transformers.*" keys; with them the four warmup-then-decay formulas are known.
bool LrScheduleBuilder::readTransformersLambda(LrSchedule& s, NodeId sd, NodeId lambdas)
{
    const NodeId type = g.get(sd, "transformers.lr_scheduler_type");
    const auto warmup = integerOf(g, g.get(sd, "transformers.warmup_steps"));
    const auto total = integerOf(g, g.get(sd, "transformers.max_steps"));
    if (!g.valid(type) || g[type].kind != Kind::String || !warmup || !total || !isSequence(g, lambdas))
        return false;
    static const std::set<std::string> known = {"linear", "cosine", "constant", "constant_with_warmup"};
    if (!known.contains(g[type].text))
        return false;
    for (NodeId item : g[lambdas].items) {
        const bool partial = g.valid(item) && g[item].kind == Kind::Dict && g[item].items.empty();
        const bool function = g.valid(item) && g[item].kind == Kind::None;
        if (!partial && !function)
            return false; // a user's callable object: not the Trainer's schedule
    }
    s.kind = "LambdaLR (transformers " + g[type].text + ")";
    s.m_warmupDecay.style = g[type].text;
    s.m_warmupDecay.warmup = *warmup;
    s.m_warmupDecay.total = *total;
    s.fields.emplace_back("transformers schedule", g[type].text + ", " + std::to_string(*warmup) + " warmup step(s) of "
                                                       + std::to_string(*total) + " (training_args.bin, trainer_state.json max_steps)");
    return true;
}

void LrScheduleBuilder::readLambdas(LrSchedule& s, NodeId sd)
{
    const NodeId l = g.get(sd, "lr_lambdas");
    std::string text = "[";
    if (isSequence(g, l)) {
        for (std::size_t i = 0; i < g[l].items.size(); ++i) {
            const NodeId item = g[l].items[i];
            text += i ? ", " : "";
            if (g.valid(item) && g[item].kind == Kind::None)
                text += "function (not saved)";
            else
                text += "callable object " + display(g, item);
        }
    }
    s.fields.emplace_back("lr_lambdas", text + "]");
    if (readTransformersLambda(s, sd, l))
        return;
    notRecomputable(s, "LambdaLR/MultiplicativeLR (their states have the same keys): the lr_lambda functions "
                       "are not saved (only a callable object's attributes are), so only the recorded LR is "
                       "known");
}

} // namespace ckpt
