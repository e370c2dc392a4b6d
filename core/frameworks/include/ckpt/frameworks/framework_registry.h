// SPDX-License-Identifier: MIT
// The one list of framework adapters, and the questions the rest of core asks it: which framework a
// path is, which a single file's contents are, and what a layout's conventions are.
#pragma once

#include "ckpt/frameworks/framework_adapter.h"

#include <span>

namespace ckpt {

/// Every adapter, the generic fallback last.
std::span<const FrameworkAdapter* const> frameworkAdapters();

/// The adapter of a layout (the generic one for Layout::Generic).
const FrameworkAdapter& frameworkOf(Layout layout);

/// The conventions of a layout's framework.
inline const FrameworkConventions& conventionsOf(Layout layout) { return frameworkOf(layout).conventions(); }

/// The layout a single pickled file's top-level keys say, with the reason, when an adapter claims
/// them; the most confident claim wins.
std::optional<std::pair<Layout, std::string>> recogniseContent(const ContentProbe& probe);

} // namespace ckpt
