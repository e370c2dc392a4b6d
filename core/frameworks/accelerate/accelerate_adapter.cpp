// SPDX-License-Identifier: MIT
// accelerate's save_state folders. See README.md beside this file.
#include "ckpt/frameworks/framework_adapter.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

namespace ckpt::frameworks {
namespace {

class AccelerateAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::Accelerate; }
    const char* name() const override { return "accelerate"; }
    const FrameworkConventions& conventions() const override
    {
        // AcceleratedScheduler counts _step_count up on every accumulation step between syncs
        // (GradientAccumulationPlugin.adjust_scheduler, on by default) and steps num_processes times
        // per sync: the two never keep torch's relation.
        // register_for_checkpointing objects are the user's own (custom_checkpoint_<i>.pkl,
        // checkpointing.py save_custom_state): what their `step` or `epoch` means is the user's
        // convention. random_states_<i>.pkl's "step" is Accelerator.step: accumulate() entries since
        // the end of the last dataloader pass, reset to 0 there, per process; only the gradient
        // accumulation phase is restored from it (accelerator.py _do_sync). It is not a global step.
        static const FrameworkConventions c{
            .schedulerStepCountOwnCadence = {true, "accelerate@16cb6eb8 src/accelerate/scheduler.py AcceleratedScheduler.step"},
            .userObjectFilePrefix = {"custom_checkpoint_", "accelerate@8d1479def0bb src/accelerate/checkpointing.py save_custom_state"},
            .rngFileStepName = {"accelerator.step", "accelerate@16cb6eb8 src/accelerate/accelerator.py _do_sync, checkpointing.py save_accelerator_state"},
            .noGlobalStepInFiles = {true, "accelerate@8d1479def0bb src/accelerate/checkpointing.py save_accelerator_state (docs/conventions.md §2)"}};
        return c;
    }

    // save_state writes one random_states_<process_index>.pkl per process (accelerate@8d1479def0bb
    // src/accelerate/checkpointing.py save_accelerator_state): their count is the number of
    // processes, which accelerate records nowhere else.
    // ProjectConfiguration.automatic_checkpoint_naming: checkpoints/checkpoint_<i>, i counting saves.
    std::optional<int64_t> saveIndexFromName(const std::string& base) const override
    {
        if (!base.starts_with("checkpoint_"))
            return std::nullopt;
        const std::string digits = base.substr(11);
        if (digits.empty() || digits.size() >= 12 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
            return std::nullopt;
        return std::stoll(digits);
    }

    std::vector<NamedFact> factsFromNames(const CheckpointLayout& layout) const override
    {
        std::set<int> ranks;
        for (const auto& f : layout.files) {
            if (f.role == "rng" && f.rank >= 0 && std::filesystem::path(f.path).filename().string().starts_with("random_states_"))
                ranks.insert(f.rank);
        }
        if (ranks.empty())
            return {};
        return {NamedFact{"environment", "accelerate.num_processes", std::to_string(ranks.size()), "(random_states_<i>.pkl files)"}};
    }

    std::optional<Recognition> recogniseFolder(const FolderListing& folder, const CheckpointLayout& listed) const override
    {
        // accelerate's save_state names (huggingface/accelerate@8d1479def0bb src/accelerate/utils/constants.py,
        // checkpointing.py save_accelerator_state; accelerator.py save_state): random_states_<process>.pkl,
        // optimizer.bin / optimizer_<i>.bin, scheduler.bin, custom_checkpoint_<i>.pkl. Without its RNG
        // files (deleted, or a load that failed) the folder is still accelerate's.
        if (!folder.any([](const std::string& n) {
                return n.starts_with("random_states_") || n == "optimizer.bin" || (n.starts_with("optimizer_") && n.ends_with(".bin"))
                    || (n.starts_with("custom_checkpoint_") && n.ends_with(".pkl"));
            }))
            return std::nullopt;
        CheckpointLayout out = listed;
        out.layout = Layout::Accelerate;
        // checkpoint_<i> counts saves (ProjectConfiguration.automatic_checkpoint_naming), not steps;
        // accelerate saves no step at all (the Accelerator.step of random_states_<i>.pkl, from 0.32 on,
        // counts micro-batches since the last dataloader end).
        if (folder.base.starts_with("checkpoint_"))
            out.stepFromName.reset();
        return Recognition{0.7, "random_states_<i>.pkl / optimizer.bin (accelerate's save_state)", std::move(out)};
    }
};

} // namespace

const FrameworkAdapter& accelerateAdapter()
{
    static const AccelerateAdapter adapter;
    return adapter;
}

} // namespace ckpt::frameworks
