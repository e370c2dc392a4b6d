// SPDX-License-Identifier: MIT
#include "ckpt/state/run_history.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/python_json.h"
#include "ckpt/io/errors.h"
#include "ckpt/io/read_only_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace ckpt {
namespace {

constexpr int kMaxDepth = 3;
constexpr std::size_t kMaxCheckpoints = 100000;

bool isCheckpointFileName(const std::string& name)
{
    return name.ends_with(".ckpt") || (stepFromName(name) && (name.ends_with(".pt") || name.ends_with(".pth")));
}


// A pointer file holds a name, not data.
constexpr std::size_t kPointerLimit = 4096;

std::string readText(const fs::path& p)
{
    std::string s = readBoundedFile(p.string(), kPointerLimit);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
        s.pop_back();
    return s;
}

void addPoint(RunHistory& h, const std::string& metric, int64_t step, const nlohmann::json& v)
{
    if (v.is_number())
        h.series[metric].emplace_back(step, v.get<double>());
}

// metrics.jsonl: one JSON object per line with a "step" and numbers.
void readMetricsJsonl(RunHistory& h, const fs::path& p)
{
    std::istringstream in(readBoundedFile(p.string(), kMetricsLogLimit));
    std::string line;
    int lineNo = 0;
    while (std::getline(in, line)) {
        ++lineNo;
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        try {
            const auto j = parsePythonJson(line);
            if (!j.is_object() || !j.contains("step") || !j["step"].is_number_integer())
                continue;
            const int64_t step = j["step"].get<int64_t>();
            for (const auto& [k, v] : j.items()) {
                if (k != "step")
                    addPoint(h, k, step, v);
            }
        } catch (const nlohmann::json::exception&) {
            h.warnings.push_back(p.string() + ":" + std::to_string(lineNo) + ": not a JSON object, skipped");
        }
    }
}

// Lightning's CSVLogger: a header row with "step" and metric columns.
void readMetricsCsv(RunHistory& h, const fs::path& p)
{
    std::istringstream in(readBoundedFile(p.string(), kMetricsLogLimit));
    std::string header;
    if (!std::getline(in, header))
        return;
    std::vector<std::string> cols;
    std::stringstream hs(header);
    for (std::string c; std::getline(hs, c, ',');)
        cols.push_back(c);
    const auto stepCol = std::find(cols.begin(), cols.end(), "step") - cols.begin();
    if (static_cast<std::size_t>(stepCol) == cols.size())
        return;
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> cells;
        std::stringstream ls(line);
        for (std::string c; std::getline(ls, c, ',');)
            cells.push_back(c);
        if (static_cast<std::size_t>(stepCol) >= cells.size() || cells[static_cast<std::size_t>(stepCol)].empty())
            continue;
        try {
            const int64_t step = std::stoll(cells[static_cast<std::size_t>(stepCol)]);
            for (std::size_t i = 0; i < cells.size() && i < cols.size(); ++i) {
                if (static_cast<std::ptrdiff_t>(i) != stepCol && !cells[i].empty() && cols[i] != "epoch")
                    h.series[cols[i]].emplace_back(step, std::stod(cells[i]));
            }
        } catch (const std::exception&) {
        }
    }
}

void readMetrics(RunHistory& h, const fs::path& p)
{
    try {
        if (p.extension() == ".jsonl")
            readMetricsJsonl(h, p);
        else
            readMetricsCsv(h, p);
    } catch (const FormatError& e) {
        h.warnings.push_back(p.string() + ": " + e.what() + "; its metrics are not shown");
    }
}

void collect(RunHistory& h, const fs::path& dir, int depth)
{
    std::error_code ec;
    std::vector<fs::directory_entry> entries;
    for (const auto& e : fs::directory_iterator(dir, fs::directory_options::skip_permission_denied, ec))
        entries.push_back(e);
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.path() < b.path(); });
    for (const auto& e : entries) {
        if (h.checkpoints.size() >= kMaxCheckpoints)
            return;
        const std::string name = e.path().filename().string();
        if (name.starts_with(".")) // temporary save folders (.tmp-checkpoint-...) are not checkpoints
            continue;
        if (e.is_directory(ec)) {
            CheckpointLayout layout;
            try {
                layout = detectLayout(e.path().string());
            } catch (const std::exception&) {
                continue;
            }
            if (isCheckpointFolder(e.path().string(), layout, false)) {
                h.checkpoints.push_back({e.path().string(), layout.stepFromName, layout.layout, layout.complete,
                                         layout.incompleteReason});
            } else if (depth < kMaxDepth) {
                collect(h, e.path(), depth + 1);
            }
        } else if (e.is_regular_file(ec)) {
            if (isCheckpointFileName(name))
                h.checkpoints.push_back({e.path().string(), stepFromName(name), name.ends_with(".ckpt") ? Layout::Lightning : Layout::Generic});
            else if (name == "metrics.jsonl" || name == "metrics.csv")
                readMetrics(h, e.path());
        }
    }
}

// The step of a checkpoint whose name does not say it: manifest.json, trainer_state.json, or
// the pickle's global_step (headers and pickle only).
std::optional<int64_t> stepFromContent(const RunCheckpoint& c)
{
    const fs::path p(c.path);
    for (const char* sidecar : {"manifest.json", "trainer_state.json"}) {
        const fs::path j = p / sidecar;
        if (fs::is_regular_file(j)) {
            try {
                const auto doc = parsePythonJson(readBoundedFile(j.string(), kSidecarJsonLimit));
                if (doc.contains("global_step") && doc["global_step"].is_number_integer())
                    return doc["global_step"].get<int64_t>();
            } catch (const std::exception&) {
            }
        }
    }
    // A single file's own global_step. accelerate records none: the "step" of random_states_<i>.pkl
    // is Accelerator.step, reset at every dataloader end (docs/conventions.md §2).
    if (c.layout == Layout::Accelerate)
        return std::nullopt;
    if (fs::is_regular_file(p)) {
        try {
            auto opened = CheckpointFile::open(p.string());
            const NodeId n = opened->graph().get(opened->root(), "global_step");
            if (n != kNoNode && opened->graph()[n].kind == Kind::Int)
                return opened->graph()[n].i;
        } catch (const std::exception&) {
        }
    }
    return std::nullopt;
}

// DeepSpeed's `latest` file names the checkpoint to resume from. Returns false when there is no
// readable, non-empty pointer, so the caller falls back to the newest complete checkpoint.
bool markFromPointer(RunHistory& h, const fs::path& pointer)
{
    if (!fs::is_regular_file(pointer))
        return false;
    std::string target;
    try {
        target = readText(pointer);
    } catch (const FormatError& e) {
        h.warnings.push_back(pointer.string() + ": " + e.what() + "; the newest complete checkpoint is taken as latest");
        return false;
    }
    if (target.empty())
        return false;
    const auto it = std::find_if(h.checkpoints.begin(), h.checkpoints.end(), [&](const RunCheckpoint& c) {
        return fs::path(c.path).filename() == target || fs::path(c.path).filename() == fs::path(target).filename();
    });
    h.latestFrom = "latest file";
    if (it == h.checkpoints.end()) {
        h.warnings.push_back("the latest pointer names '" + target + "', which is not a checkpoint of this run");
        return true;
    }
    it->latest = true;
    if (!it->complete)
        h.warnings.push_back("the latest pointer names " + it->path + ", which is incomplete: " + it->incompleteReason);
    return true;
}

// Megatron-LM's tracker: rank 0 writes the iteration number (or "release") into
// latest_checkpointed_iteration.txt after every rank has saved (checkpointing.py
// get_checkpoint_tracker_filename, read_metadata); it names iter_{:07d}.
bool markFromMegatronTracker(RunHistory& h, const fs::path& tracker)
{
    if (!fs::is_regular_file(tracker))
        return false;
    std::string text;
    try {
        text = readText(tracker);
    } catch (const FormatError& e) {
        h.warnings.push_back(tracker.string() + ": " + e.what() + "; the newest complete checkpoint is taken as latest");
        return false;
    }
    std::string folder = text;
    if (!text.empty() && text.size() < 12 && std::all_of(text.begin(), text.end(), ::isdigit)) {
        char name[32];
        std::snprintf(name, sizeof name, "iter_%07lld", std::stoll(text));
        folder = name;
    } else if (text != "release") {
        h.warnings.push_back(tracker.string() + ": '" + text + "' is neither an iteration number nor 'release'");
        return false;
    }
    const auto it = std::find_if(h.checkpoints.begin(), h.checkpoints.end(),
                                 [&](const RunCheckpoint& c) { return fs::path(c.path).filename() == folder; });
    h.latestFrom = "latest_checkpointed_iteration.txt";
    if (it == h.checkpoints.end()) {
        h.warnings.push_back("latest_checkpointed_iteration.txt names '" + folder + "', which is not a checkpoint of this run");
        return true;
    }
    it->latest = true;
    if (!it->complete)
        h.warnings.push_back("the tracker names " + it->path + ", which is incomplete: " + it->incompleteReason);
    return true;
}

void markLatest(RunHistory& h, const fs::path& dir)
{
    if (markFromPointer(h, dir / "latest") || markFromMegatronTracker(h, dir / "latest_checkpointed_iteration.txt"))
        return;
    // A model-only export (torchtitan's last step) is not a resume point; it is latest only in a
    // folder of exports.
    for (const bool exports : {false, true}) {
        for (auto it = h.checkpoints.rbegin(); it != h.checkpoints.rend(); ++it) {
            if (it->complete && (it->layout == Layout::ModelExport) == exports) {
                it->latest = true;
                h.latestFrom = exports ? "newest model export" : "newest complete checkpoint";
                return;
            }
        }
    }
}

// Lightning: the newest .ckpt's ModelCheckpoint callback state names the best file.
bool markLightningBest(RunHistory& h)
{
    for (auto it = h.checkpoints.rbegin(); it != h.checkpoints.rend(); ++it) {
        if (!it->path.ends_with(".ckpt"))
            continue;
        try {
            auto file = CheckpointFile::open(it->path);
            const ValueGraph& g = file->graph();
            const NodeId callbacks = g.get(file->root(), "callbacks");
            if (!g.valid(callbacks) || g[callbacks].kind != Kind::Dict)
                return false;
            const Node& cb = g[callbacks];
            for (std::size_t i = 0; i + 1 < cb.items.size(); i += 2) {
                const NodeId path = g.get(cb.items[i + 1], "best_model_path");
                if (!g.valid(path) || g[path].kind != Kind::String || g[path].text.empty())
                    continue;
                const std::string best = fs::path(g[path].text).filename().string();
                for (auto& c : h.checkpoints) {
                    if (fs::path(c.path).filename() == best)
                        c.best = true;
                }
                h.bestFrom = it->path + ": callbacks/ModelCheckpoint/best_model_path";
                return true;
            }
        } catch (const std::exception& e) {
            h.warnings.push_back(e.what());
        }
        return false;
    }
    return false;
}

void markBest(RunHistory& h)
{
    if (markLightningBest(h))
        return;
    // Hugging Face: the newest trainer_state.json names the best checkpoint.
    for (auto it = h.checkpoints.rbegin(); it != h.checkpoints.rend(); ++it) {
        const fs::path state = fs::path(it->path) / "trainer_state.json";
        if (!fs::is_regular_file(state))
            continue;
        try {
            const auto doc = parsePythonJson(readBoundedFile(state.string(), kSidecarJsonLimit));
            if (doc.contains("best_model_checkpoint") && doc["best_model_checkpoint"].is_string()) {
                const std::string best = fs::path(doc["best_model_checkpoint"].get<std::string>()).filename().string();
                for (auto& c : h.checkpoints) {
                    if (fs::path(c.path).filename() == best)
                        c.best = true;
                }
                h.bestFrom = state.string() + ": best_model_checkpoint";
            }
            if (doc.contains("log_history") && doc["log_history"].is_array() && h.series.empty()) {
                for (const auto& entry : doc["log_history"]) {
                    if (!entry.is_object() || !entry.contains("step") || !entry["step"].is_number_integer())
                        continue;
                    const int64_t step = entry["step"].get<int64_t>();
                    for (const auto& [k, v] : entry.items()) {
                        if (k != "step" && k != "epoch")
                            addPoint(h, k, step, v);
                    }
                }
            }
        } catch (const std::exception& e) {
            h.warnings.push_back(state.string() + ": " + e.what());
        }
        return;
    }
}

} // namespace

std::optional<int64_t> recordedStep(const RunCheckpoint& checkpoint) { return stepFromContent(checkpoint); }

bool isCheckpointFolder(const std::string& dir, const CheckpointLayout& layout, bool standalone)
{
    // Inside a run, a folder of weights is a checkpoint (torchtitan's last-step export) only when its
    // name carries a step; otherwise it is a model folder kept beside the run (examples,
    // save_pretrained copies). Opened by itself, it is the one checkpoint the user asked for.
    if (layout.layout == Layout::ModelExport)
        return standalone || layout.stepFromName.has_value();
    if (layout.layout != Layout::Generic)
        return true;
    if (!stepFromName(fs::path(dir).filename().string()))
        return false;
    return std::any_of(layout.files.begin(), layout.files.end(), [](const LayoutFile& f) { return f.role != "other"; });
}

RunHistory readRunHistory(const std::string& dir)
{
    if (!fs::is_directory(dir))
        throw std::runtime_error(dir + ": not a directory");
    RunHistory h;
    h.path = dir;
    collect(h, dir, 0);
    for (auto& c : h.checkpoints) {
        if (!c.step)
            c.step = stepFromContent(c);
        const std::string name = fs::path(c.path).filename().string();
        if (c.layout == Layout::Accelerate && name.starts_with("checkpoint_")) {
            const std::string digits = name.substr(11);
            if (!digits.empty() && digits.size() < 12 && std::all_of(digits.begin(), digits.end(), ::isdigit))
                c.saveIndex = std::stoll(digits);
        }
    }
    std::stable_sort(h.checkpoints.begin(), h.checkpoints.end(), [](const RunCheckpoint& a, const RunCheckpoint& b) {
        if (a.step || b.step)
            return a.step.value_or(-1) < b.step.value_or(-1);
        return a.saveIndex.value_or(-1) < b.saveIndex.value_or(-1);
    });
    markLatest(h, dir);
    markBest(h);
    for (auto& [name, points] : h.series)
        std::stable_sort(points.begin(), points.end());
    return h;
}

} // namespace ckpt
