// SPDX-License-Identifier: MIT
// The convention each warning rule rests on (docs/rules.md, "Warnings: the convention each rests
// on"), given to every finding of that rule as Finding::assumes, so a report says what it assumed
// next to what it found. A rule that knows a more exact premise (a version, a unit) sets its own.
#include "ckpt/rules/rule_catalogue.h"

#include <map>

namespace ckpt {

std::string_view ruleConvention(std::string_view id)
{
    static const std::map<std::string_view, std::string_view> kConventions = {
        {"model.prefix-differs", "a run saves its model the same way every time, always from the wrapper or always from the bare module"},
        {"model.dtype-changed", "a run keeps its parameter dtypes from save to save"},
        {"optimizer.param-without-state", "every trainable parameter has received a gradient by the time of the save; "
                                          "trainable is inferred (floating point, not a buffer by name)"},
        {"optimizer.unmatched-params", "the optimizer was built over exactly the model's trainable parameters"},
        {"optimizer.param-order-changed", "the optimizer is built over model.parameters() (or groups in the model's order), so its "
                                          "positions follow the modules' registration order"},
        {"optimizer.steps-differ", "every parameter of one optimizer is updated on every step"},
        {"optimizer.step-delta", "the global step counts optimizer updates, less the ones AMP or the loop skipped"},
        {"scheduler.step-count", "the scheduler is stepped with step() and no explicit epoch, so _step_count = last_epoch + 1"},
        {"scheduler.lr-formula", "only this scheduler changes the learning rate of its optimizer's groups"},
        {"scheduler.lr-past-minimum", "the schedule was meant to decay once over the run; CosineAnnealingLR repeats with period "
                                      "2 x T_max by design, so a run longer than T_max may be intended to restart"},
        {"scheduler.lr-rose", "once the schedule decays it does not rise again (no warm restarts, cyclic LR or manual LR changes)"},
        {"scheduler.lr-log-departs", "the run's logged learning rate is the LR of the update logged at that step"},
        {"scaler.counters-missing", "the scaler class checkpoints its iteration counters (GradScaler's _growth_tracker, "
                                    "DeepSpeed's cur_iter and last_overflow_iter)"},
        {"scaler.missing", "fp16 training uses a GradScaler, whose state must be saved (not a static loss scale)"},
        {"rng.restarted", "the run does not re-seed its generators on purpose while training (a manual_seed(seed) at "
                          "every epoch start gives the same states)"},
        {"rng.kinds-differ", "every rank captures the same set of generators"},
        {"data.accumulation-changed", "the Trainer's accumulate_grad_batches (not saved by Lightning) stays the same for the whole run"},
        {"data.dp-ranks-changed", "the data loader keeps one state per data-parallel rank and does not reshard it"},
        {"progress.loop-counters", "Lightning's loop order: ready, started, optimizer step, processed, on_train_batch_end, completed"},
        {"progress.step-order", "the pair is given in the order it was saved"},
        {"environment.changed", "a resume runs in the environment the run started in"},
        {"integrity.unexpected-file", "the manifest lists every file of the checkpoint but COMPLETE and manifest.json"},
        {"integrity.rng-rank-extra", "per-rank RNG files are numbered by rank and the manifest's world_size counts the ranks"},
        {"integrity.latest-stale", "latest names the newest committed checkpoint (not a deliberate rollback)"},
        {"integrity.content-unchecked", "every model and optimizer tensor of a checkpoint is meant to be readable"},
        {"run.best-missing", "the best checkpoint a run records is kept in the run folder"},
    };
    const auto it = kConventions.find(id);
    return it == kConventions.end() ? std::string_view() : it->second;
}

} // namespace ckpt
