// SPDX-License-Identifier: MIT
#include "ckpt/frameworks/framework_registry.h"

#include <algorithm>
#include <array>

namespace ckpt {

namespace frameworks {
// Each adapter's one instance, defined in its folder.
const FrameworkAdapter& megatronAdapter();
const FrameworkAdapter& nemoAdapter();
const FrameworkAdapter& nemoArchiveAdapter();
const FrameworkAdapter& recoveryGuideDirAdapter();
const FrameworkAdapter& recoveryGuideFileAdapter();
const FrameworkAdapter& hfTrainerAdapter();
const FrameworkAdapter& lightningAdapter();
const FrameworkAdapter& deepSpeedAdapter();
const FrameworkAdapter& dcpAdapter();
const FrameworkAdapter& accelerateAdapter();
const FrameworkAdapter& modelExportAdapter();
const FrameworkAdapter& stateDictAdapter();
const FrameworkAdapter& genericAdapter();
} // namespace frameworks

std::span<const FrameworkAdapter* const> frameworkAdapters()
{
    using namespace frameworks;
    // Equal confidences go to the earlier adapter; the generic fallback claims nothing and is last.
    static const std::array<const FrameworkAdapter*, 13> all = {
        &megatronAdapter(), &nemoAdapter(),       &nemoArchiveAdapter(), &recoveryGuideDirAdapter(), &recoveryGuideFileAdapter(),
        &hfTrainerAdapter(), &lightningAdapter(), &deepSpeedAdapter(),   &dcpAdapter(),              &accelerateAdapter(),
        &modelExportAdapter(), &stateDictAdapter(), &genericAdapter()};
    return all;
}

const FrameworkAdapter& frameworkOf(Layout layout)
{
    for (const FrameworkAdapter* a : frameworkAdapters()) {
        if (a->layout() == layout)
            return *a;
    }
    return frameworks::genericAdapter();
}

std::optional<std::pair<Layout, std::string>> recogniseContent(const ContentProbe& probe)
{
    std::optional<std::pair<Layout, std::string>> best;
    double bestConfidence = 0;
    for (const FrameworkAdapter* a : frameworkAdapters()) {
        const std::optional<ContentClaim> c = a->recogniseContent(probe);
        if (c && c->confidence > bestConfidence) {
            best = {a->layout(), c->reason};
            bestConfidence = c->confidence;
        }
    }
    return best;
}

const std::vector<std::string>& lossMetricNames()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        auto add = [&](const char* n) {
            if (std::find(out.begin(), out.end(), n) == out.end())
                out.emplace_back(n);
        };
        for (const FrameworkAdapter* a : frameworkAdapters()) {
            for (const char* n : a->conventions().lossMetricNames)
                add(n);
        }
        // Names no adapter owns yet: torchtitan's MetricsProcessor.log (torchtitan components/metrics.py, read in
        // the search corpus's stored copy), and the spellings of users' own loops.
        for (const char* n : {"loss_metrics/global_avg_loss", "train/loss", "training_loss"})
            add(n);
        return out;
    }();
    return names;
}

Layout layoutFromFileName(const std::string& path)
{
    Layout best = Layout::Generic;
    double bestConfidence = 0;
    for (const FrameworkAdapter* a : frameworkAdapters()) {
        const std::optional<double> c = a->claimFileName(path);
        if (c && *c > bestConfidence) {
            best = a->layout();
            bestConfidence = *c;
        }
    }
    return best;
}

bool listedThroughAnother(const std::string& folder)
{
    return std::any_of(frameworkAdapters().begin(), frameworkAdapters().end(),
                       [&](const FrameworkAdapter* a) { return a->listedThroughAnother(folder); });
}

std::string unfinishedSaveReason(const std::string& path)
{
    for (const FrameworkAdapter* a : frameworkAdapters()) {
        if (std::string why = a->unfinishedSaveBeside(path); !why.empty())
            return why;
    }
    return {};
}

std::optional<int64_t> saveIndexFromName(Layout layout, const std::string& base) { return frameworkOf(layout).saveIndexFromName(base); }

// What an adapter does not override it does not claim.
std::optional<Recognition> FrameworkAdapter::recogniseFolder(const FolderListing&, const CheckpointLayout&) const { return std::nullopt; }
std::optional<Recognition> FrameworkAdapter::recogniseFile(const CheckpointLayout&) const { return std::nullopt; }
std::optional<double> FrameworkAdapter::claimFileName(const std::string&) const { return std::nullopt; }
std::optional<int64_t> FrameworkAdapter::saveIndexFromName(const std::string&) const { return std::nullopt; }
std::optional<ContentClaim> FrameworkAdapter::recogniseContent(const ContentProbe&) const { return std::nullopt; }
std::string FrameworkAdapter::unfinishedSaveBeside(const std::string&) const { return {}; }
bool FrameworkAdapter::listedThroughAnother(const std::string&) const { return false; }
std::vector<NamedFact> FrameworkAdapter::factsFromNames(const CheckpointLayout&) const { return {}; }

bool FolderListing::has(std::string_view name) const { return std::binary_search(files.begin(), files.end(), name); }

} // namespace ckpt
