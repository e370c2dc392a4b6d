// SPDX-License-Identifier: MIT
#include "ckpt/frameworks/checkpoint_layout.h"

#include "ckpt/formats/rank_names.h"
#include "ckpt/frameworks/framework_registry.h"
#include "file_roles.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace fs = std::filesystem;

namespace ckpt {

bool opensAsCheckpointFile(const LayoutFile& file)
{
    static const std::set<std::string> notOpened = {"manifest", "complete", "trainer_state", "metadata", "config",
                                                    "model_shard", "model_index", "distributed", "other"};
    if (notOpened.contains(file.role) || file.path.ends_with(".distcp"))
        return false;
    return !file.path.ends_with(".json") || file.path.ends_with(".safetensors.index.json");
}

const char* layoutName(Layout layout) { return frameworkOf(layout).name(); }

std::string dcpFolder(const CheckpointLayout& layout)
{
    return layout.layout == Layout::Dcp ? layout.path : layout.distributedDir;
}

bool isFinalArtefact(Layout layout) { return conventionsOf(layout).finalArtefact; }

namespace {

// The best claim among the adapters', or the listing as it is (Layout::Generic).
template <class Claim> CheckpointLayout bestClaim(const CheckpointLayout& listed, Claim claim)
{
    std::optional<Recognition> best;
    for (const FrameworkAdapter* a : frameworkAdapters()) {
        std::optional<Recognition> r = claim(*a);
        if (r && (!best || r->confidence > best->confidence))
            best = std::move(r);
    }
    if (!best)
        return listed;
    best->layout.recognisedBy = std::move(best->reason);
    best->layout.refineByContent = best->provisional;
    return std::move(best->layout);
}

FolderListing listFolder(const std::string& path)
{
    FolderListing folder{path, fs::path(path).filename().string(), {}, {}};
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(path, fs::directory_options::skip_permission_denied, ec)) {
        if (e.is_regular_file(ec))
            folder.files.push_back(e.path().filename().string());
        else if (e.is_directory(ec))
            folder.folders.push_back(e.path().filename().string());
    }
    std::sort(folder.files.begin(), folder.files.end());
    std::sort(folder.folders.begin(), folder.folders.end());
    return folder;
}

} // namespace

CheckpointLayout detectLayout(const std::string& path)
{
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        throw std::runtime_error(path + ": no such file or directory");
    CheckpointLayout listed;
    listed.path = path;
    listed.stepFromName = stepFromName(fs::path(path).filename().string());
    listed.refineByContent = true; // until an adapter claims it
    if (std::string why = unfinishedSaveReason(path); !why.empty()) {
        listed.complete = false;
        listed.incompleteReason = std::move(why);
    }

    if (!fs::is_directory(st)) {
        int rank = -1;
        const std::string role = frameworks::roleOfFile(fs::path(path).filename().string(), rank);
        listed.files.push_back({path, role == "other" ? "state" : role, rank});
        return bestClaim(listed, [&](const FrameworkAdapter& a) { return a.recogniseFile(listed); });
    }

    const FolderListing folder = listFolder(path);
    // A safetensors index opens as its whole set (formats/safetensors_index.h), so the shards it
    // names are read through it: each tensor is counted once, and the set is one W.
    const bool safetensorsIndex = folder.any([](const std::string& n) { return n.ends_with(".safetensors.index.json"); });
    for (const auto& n : folder.files) {
        int rank = -1;
        std::string role = frameworks::roleOfFile(n, rank);
        if (safetensorsIndex && role == "model" && frameworks::isSafetensorsShardName(n))
            role = "model_shard";
        listed.files.push_back({(fs::path(path) / n).string(), role, rank});
    }
    return bestClaim(listed, [&](const FrameworkAdapter& a) { return a.recogniseFolder(folder, listed); });
}

} // namespace ckpt
