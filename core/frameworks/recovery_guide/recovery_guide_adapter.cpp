// SPDX-License-Identifier: MIT
// The recovery guide's layouts: a checkpoint-NNNNNNN/ folder with manifest.json and a COMPLETE
// marker, and a single file of every part. See README.md beside this file.
#include "ckpt/frameworks/framework_adapter.h"

namespace ckpt::frameworks {
namespace {

class RecoveryGuideDirAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::RecoveryGuideDir; }
    const char* name() const override { return "recovery_guide_dir"; }
    const FrameworkConventions& conventions() const override
    {
        // packaging/python/ckpt_writer.py logs {"step", "loss", ...} to metrics.jsonl.
        static const FrameworkConventions c{.lossMetricNames = {"loss"}, .lossMetricSource = "packaging/python/ckpt_writer.py"};
        return c;
    }

    // The guide's §5 (atomic commit): parts first, manifest.json with their hashes, COMPLETE last.
    std::optional<Recognition> recogniseFolder(const FolderListing& folder, const CheckpointLayout& listed) const override
    {
        if (!folder.has("manifest.json"))
            return std::nullopt;
        CheckpointLayout out = listed;
        out.layout = Layout::RecoveryGuideDir;
        out.complete = folder.has("COMPLETE");
        if (!out.complete)
            out.incompleteReason = "no COMPLETE marker: the save did not finish";
        return Recognition{0.9, "manifest.json (the recovery guide's committed checkpoint folder)", std::move(out)};
    }
};

class RecoveryGuideFileAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::RecoveryGuideFile; }
    const char* name() const override { return "recovery_guide_file"; }
    const FrameworkConventions& conventions() const override
    {
        static const FrameworkConventions c;
        return c;
    }

    // The guide's single-file save: model, optimizer, scheduler, scaler, rng and counters in one dict.
    std::optional<ContentClaim> recogniseContent(const ContentProbe& p) const override
    {
        if (p.has("model") && p.has("optimizer") && (p.has("global_step") || p.has("batch_pos")))
            return ContentClaim{0.6, "model, optimizer and global_step or batch_pos in one dict (the recovery guide's single file)"};
        return std::nullopt;
    }
};

} // namespace

const FrameworkAdapter& recoveryGuideDirAdapter()
{
    static const RecoveryGuideDirAdapter adapter;
    return adapter;
}

const FrameworkAdapter& recoveryGuideFileAdapter()
{
    static const RecoveryGuideFileAdapter adapter;
    return adapter;
}

} // namespace ckpt::frameworks
