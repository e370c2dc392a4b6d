// SPDX-License-Identifier: MIT
#include "ckpt/state/run_discovery.h"

#include "ckpt/frameworks/checkpoint_layout.h"
#include "ckpt/frameworks/framework_registry.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>

namespace fs = std::filesystem;

namespace ckpt {
namespace {

constexpr int kMaxDepth = 3;

bool isCheckpointDirectory(const fs::path& dir)
{
    return isCheckpointFolder(dir.string(), detectLayout(dir.string()), true);
}

DiscoveredRun singleCheckpoint(const fs::path& path)
{
    const CheckpointLayout layout = detectLayout(path.string());
    RunCheckpoint checkpoint;
    checkpoint.path = path.string();
    checkpoint.step = layout.stepFromName;
    checkpoint.layout = layout.layout;
    checkpoint.complete = layout.complete;
    checkpoint.incompleteReason = layout.incompleteReason;
    checkpoint.latest = true;
    if (!checkpoint.step)
        checkpoint.step = recordedStep(checkpoint);
    DiscoveredRun run;
    run.path = path.string();
    run.history.path = path.string();
    run.history.checkpoints.push_back(std::move(checkpoint));
    run.history.latestFrom = "the only checkpoint";
    run.singleCheckpoint = true;
    return run;
}

// The child of `dir` that `path` lies in; `dir` itself for a checkpoint directly inside it.
fs::path groupOf(const fs::path& dir, const fs::path& path)
{
    const fs::path relative = path.lexically_relative(dir);
    if (relative.empty() || std::distance(relative.begin(), relative.end()) <= 1)
        return dir;
    return dir / *relative.begin();
}

void discover(const fs::path& dir, int depth, std::vector<DiscoveredRun>& out)
{
    RunHistory history = readRunHistory(dir.string());
    std::map<fs::path, int> groups;
    for (const RunCheckpoint& checkpoint : history.checkpoints)
        ++groups[groupOf(dir, checkpoint.path)];
    // Checkpoints directly here, or all in one subtree: this folder is the run (its metrics too).
    if (groups.size() <= 1 || groups.contains(dir) || depth >= kMaxDepth) {
        // Only finished models without steps (a folder of .nemo files): separate models, not a run's saves.
        const bool models = !history.checkpoints.empty() && std::all_of(history.checkpoints.begin(), history.checkpoints.end(),
            [](const RunCheckpoint& c) { return isFinalArtefact(c.layout) && !c.step; });
        if (models && history.checkpoints.size() > 1) {
            for (const RunCheckpoint& c : history.checkpoints)
                out.push_back(singleCheckpoint(c.path));
        } else if (!history.checkpoints.empty()) {
            out.push_back({dir.string(), std::move(history), false, false});
        }
        return;
    }
    for (const auto& [group, count] : groups)
        discover(group, depth + 1, out);
}

bool hasCheckpointExtension(const fs::path& file)
{
    static const char* const extensions[] = {".pt", ".pth", ".bin", ".ckpt", ".safetensors", ".pkl"};
    const std::string ext = file.extension().string();
    for (const char* known : extensions) {
        if (ext == known)
            return true;
    }
    return false;
}

// A folder of loose checkpoint files with no run structure (exports, downloads): one run of
// them, in name order, so each still opens.
DiscoveredRun looseFiles(const fs::path& dir)
{
    DiscoveredRun run;
    run.path = dir.string();
    run.history.path = dir.string();
    run.looseFiles = true;
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, fs::directory_options::skip_permission_denied, ec)) {
        if (entry.is_regular_file(ec) && hasCheckpointExtension(entry.path()))
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
        RunCheckpoint checkpoint;
        checkpoint.path = file.string();
        checkpoint.step = stepFromName(file.filename().string());
        checkpoint.layout = layoutFromFileName(file.string());
        run.history.checkpoints.push_back(std::move(checkpoint));
    }
    return run;
}

// A folder of model folders (downloads, exports: each a save_pretrained folder, none with a step in
// its name): each is one checkpoint of its own, never one run of all of them.
std::vector<DiscoveredRun> modelFolders(const fs::path& dir)
{
    std::vector<fs::path> folders;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, fs::directory_options::skip_permission_denied, ec)) {
        if (!entry.is_directory(ec) || entry.path().filename().string().starts_with("."))
            continue;
        try {
            if (conventionsOf(detectLayout(entry.path().string()).layout).finalArtefact)
                folders.push_back(entry.path());
        } catch (const std::exception&) {
        }
    }
    std::sort(folders.begin(), folders.end());
    std::vector<DiscoveredRun> runs;
    for (const fs::path& f : folders)
        runs.push_back(singleCheckpoint(f));
    return runs;
}

} // namespace

std::vector<DiscoveredRun> discoverRuns(const std::string& path)
{
    std::error_code ec;
    fs::path p = fs::path(path).lexically_normal();
    if (!p.has_filename() && p.has_parent_path())
        p = p.parent_path(); // "run/" -> "run", so checkpoint paths group under it
    if (!fs::exists(p, ec))
        throw std::runtime_error(path + ": no such file or directory");
    if (!fs::is_directory(p, ec))
        return {singleCheckpoint(p)};
    if (isCheckpointDirectory(p))
        return {singleCheckpoint(p)};
    std::vector<DiscoveredRun> runs;
    discover(p, 0, runs);
    if (runs.empty())
        runs = modelFolders(p);
    if (runs.empty()) {
        DiscoveredRun loose = looseFiles(p);
        if (!loose.history.checkpoints.empty())
            runs.push_back(std::move(loose));
    }
    if (runs.empty())
        throw std::runtime_error(path + ": no checkpoints found (checkpoint-*/ or global_step*/ folders, *.ckpt files, "
                                        "or files named by step, up to five levels deep)");
    return runs;
}

} // namespace ckpt
