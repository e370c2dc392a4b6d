// SPDX-License-Identifier: MIT
// Counters across a pair (recovery guide §2.2, §2.3, §4.2, §6.1): between A and B the global step,
// the optimizer's step (less AMP-skipped updates), the scheduler's position and the data cursor
// all advance by the same amount. Whichever moved differently is the state the resume broke.
#include "ckpt/rules/rule_catalogue.h"
#include "data_cursor.h"
#include "rule_families.h"
#include "rule_support.h"
#include "scaler_account.h"

#include <cmath>
#include <cstdio>
#include <map>

namespace ckpt::rules {
namespace {

std::string name(const TrainingState& s) { return s.path; }

void optimizerDelta(const TrainingState& a, const TrainingState& b, int64_t dG, Findings& out)
{
    const auto na = optimizerStep(a), nb = optimizerStep(b);
    if (!na || !nb)
        return;
    if (nb->step < na->step) {
        Finding f = makeFinding("optimizer.reset",
            "the optimizer's step went from " + std::to_string(na->step) + " back to " + std::to_string(nb->step)
                + " while the global step advanced by " + std::to_string(dG) + ": the optimizer state restarted",
            hintWithNext("The resume did not restore the optimizer (a fresh optimizer, optimizer.load_state_dict skipped or "
                         "failing silently); Adam ran with zero moments and fresh bias correction after it (recovery guide §2.2 on optimizer state and §9.2 on building objects before loading state, "
                         "recovery guide §10.1 on diagnosing a loss jump after a resume, row \"optimizer state not restored\"; stories sam#34, DeepSpeed#6691).", Component::Optimizer));
        f.evidence.push_back(evidence("step in A", std::to_string(na->step), na->from));
        f.evidence.push_back(evidence("step in B", std::to_string(nb->step), nb->from));
        f.evidence.push_back(globalStepEvidence(a));
        f.evidence.push_back(globalStepEvidence(b));
        if (nb->step <= dG)
            f.message += " about " + std::to_string(nb->step) + " updates before B (near step " + std::to_string(*b.globalStep - nb->step) + ")";
        out.push_back(std::move(f));
        return;
    }
    const int64_t dN = nb->step - na->step;
    const int64_t skipped = dG - dN;
    if (skipped == 0)
        return;
    if (a.globalStepFromName && b.globalStepFromName && dN > 0 && dG % dN == 0)
        return; // names that count batches, a whole number per update (stepVsGlobalStep)
    const StateField *ca = skippedStepsField(a), *cb = skippedStepsField(b);
    if (ca && cb && *toNumber(cb->value) - *toNumber(ca->value) == static_cast<double>(skipped))
        return; // the loop counted exactly these skipped updates
    // Updates skipped between A and B must show as scaler backoffs between A's scale and B's.
    if (skipped > 0 && a.scaler && b.scaler && a.scaler->scale && b.scaler->scale) {
        const auto e = growthsBetween(*a.scaler->scale, *b.scaler->scale, b.scaler->growthFactor.value_or(2),
                                      b.scaler->backoffFactor.value_or(0.5));
        const int64_t interval = b.scaler->growthInterval.value_or(2000);
        const int64_t maxGrowths = interval > 0 ? (a.scaler->growthTracker.value_or(0) + dN) / interval : dN;
        if (e && skipped >= std::max<int64_t>(0, *e) - *e && skipped <= maxGrowths - *e)
            return;
    }
    Finding f = makeFinding("optimizer.step-delta",
        "the optimizer advanced " + std::to_string(dN) + " step(s) while the global step advanced " + std::to_string(dG)
            + (skipped > 0 ? " and the scaler does not account for " + std::to_string(skipped) + " skipped update(s)" : ""),
        hintWithNext("Updates were lost or doubled between the saves: a resume that replayed or skipped steps, or "
                     "optimizer and counters saved at different boundaries (recovery guide §2.2 on optimizer state and §6.1 on consistent checkpoints).", Component::Optimizer));
    f.evidence.push_back(evidence("step in A", std::to_string(na->step), na->from));
    f.evidence.push_back(evidence("step in B", std::to_string(nb->step), nb->from));
    f.evidence.push_back(globalStepEvidence(a));
    f.evidence.push_back(globalStepEvidence(b));
    out.push_back(std::move(f));
}

void schedulerDelta(const TrainingState& a, const TrainingState& b, int64_t dG, Findings& out)
{
    if (!a.scheduler || !b.scheduler || a.scheduler->schedule.lastEpoch < 0 || b.scheduler->schedule.lastEpoch < 0)
        return;
    if (b.scheduler->schedule.kind == "Megatron OptimizerParamScheduler")
        return; // counts samples: scheduler.position checks it against the samples consumed, checkpoint by checkpoint
    const int64_t pa = a.scheduler->schedule.lastEpoch, pb = b.scheduler->schedule.lastEpoch, dP = pb - pa;
    const SchedulerCadence cadence = schedulerCadence(b);
    const auto na = optimizerStep(a), nb = optimizerStep(b);
    for (const int64_t k : cadence.perUpdate) {
        if (dP == dG * k || (na && nb && dP == (nb->step - na->step) * k))
            return;
    }
    const auto ea = fieldNumber(a.progress, "epoch"), eb = fieldNumber(b.progress, "epoch");
    if (ea && eb && std::floor(*ea) == *ea && std::floor(*eb) == *eb && dP == static_cast<int64_t>(*eb - *ea))
        return; // an epoch-interval scheduler
    // A stepping frequency the files do not record moves a per-step scheduler fewer positions than the
    // step, and more than the epochs passed (scheduler.position); it never moves it back.
    if (!cadence.frequencyUnrecorded.empty() && dP < dG && dP > (ea && eb ? static_cast<int64_t>(*eb - *ea) + 1 : int64_t(0)))
        return;
    std::string rate;
    if (dG > 0 && dP % dG == 0 && dP != 0)
        rate = " (" + std::to_string(dP / dG) + " scheduler steps per update)";
    Finding f = makeFinding("scheduler.step-delta",
        "the scheduler moved " + std::to_string(dP) + " position(s) while the global step advanced " + std::to_string(dG) + rate,
        hintWithNext("scheduler.step() ran a different number of times than optimizer.step() between the saves: a second "
                     "step() call (a callback, a per-micro-batch step, an extra step right after loading) or a scheduler "
                     "that was not restored (recovery guide §2.3 on keeping the LR schedule aligned with the updates and §10.1 on diagnosing a loss jump after a resume, row \"scheduler stepped once too often\"; stories slime#1546, Lightning#4655).",
                     Component::Scheduler));
    Provenance fa = a.scheduler->from, fb = b.scheduler->from;
    fa.key.push_back(std::string("last_epoch"));
    fb.key.push_back(std::string("last_epoch"));
    f.evidence.push_back(evidence("last_epoch in A", std::to_string(pa), fa));
    f.evidence.push_back(evidence("last_epoch in B", std::to_string(pb), fb));
    f.evidence.push_back(globalStepEvidence(a));
    f.evidence.push_back(globalStepEvidence(b));
    out.push_back(std::move(f));
}

void dataDelta(const TrainingState& a, const TrainingState& b, int64_t dG, Findings& out)
{
    DataCursor ca = readDataCursor(a), cb = readDataCursor(b);
    if (!ca.batchesPerEpoch && cb.batchesPerEpoch) {
        ca.batchesPerEpoch = cb.batchesPerEpoch;
        ca.batchesFrom = cb.batchesFrom;
    }
    if (!cb.batchesPerEpoch && ca.batchesPerEpoch) {
        cb.batchesPerEpoch = ca.batchesPerEpoch;
        cb.batchesFrom = ca.batchesFrom;
    }
    std::optional<int64_t> dC;
    if (ca.consumed() && cb.consumed())
        dC = *cb.consumed() - *ca.consumed();
    else if (ca.position && cb.position && ca.epoch && cb.epoch && *ca.epoch == *cb.epoch)
        dC = *cb.position - *ca.position;
    const int64_t expected = dG * gradientAccumulation(b);
    // Sampler positions counted in samples (the guide's §4.2 example): in each checkpoint the position is
    // k times the batches its step has trained into its epoch, with the same whole k in both. A constant
    // ratio between the cursor and the step is a unit, not a fault; the batches then agree with the step.
    if (dC && *dC != expected) {
        const auto ka = samplesPerBatch(a, ca), kb = samplesPerBatch(b, cb);
        if (ka && kb && (*ka == *kb || *ka == 0 || *kb == 0))
            return;
    }
    if (dC && *dC != expected) {
        const int64_t diff = *dC - expected;
        Finding f = makeFinding("data.cursor-delta",
            "the data cursor advanced " + std::to_string(*dC) + " batch(es) while training took " + std::to_string(expected)
                + ": " + (diff < 0 ? std::to_string(-diff) + " batch(es) trained twice" : std::to_string(diff) + " batch(es) skipped")
                + (cb.positionName == "sampler.position" ? " (counted from the samplers' positions, which may count samples: "
                                                           "the figures are then in samples, not batches)" : ""),
            hintWithNext("The resume restarted the epoch from its first batch (or jumped ahead) instead of continuing at the "
                         "saved batch_pos (recovery guide §4.2 on saving the data position as well as the RNG, §5 on the single-process resume example and §10.1 on diagnosing a loss jump after a resume, row \"data cursor rolled back or skipped\"; stories accelerate#2016, "
                         "transformers#5605).", Component::Data));
        f.evidence.push_back(evidence("epoch in A", numberText(*ca.epoch), ca.epochFrom));
        f.evidence.push_back(evidence(ca.positionName + " in A", std::to_string(*ca.position), ca.positionFrom));
        f.evidence.push_back(evidence("epoch in B", numberText(*cb.epoch), cb.epochFrom));
        f.evidence.push_back(evidence(cb.positionName + " in B", std::to_string(*cb.position), cb.positionFrom));
        if (cb.batchesPerEpoch)
            f.evidence.push_back(evidence("batches per epoch", std::to_string(*cb.batchesPerEpoch), cb.batchesFrom));
        f.evidence.push_back(globalStepEvidence(a));
        f.evidence.push_back(globalStepEvidence(b));
        out.push_back(std::move(f));
    }
}

// transformers' Trainer records where the data is only as a fractional epoch: the epoch's index plus
// the micro-batches drawn in it over len(dataloader), skipped ones included (transformers@c26b2a29e500
// src/transformers/trainer.py _inner_training_loop, `epoch + (step + 1 + steps_skipped) / steps_in_epoch`),
// while the global step counts updates of gradient_accumulation_steps micro-batches. A checkpoint whose
// global step x accumulation over its epoch is a whole number gives the micro-batches per epoch; the next
// checkpoint's epoch must be as far on as the updates between them drew. A resume that does not skip the
// data it already trained on (ignore_data_skip=True: the epoch restarts at its first batch) falls
// behind. Less than one update's worth of difference is the leftover micro-batches an epoch's end carries.
void fractionalEpochDelta(const TrainingState& a, const TrainingState& b, int64_t dG, Findings& out)
{
    const StateField *fa = findField(a.progress, "epoch"), *fb = findField(b.progress, "epoch");
    const auto ea = fa ? toNumber(fa->value) : std::nullopt, eb = fb ? toNumber(fb->value) : std::nullopt;
    if (!ea || !eb || !a.globalStep || !b.globalStep || dG <= 0 || *eb < *ea)
        return; // an epoch going back is data.sampler-changed's
    if (std::floor(*ea) == *ea && std::floor(*eb) == *eb)
        return; // whole epochs: other frameworks count the epoch started, not the batches drawn
    const int64_t accA = gradientAccumulation(a), accB = gradientAccumulation(b);
    auto wholePerEpoch = [](double microBatches, double epoch) -> std::optional<int64_t> {
        if (epoch <= 0)
            return std::nullopt;
        const double m = microBatches / epoch;
        if (m < 1 || std::fabs(m - std::round(m)) > 1e-6 * m)
            return std::nullopt;
        return static_cast<int64_t>(std::round(m));
    };
    auto perEpoch = wholePerEpoch(static_cast<double>(*a.globalStep * accA), *ea);
    if (!perEpoch)
        perEpoch = wholePerEpoch(static_cast<double>(*b.globalStep * accB), *eb);
    if (!perEpoch)
        return;
    const auto drawn = static_cast<int64_t>(std::llround((*eb - *ea) * static_cast<double>(*perEpoch)));
    const int64_t trained = dG * accB, diff = drawn - trained;
    if (std::llabs(diff) < accB)
        return;
    Finding f = makeFinding("data.cursor-delta",
        "the epoch advanced from " + fa->value + " to " + fb->value + ", " + std::to_string(drawn) + " micro-batch(es) of "
            + std::to_string(*perEpoch) + " per epoch, while the " + std::to_string(dG) + " update(s) between trained "
            + std::to_string(trained) + ": " + (diff < 0 ? std::to_string(-diff) + " micro-batch(es) trained twice" : std::to_string(diff) + " skipped"),
        hintWithNext("The Trainer records the data position only as this fractional epoch; a resume with ignore_data_skip=True "
                     "(or a loader that does not skip the batches already trained on) restarts the epoch at its first batch and "
                     "trains them again (recovery guide §4.2 on saving the data position as well as the RNG; story transformers#5605).",
                     Component::Data));
    f.severity = Severity::Warning;
    f.assumes = "the epoch is fractional in micro-batches of one len(dataloader) (transformers' Trainer), the same in both "
                "checkpoints: the dataset and per-device batch size did not change";
    f.evidence.push_back(evidence(*fa));
    f.evidence.push_back(evidence(*fb));
    f.evidence.push_back(globalStepEvidence(a));
    f.evidence.push_back(globalStepEvidence(b));
    if (const StateField* g = findField(b.environment, "gradient_accumulation_steps"))
        f.evidence.push_back(evidence(*g));
    if (auto w = writerEvidence(b))
        f.evidence.push_back(*w);
    out.push_back(std::move(f));
}

// The sampler's seed or epoch between two saves. It needs no global step: accelerate records none
// (its `step` is not one), and its checkpoint_<i> names give the order. Without a global step on
// either side, the order is the run's (or the command line's), not a counter's: a warning.
void samplerChanged(const TrainingState& a, const TrainingState& b, std::optional<int64_t> dG, Findings& out)
{
    const DataCursor ca = readDataCursor(a), cb = readDataCursor(b);
    std::string changed;
    if (ca.seed && cb.seed && *ca.seed != *cb.seed)
        changed = "the data seed changed from " + numberText(*ca.seed) + " to " + numberText(*cb.seed);
    else if (ca.epoch && cb.epoch && *cb.epoch < *ca.epoch && dG.value_or(0) >= 0)
        changed = "the epoch went back from " + numberText(*ca.epoch) + " to " + numberText(*cb.epoch);
    if (changed.empty())
        return;
    Finding f = makeFinding("data.sampler-changed", changed + " between the checkpoints",
        hintWithNext("The sampler was rebuilt from the current config instead of its saved state (a DataLoader built and "
                     "prepared anew after the state was loaded replaces the restored sampler): every epoch after it "
                     "reads another order than the original run (recovery guide §4.2 on saving the data position as well as the RNG; story accelerate#2016).", Component::Data));
    if (!dG) {
        f.severity = Severity::Warning;
        f.assumes = "B was saved after A, as the run's checkpoint names (accelerate's checkpoint_<i>) or the command line "
                    "order them: neither file records a global step";
    }
    if (ca.seed && cb.seed) {
        f.evidence.push_back(evidence("seed in A", numberText(*ca.seed), ca.seedFrom));
        f.evidence.push_back(evidence("seed in B", numberText(*cb.seed), cb.seedFrom));
    }
    if (ca.epoch && cb.epoch) {
        f.evidence.push_back(evidence("epoch in A", numberText(*ca.epoch), ca.epochFrom));
        f.evidence.push_back(evidence("epoch in B", numberText(*cb.epoch), cb.epochFrom));
    }
    out.push_back(std::move(f));
}

// The data-parallel ranks whose data loader state a checkpoint keeps: torchtitan saves one entry per
// dp rank, dataloader.dp_rank_<r> (torchtitan@970fbddb components/dataloader.py), and loads only the
// entry of each rank of the resuming job: saved at dp 4 and resumed at dp 2, ranks 2 and 3's
// positions are dropped without an error (story torchtitan#811, fixed to warn in PR#816).
std::map<int, const StateField*> dpRankStates(const TrainingState& s)
{
    std::map<int, const StateField*> out;
    for (const auto* fields : {&s.progress, &s.data}) {
        for (const auto& f : *fields) {
            int rank = -1;
            if (std::sscanf(f.name.c_str(), "dataloader.dp_rank_%d", &rank) == 1 && rank >= 0)
                out.emplace(rank, &f);
        }
    }
    return out;
}

void dpRanksChanged(const TrainingState& a, const TrainingState& b, Findings& out)
{
    const auto ra = dpRankStates(a), rb = dpRankStates(b);
    if (ra.empty() || rb.empty() || ra.size() == rb.size())
        return;
    std::string dropped;
    for (const auto& [rank, _] : ra)
        if (!rb.contains(rank))
            dropped += (dropped.empty() ? "" : ", ") + std::to_string(rank);
    Finding f = makeFinding("data.dp-ranks-changed",
        "the data loader state covers " + std::to_string(ra.size()) + " data-parallel ranks in A but " + std::to_string(rb.size())
            + " in B" + (dropped.empty() ? "" : ": the positions of dp rank(s) " + dropped + " were dropped"),
        hintWithNext("Per-rank data loader state is not resharded when the data-parallel degree changes: the resumed ranks "
                     "continue their own streams and the dropped ranks' samples are never seen (or seen again) (story "
                     "torchtitan#811; recovery guide §4.2 on saving the data position as well as the RNG).", Component::Data));
    f.assumes = "the data loader keeps one state per data-parallel rank and does not reshard it (torchtitan's does not)";
    f.evidence.push_back(evidence("dp ranks in A", std::to_string(ra.size()), ra.begin()->second->from));
    f.evidence.push_back(evidence("dp ranks in B", std::to_string(rb.size()), rb.begin()->second->from));
    out.push_back(std::move(f));
}

} // namespace

void counterPairRules(const CheckpointFacts& ca, const CheckpointFacts& cb, Findings& out)
{
    const TrainingState& a = ca.state;
    const TrainingState& b = cb.state;
    dpRanksChanged(a, b, out);
    if (!a.globalStep || !b.globalStep) {
        samplerChanged(a, b, std::nullopt, out);
        return;
    }
    const int64_t dG = *b.globalStep - *a.globalStep;
    if (dG < 0) {
        Finding f = makeFinding("progress.step-order",
            "B (" + name(b) + ") is at an earlier step than A (" + name(a) + "); compare older first",
            "Pass the earlier checkpoint first (ckpt check OLD NEW); the delta rules assume A was saved before B.");
        f.evidence.push_back(globalStepEvidence(a));
        f.evidence.push_back(globalStepEvidence(b));
        out.push_back(std::move(f));
        return;
    }
    optimizerDelta(a, b, dG, out);
    schedulerDelta(a, b, dG, out);
    dataDelta(a, b, dG, out);
    fractionalEpochDelta(a, b, dG, out);
    samplerChanged(a, b, dG, out);
}

} // namespace ckpt::rules
