// SPDX-License-Identifier: MIT
// Data cursor D_t (recovery guide §4.2, §5): an epoch with a position in it, a position that
// agrees with the number of updates (epoch × batches per epoch + position = global step ×
// gradient accumulation; the guide's example saves batch_pos = the next unconsumed batch), and
// per-rank samplers that agree with each other and with the checkpoint's own cursor.
#include "ckpt/rules/rule_catalogue.h"
#include "ckpt/frameworks/framework_registry.h"
#include "data_cursor.h"
#include "rule_families.h"
#include "rule_support.h"

#include <cmath>
#include <optional>
#include <set>

namespace ckpt::rules {
namespace {

void cursorMissing(const TrainingState& s, const DataCursor& d, Findings& out)
{
    // Nothing of D at all in a checkpoint that has trained (accelerate saves its sampler only for an
    // iterable dataset: accelerate@8d1479def0bb src/accelerate/checkpointing.py save_accelerator_state): the
    // files cannot say whether a resume skipped the batches already trained on.
    const auto opt = optimizerStep(s);
    if (s.data.empty() && !d.epoch && opt && opt->step > 0) {
        Finding f = makeFinding("data.cursor-missing",
            "no data position is recorded (no epoch, batch, sampler or loader state) although the optimizer took "
                + std::to_string(opt->step) + " step(s): whether a resume skipped the batches already trained on is not in the files",
            hintWithNext("The loop must skip them itself (accelerate: skip_first_batches(dataloader, n) for the rest of the "
                         "epoch, with n from the step and the dataloader's length; its sampler.bin is saved only for "
                         "iterable datasets), and nothing records that it did: save the epoch and batch position beside the "
                         "optimizer (recovery guide §4.2 on saving the data position as well as the RNG).", Component::Data));
        f.evidence.push_back(evidence("optimizer step", std::to_string(opt->step), opt->from));
        out.push_back(std::move(f));
        return;
    }
    if (d.position || !d.epoch || conventionsOf(s.layout.layout).epochPositionFromOtherCounters)
        return;
    Finding f = makeFinding("data.cursor-missing",
        "epoch " + numberText(*d.epoch) + " is recorded but not how far into it training got",
        hintWithNext("Without a position a resume restarts the epoch (repeating data) or skips to the next one; save the "
                     "next unconsumed batch index with the sampler seed (recovery guide §4.2 on saving the data position as well as the RNG).", Component::Data));
    f.evidence.push_back(evidence("epoch", numberText(*d.epoch), d.epochFrom));
    out.push_back(std::move(f));
}

void cursorVsStep(const TrainingState& s, const DataCursor& d, Findings& out)
{
    if (!d.position || !d.epoch || !d.batchesPerEpoch || !s.globalStep || *d.epoch != static_cast<int64_t>(*d.epoch))
        return;
    const int64_t accumulation = gradientAccumulation(s);
    const auto consumed = d.consumed();
    const int64_t expected = *s.globalStep * accumulation;
    const bool outOfRange = *d.position < 0 || *d.position > *d.batchesPerEpoch;
    if (consumed == expected && !outOfRange)
        return;
    const int64_t delta = *consumed - expected;
    // A sampler position is often a count of samples (the guide's §4.2 example): a whole multiple
    // of the batches the step accounts for in this epoch is that unit, not a skip.
    if (samplesPerBatch(s, d).value_or(0) >= 2)
        return;
    Finding f = makeFinding("data.cursor-vs-step",
        "the data cursor (epoch " + numberText(*d.epoch) + ", batch " + std::to_string(*d.position) + " of "
            + std::to_string(*d.batchesPerEpoch) + ") is " + std::to_string(*consumed) + " batches into training, but "
            + (accumulation > 1 ? "global step × accumulation is " : "the global step is ") + std::to_string(expected)
            + (outOfRange ? " (position outside the epoch)" : delta < 0 ? ": " + std::to_string(-delta) + " batch(es) will be trained twice"
                                                                        : ": " + std::to_string(delta) + " batch(es) were skipped")
            + (d.positionName == "sampler.position" ? " (the position is the samplers', which may count samples)" : ""),
        hintWithNext("The resume restored the epoch but restarted it from its first batch (or skipped ahead), or the cursor "
                     "was saved on the other side of the update than the step counter: batch_pos must be the next "
                     "unconsumed batch at the same boundary as global_step (recovery guide §4.2 on saving the data position as well as the RNG, §5 on the single-process resume example and §10.1 on diagnosing a loss jump after a resume, row \"data cursor rolled back or skipped\"; "
                     "stories transformers#5605, Lightning#19815).", Component::Data));
    f.evidence.push_back(evidence("epoch", numberText(*d.epoch), d.epochFrom));
    f.evidence.push_back(evidence(d.positionName, std::to_string(*d.position), d.positionFrom));
    f.evidence.push_back(evidence("batches per epoch", std::to_string(*d.batchesPerEpoch), d.batchesFrom));
    f.evidence.push_back(globalStepEvidence(s));
    out.push_back(std::move(f));
}

// Whether `value` is `reference` counted in a smaller unit: a whole multiple k >= 1 of it (both 0
// counts too). The recovery guide's own §4.2 example counts the sampler position in samples
// while its batch_pos counts batches, so k is the per-rank batch size; no file records which unit
// a cursor uses, so a whole ratio is a unit, not a fault.
std::optional<double> unitRatio(double value, double reference)
{
    if (value == reference)
        return 1.0;
    if (reference <= 0 || value <= 0)
        return std::nullopt;
    const double k = value / reference;
    return k == std::floor(k) ? std::optional<double>(k) : std::nullopt;
}

void ranksDisagree(const TrainingState& s, const DataCursor& d, Findings& out)
{
    // Each rank's sampler against the others (the same job reads one stream: they must agree),
    // then against the checkpoint's own field (a warning: it rests on both counting alike).
    const StateField* epoch = findField(s.progress, "epoch");
    const StateField* position = d.positionName != "sampler.position" ? findField(s.data, d.positionName) : nullptr;
    const StateField* seed = findField(s.data, "data_seed");
    const std::pair<const char*, const StateField*> checks[] = {
        {"sampler.position", position}, {"sampler.epoch", epoch}, {"sampler.seed", seed}};
    for (const auto& [samplerName, reference] : checks) {
        const auto fields = findFields(s.data, samplerName);
        std::set<std::string> values;
        for (const StateField* f : fields)
            values.insert(f->value);
        std::optional<double> ratio;
        bool offReference = false;
        if (values.size() == 1 && reference) {
            const auto v = toNumber(*values.begin()), r = toNumber(reference->value);
            if (v && r) {
                ratio = std::string(samplerName) == "sampler.position" ? unitRatio(*v, *r)
                                                                       : (*v == *r ? std::optional<double>(1.0) : std::nullopt);
                offReference = !ratio;
            }
        }
        if (values.size() <= 1 && !offReference)
            continue;
        std::string list;
        for (const auto& v : values)
            list += (list.empty() ? "" : ", ") + v;
        const bool ranks = values.size() > 1;
        const std::string message = ranks
            ? std::string("ranks disagree on ") + samplerName + ": " + list
            : std::string(samplerName) + " " + list + " differs from the checkpoint's " + reference->name + " " + reference->value
                + (std::string(samplerName) == "sampler.position" ? ", and is not a whole multiple of it (a count of samples would be)" : "");
        Finding f = makeFinding("data.ranks-disagree", message,
            hintWithNext(ranks ? "Per-rank sampler state was restored for some ranks only, or comes from another save; those ranks "
                                 "read other data than the rest of the job expects (recovery guide §4.2 on saving the data position as well as the RNG and §4.4 on per-rank RNG state; story torchtitan#811)."
                               : "The sampler and the loop's own cursor were saved at different moments, or one was not restored on "
                                 "resume (recovery guide §4.2 on saving the data position as well as the RNG).",
                         Component::Data));
        if (!ranks) {
            f.severity = Severity::Warning;
            f.assumes = std::string(samplerName) == "sampler.position"
                ? "the sampler position and " + reference->name + " count the same stream, in batches or in samples"
                : "the sampler and " + reference->name + " describe the same epoch and seed";
        }
        if (reference)
            f.evidence.push_back(evidence(*reference));
        for (const StateField* field : fields)
            f.evidence.push_back(evidence(*field));
        out.push_back(std::move(f));
    }
}

} // namespace

void dataRules(const CheckpointFacts& c, Findings& out)
{
    const DataCursor d = readDataCursor(c.state);
    cursorMissing(c.state, d, out);
    cursorVsStep(c.state, d, out);
    ranksDisagree(c.state, d, out);
}

} // namespace ckpt::rules
