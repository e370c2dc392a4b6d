// SPDX-License-Identifier: MIT
// torch.distributed.checkpoint: a folder of .distcp files and .metadata. See README.md beside this file.
#include "ckpt/frameworks/framework_adapter.h"

namespace ckpt::frameworks {
namespace {

class DcpAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::Dcp; }
    const char* name() const override { return "dcp"; }
    const FrameworkConventions& conventions() const override
    {
        static const FrameworkConventions c;
        return c;
    }

    std::optional<Recognition> recogniseFolder(const FolderListing& folder, const CheckpointLayout& listed) const override
    {
        if (!folder.has(".metadata") && !folder.any([](const std::string& n) { return n.ends_with(".distcp"); }))
            return std::nullopt;
        CheckpointLayout out = listed;
        out.layout = Layout::Dcp;
        out.storage = StateStorage::Dcp;
        // Saves without a process group write one __<rank>.metadata per rank instead (formats.md §5.1).
        out.complete = folder.has(".metadata") || folder.any([](const std::string& n) { return n.starts_with("__") && n.ends_with(".metadata"); });
        if (!out.complete)
            out.incompleteReason = "no .metadata file, which DCP writes last";
        return Recognition{0.75, ".metadata / .distcp files (torch.distributed.checkpoint)", std::move(out)};
    }
};

} // namespace

const FrameworkAdapter& dcpAdapter()
{
    static const DcpAdapter adapter;
    return adapter;
}

} // namespace ckpt::frameworks
