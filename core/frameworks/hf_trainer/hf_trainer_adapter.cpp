// SPDX-License-Identifier: MIT
// transformers' Trainer: checkpoint-N/ folders. See README.md beside this file.
#include "ckpt/frameworks/framework_adapter.h"

namespace ckpt::frameworks {
namespace {

class HfTrainerAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::HfTrainer; }
    const char* name() const override { return "hf_trainer"; }
    const FrameworkConventions& conventions() const override
    {
        // trainer_state.json's epoch is fractional and the Trainer skips
        // (global_step % num_update_steps_per_epoch) * gradient_accumulation_steps batches of the
        // epoch on resume (docs/conventions.md §3): the position is the global step.
        // create_scheduler builds get_scheduler(args.lr_scheduler_type, num_warmup_steps=
        // args.get_warmup_steps(max_steps), num_training_steps=max_steps): a LambdaLR whose arguments
        // are in training_args.bin and trainer_state.json, not in scheduler.pt.
        static const FrameworkConventions c{
            .epochPositionFromOtherCounters = {true, "transformers@000945a9 src/transformers/trainer.py _inner_training_loop (steps_trained_in_current_epoch)"},
            .lambdaScheduleFromTrainingArgs = {true, "transformers@c26b2a29e500 src/transformers/trainer.py create_scheduler, training_args.py get_warmup_steps"},
            .lossMetricNames = {"loss"},
            .lossMetricSource = "transformers@000945a9 src/transformers/trainer.py _maybe_log_save_evaluate (logs[\"loss\"], trainer_state.json log_history)"};
        return c;
    }

    // Trainer._save_checkpoint writes the model, optimizer.pt, scheduler.pt, rng_state*.pth and
    // training_args.bin, and trainer_state.json after them (docs/conventions.md §3).
    std::optional<Recognition> recogniseFolder(const FolderListing& folder, const CheckpointLayout& listed) const override
    {
        if (!folder.has("trainer_state.json") && !folder.has("training_args.bin"))
            return std::nullopt;
        CheckpointLayout out = listed;
        out.layout = Layout::HfTrainer;
        out.complete = folder.has("trainer_state.json");
        if (!out.complete)
            out.incompleteReason = "no trainer_state.json, which the Trainer writes last";
        return Recognition{0.85, out.complete ? "trainer_state.json (transformers' Trainer)" : "training_args.bin (transformers' Trainer)", std::move(out)};
    }
};

} // namespace

const FrameworkAdapter& hfTrainerAdapter()
{
    static const HfTrainerAdapter adapter;
    return adapter;
}

} // namespace ckpt::frameworks
