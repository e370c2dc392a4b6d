// SPDX-License-Identifier: MIT
// DeepSpeed: global_stepN/ folders of per-rank model and ZeRO optimizer files. See README.md beside
// this file.
#include "ckpt/frameworks/framework_adapter.h"

namespace ckpt::frameworks {
namespace {

class DeepSpeedAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::DeepSpeed; }
    const char* name() const override { return "deepspeed"; }
    const FrameworkConventions& conventions() const override
    {
        // Each rank's *_optim_states.pt holds its slice of one flat fp32 partition per group
        // (docs/conventions.md §5).
        static const FrameworkConventions c{
            .optimizerPartitionedAcrossRanks = {true, "DeepSpeed@38327e07 deepspeed/runtime/zero/stage_1_and_2.py state_dict"}};
        return c;
    }

    // _get_ckpt_name and _get_zero_ckpt_name: mp_rank_XX_model_states.pt, zero_pp_rank_N_mp_rank_XX_optim_states.pt.
    std::optional<Recognition> recogniseFolder(const FolderListing& folder, const CheckpointLayout& listed) const override
    {
        if (!folder.any([](const std::string& n) { return n.ends_with("_model_states.pt") || n.ends_with("_optim_states.pt"); }))
            return std::nullopt;
        CheckpointLayout out = listed;
        out.layout = Layout::DeepSpeed;
        return Recognition{0.8, "*_model_states.pt / *_optim_states.pt files (DeepSpeed's engine save)", std::move(out)};
    }

    // A single engine file: module with ds_version or global_steps.
    std::optional<ContentClaim> recogniseContent(const ContentProbe& p) const override
    {
        if (p.has("module") && (p.has("ds_version") || p.has("global_steps")))
            return ContentClaim{0.7, "module with ds_version or global_steps (a DeepSpeed engine file)"};
        return std::nullopt;
    }
};

} // namespace

const FrameworkAdapter& deepSpeedAdapter()
{
    static const DeepSpeedAdapter adapter;
    return adapter;
}

} // namespace ckpt::frameworks
