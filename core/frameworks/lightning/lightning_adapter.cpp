// SPDX-License-Identifier: MIT
// PyTorch Lightning: one .ckpt file per save. See README.md beside this file.
#include "ckpt/frameworks/framework_adapter.h"

namespace ckpt::frameworks {
namespace {

class LightningAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::Lightning; }
    const char* name() const override { return "lightning"; }
    const FrameworkConventions& conventions() const override
    {
        // The fit loop restores the epoch's batch position from loops.fit_loop.epoch_loop.batch_progress
        // (docs/conventions.md §4).
        // The loss's name is the module's own self.log("train_loss", ...); with on_step and on_epoch both
        // set, Lightning logs it as train_loss_step and train_loss_epoch (logger_connector/result.py).
        static const FrameworkConventions c{
            .epochPositionFromOtherCounters = {true, "Lightning@7f0c3436 src/lightning/pytorch/loops/training_epoch_loop.py (batch_progress)"},
            .lossMetricNames = {"train_loss", "train_loss_step"},
            .lossMetricSource = "Lightning@862314360457 src/lightning/pytorch/trainer/connectors/logger_connector/result.py (_step/_epoch suffixes)"};
        return c;
    }

    // ModelCheckpoint names its files *.ckpt; the contents confirm (recogniseContent).
    std::optional<Recognition> recogniseFile(const CheckpointLayout& listed) const override
    {
        if (!listed.path.ends_with(".ckpt"))
            return std::nullopt;
        CheckpointLayout out = listed;
        out.layout = Layout::Lightning;
        return Recognition{0.3, "a .ckpt file (Lightning's ModelCheckpoint names them so)", std::move(out), true};
    }

    std::optional<double> claimFileName(const std::string& path) const override
    {
        if (path.ends_with(".ckpt"))
            return 0.3;
        return std::nullopt;
    }

    // _CheckpointConnector.dump_checkpoint: pytorch-lightning_version, state_dict, optimizer_states,
    // loops, callbacks (docs/conventions.md §4).
    std::optional<ContentClaim> recogniseContent(const ContentProbe& p) const override
    {
        if (p.has("pytorch-lightning_version") || (p.has("state_dict") && p.has("optimizer_states")))
            return ContentClaim{0.8, "pytorch-lightning_version / state_dict with optimizer_states (Lightning's dump_checkpoint)"};
        return std::nullopt;
    }
};

} // namespace

const FrameworkAdapter& lightningAdapter()
{
    static const LightningAdapter adapter;
    return adapter;
}

} // namespace ckpt::frameworks
