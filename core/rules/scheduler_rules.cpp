// SPDX-License-Identifier: MIT
// LR scheduler state L_t (recovery guide §2.3): its position agrees with the number of updates
// (or epochs), its recorded LR is what its formula gives there and what the optimizer uses, and
// it can be rebuilt on resume (initial_lr in the param groups).
#include "ckpt/rules/rule_catalogue.h"
#include "ckpt/frameworks/framework_registry.h"
#include "rule_families.h"
#include "rule_support.h"
#include "scaler_account.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ckpt::rules {
namespace {

bool close(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max({std::fabs(a), std::fabs(b), 1e-12}); }

std::string lrList(const std::vector<double>& lrs)
{
    std::string out = "[";
    for (std::size_t i = 0; i < lrs.size(); ++i)
        out += (i ? ", " : "") + numberText(lrs[i]);
    return out + "]";
}

// An LR from a formula, to the digits that matter: 0.0025, not 0.0024999999999999974.
std::string lrFigure(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", v);
    return text;
}

Provenance keyed(const Provenance& base, const char* key)
{
    Provenance p = base;
    p.key.push_back(std::string(key));
    return p;
}

void missing(const TrainingState& s, Findings& out)
{
    if (s.scheduler || !s.optimizer || s.globalStep.value_or(0) <= 0)
        return;
    Finding f = makeFinding("scheduler.missing", "no LR-scheduler state in this training checkpoint",
        hintWithNext("Fine for a constant LR; with a schedule, a resume rebuilds it from the current config and the "
                     "LR curve bends (story OneTrainer#1604). Save scheduler.state_dict() with the optimizer (recovery guide §2.3 on keeping the LR schedule aligned with the updates).",
                     Component::Scheduler));
    f.severity = Severity::Info;
    f.evidence.push_back(evidence("optimizer", s.optimizer->type, s.optimizer->from));
    out.push_back(std::move(f));
}

// The optimizer's step may stand for the updates made when it may lag the global step for a reason the
// files show: AMP skips (an enabled scaler, whose skipped updates the scheduler skips too, transformers@c26b2a29e500
// src/transformers/trainer.py optimizer_was_run), a loop that counts its skipped updates, or no recorded global
// step. Otherwise a scheduler that agrees with a lagging optimizer was started afresh with it (the Trainer keeps
// a fresh optimizer and schedule when optimizer.pt or scheduler.pt is missing, _load_optimizer_and_scheduler).
bool optimizerStepExplained(const TrainingState& s)
{
    if (!s.globalStep || s.globalStepFromName || skippedStepsField(s))
        return true;
    const ScalerAccount scaler = accountScaler(s);
    return scaler.present && !scaler.disabled;
}

void position(const TrainingState& s, Findings& out)
{
    const LrSchedule& l = s.scheduler->schedule;
    if (l.lastEpoch < 0)
        return;
    const int64_t pos = l.lastEpoch;
    const auto epoch = fieldNumber(s.progress, "epoch");
    const auto opt = optimizerStep(s);
    const SchedulerCadence cadence = schedulerCadence(s);
    bool known = false;
    for (const int64_t k : cadence.perUpdate) {
        if (s.globalStep && pos == *s.globalStep * k)
            return;
        if (opt && pos == opt->step * k && optimizerStepExplained(s))
            return; // stepped only on the updates the optimizer made
    }
    known = s.globalStep.has_value();
    if (epoch && *epoch == std::floor(*epoch)) {
        known = true;
        const auto e = static_cast<int64_t>(*epoch);
        if (pos == e || pos == e + 1)
            return; // an epoch-interval scheduler, stepped at the end of each epoch
    }
    if (!known)
        return;
    // Between the epochs and the step: a per-step scheduler with a stepping frequency the files do not
    // record (Lightning steps it at (batch_idx + 1) % frequency within each epoch, so once an epoch for
    // a frequency near the epoch's length, matching the epoch above). At or below the epoch it is an
    // epoch-interval scheduler that lags (story Lightning#4655), which stays an error.
    const int64_t epochs = epoch ? static_cast<int64_t>(*epoch) + 1 : 0;
    const bool cadenceUnknown = !cadence.frequencyUnrecorded.empty() && s.globalStep && pos > epochs && pos < *s.globalStep;
    std::string against = s.globalStep ? "global step " + std::to_string(*s.globalStep) : std::string();
    if (epoch)
        against += std::string(against.empty() ? "" : " or ") + "epoch " + numberText(*epoch);
    std::string drift;
    if (s.globalStep && *s.globalStep > 0 && pos > *s.globalStep && pos % *s.globalStep == 0)
        drift = " (" + std::to_string(pos / *s.globalStep) + " scheduler steps per update)";
    else if (s.globalStep)
        drift = " (" + std::string(pos > *s.globalStep ? "ahead by " : "behind by ") + std::to_string(std::llabs(pos - *s.globalStep)) + ")";
    Finding f = makeFinding("scheduler.position",
        "the scheduler is at position " + std::to_string(pos) + " but training is at " + against + drift,
        hintWithNext("scheduler.step() was called more (or fewer) times than optimizer.step(): an extra call after "
                     "loading, a callback that also steps it, stepping per micro-batch under gradient accumulation, or "
                     "Lightning interval=\"step\" plus a manual step (recovery guide §2.3 on keeping the LR schedule aligned with the updates and §10.1 on diagnosing a loss jump after a resume, row \"scheduler stepped once too often\"; stories "
                     "slime#1546, Lightning#4655).", Component::Scheduler));
    f.evidence.push_back(evidence("last_epoch", std::to_string(pos), keyed(s.scheduler->from, "last_epoch")));
    f.evidence.push_back(globalStepEvidence(s));
    if (const StateField* e = findField(s.progress, "epoch"))
        f.evidence.push_back(evidence(*e));
    if (l.recomputable && s.globalStep) {
        try {
            f.evidence.push_back({"lr the formula gives at the global step", lrList(l.lrAt(*s.globalStep)), "computed from " + where(s.scheduler->from)});
        } catch (const std::exception&) {
        }
    }
    if (!l.lastLr.empty())
        f.evidence.push_back(evidence("recorded _last_lr", lrList(l.lastLr), keyed(s.scheduler->from, "_last_lr")));
    if (cadenceUnknown) {
        f.severity = Severity::Info;
        f.assumes = cadence.frequencyUnrecorded;
        if (auto w = writerEvidence(s))
            f.evidence.push_back(*w);
    }
    out.push_back(std::move(f));
}

void stepCount(const TrainingState& s, Findings& out)
{
    const LrSchedule& l = s.scheduler->schedule;
    // CosineAnnealingWarmRestarts overrides step() without counting, so its _step_count stays 0.
    if (l.stepCount <= 0 || l.lastEpoch < 0 || !l.children.empty() || l.kind == "ReduceLROnPlateau"
        || l.kind == "CosineAnnealingWarmRestarts" || l.stepCount == l.lastEpoch + 1)
        return;
    // Some frameworks step the scheduler on their own cadence (accelerate: on accumulation steps and
    // once per process), so the two never keep torch's relation there.
    if (conventionsOf(s.layout.layout).schedulerStepCountOwnCadence)
        return;
    Finding f = makeFinding("scheduler.step-count",
        "_step_count " + std::to_string(l.stepCount) + " differs from last_epoch + 1 = " + std::to_string(l.lastEpoch + 1),
        hintWithNext("step(epoch) was called with an explicit epoch, or last_epoch was edited after construction; the "
                     "position the scheduler resumes from may not be the one training reached (recovery guide §2.3 on keeping the LR schedule aligned with the updates).", Component::Scheduler));
    f.evidence.push_back(evidence("_step_count", std::to_string(l.stepCount), keyed(s.scheduler->from, "_step_count")));
    f.evidence.push_back(evidence("last_epoch", std::to_string(l.lastEpoch), keyed(s.scheduler->from, "last_epoch")));
    out.push_back(std::move(f));
}

void lrFormula(const TrainingState& s, Findings& out)
{
    const LrSchedule& l = s.scheduler->schedule;
    if (!l.recomputable || l.lastEpoch < 0 || l.lastLr.empty())
        return;
    std::vector<double> lr;
    try {
        lr = l.lrAt(l.lastEpoch);
    } catch (const std::exception&) {
        return;
    }
    if (lr.size() != l.lastLr.size())
        return;
    for (std::size_t g = 0; g < lr.size(); ++g) {
        if (close(lr[g], l.lastLr[g]))
            continue;
        Finding f = makeFinding("scheduler.lr-formula",
            "the recorded _last_lr " + lrList(l.lastLr) + " is not what " + l.kind + " gives at its position "
                + std::to_string(l.lastEpoch) + " " + lrList(lr),
            hintWithNext("Something else changed the LR: a second scheduler on the same optimizer, a manual param_group "
                         "edit, or a resume that loaded the state into a scheduler built with other settings (recovery guide §2.3 on keeping the LR schedule aligned with the updates).",
                         Component::Scheduler));
        f.evidence.push_back(evidence("recorded _last_lr", lrList(l.lastLr), keyed(s.scheduler->from, "_last_lr")));
        f.evidence.push_back({"formula at last_epoch " + std::to_string(l.lastEpoch), lrList(lr), "computed from " + where(s.scheduler->from)});
        out.push_back(std::move(f));
        return;
    }
}

// A schedule that annealed to its minimum and then, by its own formula, rose again within the steps
// taken. CosineAnnealingLR is periodic (torch's closed form cos(pi * t / T_max), period 2 * T_max): a
// run made longer than T_max climbs back toward the initial LR (story: the Lightning run of issue 42
// whose LR climbs again after step 80). Warm restarts and cyclic LR rise on purpose; a warm-up rises
// before it ever falls.
void lrPastMinimum(const TrainingState& s, Findings& out)
{
    const LrSchedule& l = s.scheduler->schedule;
    constexpr int64_t kLongest = int64_t(1) << 22; // the curve is walked once, step by step
    if (!l.recomputable || l.lastEpoch <= 0 || l.lastEpoch > kLongest || l.kind == "CosineAnnealingWarmRestarts" || l.kind == "CyclicLR")
        return;
    std::vector<std::vector<double>> curve;
    try {
        curve = l.lrSeries(0, l.lastEpoch);
    } catch (const std::exception&) {
        return;
    }
    for (std::size_t g = 0; !curve.empty() && g < curve.front().size(); ++g) {
        double peak = 0, low = 0;
        int64_t lowAt = -1;
        bool fell = false;
        for (std::size_t t = 0; t < curve.size(); ++t) {
            const double lr = curve[t][g];
            peak = std::max(peak, lr);
            const double noise = 1e-3 * peak; // a rise smaller than this is rounding, not the schedule
            if (t > 0 && lr < curve[t - 1][g] - noise)
                fell = true;
            if (fell && (lowAt < 0 || lr < low)) {
                low = lr;
                lowAt = static_cast<int64_t>(t);
            }
            if (!fell || lr <= low + noise)
                continue;
            const double last = curve.back()[g];
            Finding f = makeFinding("scheduler.lr-past-minimum",
                l.kind + " brought the learning rate of param group " + std::to_string(g) + " down to " + lrFigure(low)
                    + " at scheduler step " + std::to_string(lowAt) + ", then its own formula raised it again, to "
                    + lrFigure(last) + " at step " + std::to_string(l.lastEpoch),
                hintWithNext("The run is longer than the schedule: CosineAnnealingLR's T_max (or a composite's milestones) was set for "
                             "fewer steps than were trained, so the cosine climbs back toward the initial LR after T_max and "
                             "the loss rises with it. Set T_max to the number of scheduler steps the run takes (with Lightning, "
                             "the steps of `interval: step`, or epochs), or use CosineAnnealingWarmRestarts if restarts are "
                             "meant (recovery guide §2.3 on keeping the LR schedule aligned with the updates).",
                             Component::Scheduler));
            f.evidence.push_back({"minimum at step " + std::to_string(lowAt), lrFigure(low), "computed from " + where(s.scheduler->from)});
            f.evidence.push_back({"lr at step " + std::to_string(l.lastEpoch), lrFigure(last), "computed from " + where(s.scheduler->from)});
            f.evidence.push_back(evidence("last_epoch", std::to_string(l.lastEpoch), keyed(s.scheduler->from, "last_epoch")));
            for (const auto& [name, value] : l.fields) {
                if (name == "T_max" || name == "eta_min")
                    f.evidence.push_back(evidence(name, value, keyed(s.scheduler->from, name.c_str())));
            }
            out.push_back(std::move(f));
            return;
        }
    }
}

void lrOptimizer(const TrainingState& s, Findings& out)
{
    const LrSchedule& l = s.scheduler->schedule;
    if (!s.optimizer || l.lastLr.empty() || l.lastLr.size() != s.optimizer->groups.size())
        return;
    for (std::size_t g = 0; g < l.lastLr.size(); ++g) {
        const StateField* lr = findField(s.optimizer->groups[g].hyperparameters, "lr");
        const auto v = lr ? toNumber(lr->value) : std::nullopt;
        if (!v || close(*v, l.lastLr[g]))
            continue;
        Finding f = makeFinding("scheduler.lr-optimizer",
            "param group " + std::to_string(g) + " trains with lr " + lr->value + " but the scheduler recorded "
                + numberText(l.lastLr[g]),
            hintWithNext("The optimizer and the scheduler come from different moments (saved at different boundaries, "
                         "recovery guide §6.1 on consistent checkpoints), or the LR was overridden after loading (a config lr applied on resume) (recovery guide §2.3 on keeping the LR schedule aligned with the updates).",
                         Component::Scheduler));
        f.evidence.push_back(evidence("optimizer lr", lr->value, lr->from));
        f.evidence.push_back(evidence("scheduler _last_lr", lrList(l.lastLr), keyed(s.scheduler->from, "_last_lr")));
        out.push_back(std::move(f));
        return;
    }
}

void initialLr(const TrainingState& s, Findings& out)
{
    const LrSchedule& l = s.scheduler->schedule;
    // initial_lr is torch's LRScheduler's (set in its __init__); DeepSpeed's schedulers set no such key.
    if (!s.optimizer || l.lastEpoch <= 0 || l.kind == "ReduceLROnPlateau" || l.kind == "unknown" || l.kind.starts_with("DeepSpeed"))
        return;
    for (std::size_t g = 0; g < s.optimizer->groups.size(); ++g) {
        if (findField(s.optimizer->groups[g].hyperparameters, "initial_lr"))
            continue;
        Finding f = makeFinding("scheduler.initial-lr-missing",
            "the scheduler is at position " + std::to_string(l.lastEpoch) + " but param group " + std::to_string(g)
                + " has no initial_lr: a scheduler built with last_epoch > 0 on resume raises KeyError",
            hintWithNext("initial_lr was dropped on the way (torch.distributed.checkpoint before the fix, a converter "
                         "that copies only lr); add it back from base_lrs before resuming (story pytorch#140900, recovery guide §2.3 on keeping the LR schedule aligned with the updates).",
                         Component::Scheduler));
        Provenance groups = s.optimizer->from;
        groups.key.insert(groups.key.end(), {std::string("param_groups"), static_cast<int64_t>(g)});
        f.evidence.push_back(evidence("param group keys", "no initial_lr", groups));
        f.evidence.push_back(evidence("last_epoch", std::to_string(l.lastEpoch), keyed(s.scheduler->from, "last_epoch")));
        out.push_back(std::move(f));
        return;
    }
}

} // namespace

// Megatron-LM's OptimizerParamScheduler counts samples: train_step steps it by the global batch
// size after every successful update (NVIDIA/Megatron-LM@d98e8a64 megatron/training/training.py
// train_step; docs/layouts.md §1), and the loop adds the same batch to args.consumed_train_samples
// on every iteration. num_steps can therefore never pass the samples consumed; it falls behind only
// by updates skipped on an fp16 overflow.
void megatronPosition(const TrainingState& s, Findings& out)
{
    const int64_t numSteps = s.scheduler->schedule.lastEpoch;
    const StateField* consumed = findField(s.data, "args.consumed_train_samples");
    const auto samples = consumed ? toNumber(consumed->value) : std::nullopt;
    if (numSteps < 0 || !samples || static_cast<int64_t>(*samples) == numSteps)
        return;
    const StateField* gbs = findField(s.environment, "args.global_batch_size");
    const auto batch = gbs ? toNumber(gbs->value) : std::nullopt;
    const int64_t diff = numSteps - static_cast<int64_t>(*samples);
    const std::string iterations = batch && *batch > 0 && diff % static_cast<int64_t>(*batch) == 0
                                     ? " (" + std::to_string(std::llabs(diff) / static_cast<int64_t>(*batch)) + " iteration(s) of "
                                           + gbs->value + " samples)"
                                     : "";
    const StateField* fp16 = findField(s.environment, "args.fp16");
    const bool overflowsPossible = fp16 && (fp16->value == "True" || fp16->value == "true" || fp16->value == "1");
    std::string message;
    if (diff > 0)
        message = "Megatron's scheduler is at num_steps " + std::to_string(numSteps) + " samples but only " + consumed->value
                + " were consumed: it is " + std::to_string(diff) + " samples ahead" + iterations
                + ", stepped for samples never trained, as a resume that steps it again after load_state_dict restored it does";
    else
        message = "Megatron's scheduler is at num_steps " + std::to_string(numSteps) + " samples, " + std::to_string(-diff)
                + " behind the " + consumed->value + " samples consumed" + iterations;
    Finding f = makeFinding("scheduler.position", message,
        hintWithNext("num_steps counts samples and advances by the global batch size on every successful update, so it equals "
                     "args.consumed_train_samples unless updates were skipped (story THUDM/slime#1546: the scheduler stepped "
                     "twice on resume; recovery guide §2.3 on keeping the LR schedule aligned with the updates).", Component::Scaler));
    if (diff < 0) {
        f.severity = overflowsPossible ? Severity::Info : Severity::Warning;
        f.assumes = "updates are skipped only on an fp16 overflow (then num_steps falls behind by the skipped batches)";
    }
    f.evidence.push_back(evidence("num_steps", std::to_string(numSteps), keyed(s.scheduler->from, "num_steps")));
    f.evidence.push_back(evidence("args.consumed_train_samples", consumed->value, consumed->from));
    if (gbs)
        f.evidence.push_back(evidence("args.global_batch_size", gbs->value, gbs->from));
    if (s.globalStep)
        f.evidence.push_back(globalStepEvidence(s));
    out.push_back(std::move(f));
}

void schedulerRules(const CheckpointFacts& c, Findings& out)
{
    const TrainingState& s = c.state;
    missing(s, out);
    if (!s.scheduler)
        return;
    if (s.scheduler->schedule.kind == "Megatron OptimizerParamScheduler") {
        megatronPosition(s, out); // torch's scheduler conventions (last_epoch, _last_lr, initial_lr) do not apply
        return;
    }
    position(s, out);
    stepCount(s, out);
    lrFormula(s, out);
    lrPastMinimum(s, out);
    lrOptimizer(s, out);
    initialLr(s, out);
}

} // namespace ckpt::rules
