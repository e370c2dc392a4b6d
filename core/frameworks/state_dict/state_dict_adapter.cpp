// SPDX-License-Identifier: MIT
// A file holding only a model state_dict (torch.save(model.state_dict())). No framework: its
// parts are found by structure. See README.md beside this file.
#include "ckpt/frameworks/framework_adapter.h"

namespace ckpt::frameworks {
namespace {

class StateDictAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::StateDict; }
    const char* name() const override { return "state_dict"; }
    const FrameworkConventions& conventions() const override
    {
        static const FrameworkConventions c{.namesAFramework = false};
        return c;
    }

    std::optional<ContentClaim> recogniseContent(const ContentProbe& p) const override
    {
        if (p.stateDictScore > 0)
            return ContentClaim{0.1, "tensors under parameter names only (a model state_dict)"};
        return std::nullopt;
    }
};

} // namespace

const FrameworkAdapter& stateDictAdapter()
{
    static const StateDictAdapter adapter;
    return adapter;
}

} // namespace ckpt::frameworks
