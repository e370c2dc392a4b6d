// SPDX-License-Identifier: MIT
// AMP grad scaler state A_t (recovery guide §3.2): reachable from GradScaler's initial state in
// the steps taken, accounting for the optimizer updates overflows skipped, and saved at all when
// fp16 training needs it.
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"
#include "scaler_account.h"

namespace ckpt::rules {
namespace {

void state(const TrainingState& s, const ScalerAccount& a, Findings& out)
{
    if (!a.present || a.consistent)
        return;
    Finding f = makeFinding("scaler.state", "the AMP scaler state cannot be reached in " + std::to_string(s.globalStep.value_or(0))
        + " steps: " + a.problem,
        hintWithNext(a.customInitLikely
            ? "GradScaler was probably built with a non-default init_scale; if not, the scaler state comes from another "
              "run (recovery guide §3.2 on the AMP grad scaler as training state)."
            : "The scaler was reset: the resume built a fresh GradScaler() and never called scaler.load_state_dict, so it "
              "restarted at 65536 and will relearn its scale through overflows the original run did not have (skipped "
              "updates, a loss spike, stories transformers#34053, apex#480; recovery guide §3.2 on the AMP grad scaler as training state and §10.1 on diagnosing a loss jump after a resume, row \"AMP scaler reset\").",
            Component::Scaler));
    if (a.customInitLikely)
        f.severity = Severity::Warning;
    f.evidence = a.evidence;
    f.evidence.push_back(globalStepEvidence(s));
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
    if (!a.known || !a.consistent || !opt || !s.globalStep)
        return;
    const int64_t skipped = *s.globalStep - opt->step;
    if (skipped <= 0 || skipped < a.minSkips || skipped > a.maxSkips)
        return;
    Finding f = makeFinding("scaler.skipped-steps",
        "the optimizer's step " + std::to_string(opt->step) + " is " + std::to_string(skipped) + " behind global step "
            + std::to_string(*s.globalStep) + ", as the AMP scaler accounts for: " + a.explanation,
        "Overflowing fp16 steps skip optimizer.step() but still count as training steps; nothing to fix (recovery guide §3.2 on the AMP grad scaler as training state). "
            + nextInDiagnosisOrder(Component::Scaler));
    f.evidence.push_back(evidence("optimizer step", std::to_string(opt->step), opt->from));
    f.evidence.push_back(globalStepEvidence(s));
    f.evidence.insert(f.evidence.end(), a.evidence.begin(), a.evidence.end());
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
    state(c.state, a, out);
    skippedSteps(c.state, a, out);
    missing(c.state, out);
}

} // namespace ckpt::rules
