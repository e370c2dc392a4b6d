// SPDX-License-Identifier: MIT
// The fallback: a file or folder no adapter claims; its parts are found by structure. See README.md
// beside this file.
#include "ckpt/frameworks/framework_adapter.h"

namespace ckpt::frameworks {
namespace {

class GenericAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::Generic; }
    const char* name() const override { return "generic"; }
    const FrameworkConventions& conventions() const override
    {
        static const FrameworkConventions c{.namesAFramework = false};
        return c;
    }
};

} // namespace

const FrameworkAdapter& genericAdapter()
{
    static const GenericAdapter adapter;
    return adapter;
}

} // namespace ckpt::frameworks
