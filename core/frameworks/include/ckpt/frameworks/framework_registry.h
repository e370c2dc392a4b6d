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

/// The layout of a file met while listing a run, by its name and folder alone (Generic when no
/// adapter claims it).
Layout layoutFromFileName(const std::string& path);

/// Whether a folder met while listing a run is stood for by another (an adapter's listedThroughAnother).
bool listedThroughAnother(const std::string& folder);

/// Why the save of the checkpoint at `path` did not finish, by a marker a framework leaves beside
/// it while saving; empty when there is none.
std::string unfinishedSaveReason(const std::string& path);

/// The save counter in a checkpoint's name where its layout's names count saves, not steps.
std::optional<int64_t> saveIndexFromName(Layout layout, const std::string& base);

/// Every framework's names for its training loss (the adapters' lossMetricNames in registry order,
/// then the common ones no adapter owns yet), each once: what a plot of a run's logs draws first.
const std::vector<std::string>& lossMetricNames();

/// The layout a single pickled file's top-level keys say, with the reason, when an adapter claims
/// them; the most confident claim wins.
std::optional<std::pair<Layout, std::string>> recogniseContent(const ContentProbe& probe);

} // namespace ckpt
