// SPDX-License-Identifier: MIT
// AMP grad scaler state A_t (recovery guide §3.2): usable, explaining the optimizer updates
// overflows skipped where the figures allow it, and saved at all when fp16 training needs it.
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"
#include "scaler_account.h"

namespace ckpt::rules {
namespace {

// Only what the state proves by itself (an unusable scale, a negative tracker: error), or what
// breaks GradScaler's own bookkeeping (a tracker past growth_interval: warning, it means the
// interval was changed or the values edited). Reachability from an initial scale is not judged
// here: init_scale is not saved (docs/conventions.md §1); scaler.unreachable compares two saves.
void state(const TrainingState& s, Findings& out)
{
    if (!s.scaler || !s.scaler->enabled)
        return;
    const ScalerPart& sc = *s.scaler;
    auto keyed = [&](const char* key) {
        Provenance p = sc.from;
        p.key.push_back(std::string(key));
        return p;
    };
    if (const std::string defect = scalerDefect(sc); !defect.empty()) {
        Finding f = makeFinding("scaler.state", "the AMP scaler state is unusable: " + defect,
            hintWithNext("A scale that is inf, NaN or 0 makes every step overflow or vanish: the run diverged under fp16 "
                         "(old CUDA kernels could grow the scale to inf), or the state was damaged; resume from an earlier "
                         "checkpoint (recovery guide §3.2 on the AMP grad scaler as training state).", Component::Scaler));
        if (sc.scale)
            f.evidence.push_back(evidence("scale", numberText(*sc.scale), keyed("scale")));
        if (sc.growthTracker)
            f.evidence.push_back(evidence("_growth_tracker", std::to_string(*sc.growthTracker), keyed("_growth_tracker")));
        out.push_back(std::move(f));
        return;
    }
    if (sc.growthTracker && sc.growthInterval && *sc.growthInterval > 0 && *sc.growthTracker >= *sc.growthInterval) {
        Finding f = makeFinding("scaler.state",
            "_growth_tracker " + std::to_string(*sc.growthTracker) + " reached growth_interval "
                + std::to_string(*sc.growthInterval) + " without the scale growing",
            hintWithNext("GradScaler grows the scale and restarts the tracker when it equals growth_interval, so a tracker "
                         "at or past it means the interval was lowered after the tracker had counted past it (set_growth_interval, "
                         "or a state loaded into a scaler built with another interval) or the values were edited (recovery "
                         "guide §3.2 on the AMP grad scaler as training state).", Component::Scaler));
        f.severity = Severity::Warning;
        f.assumes = "the scaler was updated by torch's _amp_update_scale_ with the growth_interval it saved";
        f.evidence.push_back(evidence("_growth_tracker", std::to_string(*sc.growthTracker), keyed("_growth_tracker")));
        f.evidence.push_back(evidence("growth_interval", std::to_string(*sc.growthInterval), keyed("growth_interval")));
        out.push_back(std::move(f));
    }
}

// A dynamic loss scaler's state without the counter its growth runs on: GradScaler's
// _growth_tracker, DeepSpeed's DynamicLossScaler cur_iter and last_overflow_iter (the ZeRO optimizer
// saves the scaler object itself, DeepSpeed@38327e07 deepspeed/runtime/zero/stage_1_and_2.py
// `state_dict[LOSS_SCALER] = self.loss_scaler`, and its growth runs on those two,
// deepspeed/runtime/fp16/loss_scaler.py update_scale). Without it a resume restarts the growth
// window, so the scale after a restart depends on when the job restarted (story metaseq#3, whose
// _iter and _last_overflow_iter were not checkpointed).
void countersMissing(const TrainingState& s, Findings& out)
{
    if (!s.scaler || !s.scaler->enabled || !s.scaler->scale || !s.scaler->growthInterval || s.scaler->growthTracker)
        return;
    Finding f = makeFinding("scaler.counters-missing",
        "the dynamic loss scaler saved its scale " + numberText(*s.scaler->scale) + " and growth interval "
            + std::to_string(*s.scaler->growthInterval) + " but not the counter of clean steps since its last overflow",
        hintWithNext("A resume restarts the growth window: the next scale increase comes growth_interval steps after the "
                     "restart instead of after the last overflow, so the loss scale depends on when the job restarted "
                     "(story metaseq#3; recovery guide §3.2 on the AMP grad scaler as training state).", Component::Scaler));
    f.evidence.push_back(evidence("scale", numberText(*s.scaler->scale), s.scaler->from));
    f.evidence.push_back(evidence("growth counter", "absent (_growth_tracker, or cur_iter and last_overflow_iter)", s.scaler->from));
    out.push_back(std::move(f));
}

void skippedSteps(const TrainingState& s, const ScalerAccount& a, Findings& out)
{
    const auto opt = optimizerStep(s);
    if (const StateField* counted = skippedStepsField(s); counted && opt && s.globalStep
        && *s.globalStep - opt->step == static_cast<int64_t>(*toNumber(counted->value)) && *s.globalStep > opt->step) {
        Finding f = makeFinding("scaler.skipped-steps",
            "the optimizer's step " + std::to_string(opt->step) + " is " + counted->value + " behind global step "
                + std::to_string(*s.globalStep) + ", the updates the loop counted as skipped by loss-scale overflows",
            "Overflowing fp16 steps skip the optimizer (and here the scheduler) but count as training steps; nothing to "
            "fix (recovery guide §3.2 on the AMP grad scaler as training state). " + nextInDiagnosisOrder(Component::Scaler));
        f.evidence.push_back(evidence("optimizer step", std::to_string(opt->step), opt->from));
        f.evidence.push_back(globalStepEvidence(s));
        f.evidence.push_back(evidence(*counted));
        if (s.scaler && s.scaler->scale)
            f.evidence.push_back(evidence("loss scale", numberText(*s.scaler->scale), s.scaler->from));
        out.push_back(std::move(f));
        return;
    }
    if (!a.known || a.disabled || !opt || !s.globalStep)
        return;
    const int64_t skipped = *s.globalStep - opt->step;
    if (skipped <= 0 || skipped < a.minSkips || skipped > a.maxSkips)
        return;
    Finding f = makeFinding("scaler.skipped-steps",
        "the optimizer's step " + std::to_string(opt->step) + " is " + std::to_string(skipped) + " behind global step "
            + std::to_string(*s.globalStep) + "; " + a.explanation,
        "Overflowing fp16 steps skip optimizer.step() but still count as training steps; nothing to fix (recovery guide §3.2 on the AMP grad scaler as training state). "
            + nextInDiagnosisOrder(Component::Scaler));
    f.evidence.push_back(evidence("optimizer step", std::to_string(opt->step), opt->from));
    f.evidence.push_back(globalStepEvidence(s));
    f.evidence.insert(f.evidence.end(), a.evidence.begin(), a.evidence.end());
    f.assumes = kAssumesDefaultInitScale;
    out.push_back(std::move(f));
}

void missing(const TrainingState& s, Findings& out)
{
    if (s.scaler || !s.optimizer)
        return; // a lone file (training_args.bin) is not the checkpoint the scaler belongs to
    for (const auto& field : s.environment) {
        const std::string& n = field.name;
        const bool fp16 = ((n == "fp16" || n.ends_with(".fp16")) && toNumber(field.value).value_or(0) == 1)
                       || ((n == "precision" || n.ends_with(".precision")) && (field.value == "16" || field.value == "16-mixed"));
        if (!fp16)
            continue;
        Finding f = makeFinding("scaler.missing", "fp16 mixed precision is recorded but no GradScaler state was saved",
            hintWithNext("Without the scaler's state a resume starts at scale 65536 instead of the learned one, overflows "
                         "and skips updates the original run did not (story transformers#34053; recovery guide §3.2 on the AMP grad scaler as training state).", Component::Scaler));
        f.evidence.push_back(evidence(field));
        out.push_back(std::move(f));
        return;
    }
}

} // namespace

void scalerRules(const CheckpointFacts& c, Findings& out)
{
    const ScalerAccount a = accountScaler(c.state);
    state(c.state, out);
    countersMissing(c.state, out);
    skippedSteps(c.state, a, out);
    missing(c.state, out);
}

} // namespace ckpt::rules
