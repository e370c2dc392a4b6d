// SPDX-License-Identifier: MIT
// A model-only export: torchtitan's last step, save_pretrained folders. See README.md beside this file.
#include "ckpt/frameworks/framework_adapter.h"
#include "ckpt/frameworks/model_export.h"

namespace ckpt::frameworks {
namespace {

class ModelExportAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::ModelExport; }
    const char* name() const override { return "model_export"; }
    const FrameworkConventions& conventions() const override
    {
        static const FrameworkConventions c{.finalArtefact = true};
        return c;
    }

    // torchtitan's _save_last_step with last_save_model_only (the default) and last_save_in_hf writes
    // only the model, as safetensors, into the last step-N (torchtitan@970fbddb components/checkpoint.py;
    // docs/conventions.md §7); save_pretrained folders look the same. Nothing marks the commit.
    std::optional<Recognition> recogniseFolder(const FolderListing& folder, const CheckpointLayout& listed) const override
    {
        if (!isModelExportListing(folder.files))
            return std::nullopt;
        CheckpointLayout out = listed;
        out.layout = Layout::ModelExport;
        return Recognition{0.6, "model weights and configs only (save_pretrained, torchtitan's last-step export)", std::move(out)};
    }
};

} // namespace

const FrameworkAdapter& modelExportAdapter()
{
    static const ModelExportAdapter adapter;
    return adapter;
}

} // namespace ckpt::frameworks
