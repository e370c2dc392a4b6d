// SPDX-License-Identifier: MIT
#include "ckpt/state/run_history.h"

#include "ckpt/frameworks/framework_registry.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/python_json.h"
#include "ckpt/io/errors.h"
#include "ckpt/io/read_only_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace ckpt {
namespace {

// NeMo 1.x keeps a model-parallel run's files five folders down: <exp_dir>/<name>/<version>/checkpoints/mp_rank_TT/.
constexpr int kMaxDepth = 5;
constexpr std::size_t kMaxCheckpoints = 100000;

// Single-file checkpoints by their writers' names: Lightning's .ckpt, files named by step, fairseq's
// checkpoint{E}.pt, checkpoint_{E}_{U}.pt, checkpoint_last.pt and checkpoint_best.pt
// (facebookresearch/fairseq@3d262bb2 fairseq/checkpoint_utils.py save_checkpoint), Composer's
// ep{E}-ba{B}-rank{R}.pt and its latest-rank{R}.pt link (mosaicml/composer@64051888
// composer/utils/checkpoint.py).
// torchtune's epoch_{N}/ folders (torchtune@bd2a0fc7 training/checkpointing/_checkpointer.py): N,
// which orders a run whose folders record no step.
std::optional<int64_t> epochFolderIndex(const std::string& name)
{
    if (!name.starts_with("epoch_") || name.size() <= 6 || name.size() >= 16
        || !std::all_of(name.begin() + 6, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return std::stoll(name.substr(6));
}

bool isCheckpointFileName(const std::string& name)
{
    static const std::regex frameworks(R"(^(checkpoint\d+|checkpoint_\d+_\d+|checkpoint_last|checkpoint_best|ep\d+-ba\d+(-rank\d+)?|latest-rank\d+)\.pt$)");
    return name.ends_with(".ckpt") || name.ends_with(".nemo") || std::regex_match(name, frameworks)
        || (stepFromName(name) && (name.ends_with(".pt") || name.ends_with(".pth")));
}

// fairseq copies its newest save to checkpoint_last.pt (and the best to checkpoint_best.pt), and
// Composer links latest-rank0.pt to its newest file: marks on a checkpoint already listed, not
// checkpoints of their own. A copy whose original was deleted (keep_last_epochs) stays.
// Lightning's save_last writes the newest state again under "last" (ModelCheckpoint.CHECKPOINT_NAME_LAST,
// "last-vN" on a clash), NeMo's under its own name plus "-last" (NVIDIA/NeMo@8cfedd72
// nemo/utils/callbacks/nemo_model_checkpoint.py: CHECKPOINT_NAME_LAST = filename + "-last", a file or
// a folder): the same training state at the same step as a top-k save beside it.
bool isLastSave(const std::string& name)
{
    static const std::regex last(R"(^(.*-last|last(-v\d+)?)(\.ckpt)?$)");
    return std::regex_match(name, last);
}

void foldCopies(RunHistory& h)
{
    std::error_code ec;
    std::vector<RunCheckpoint> kept;
    std::vector<std::pair<RunCheckpoint, bool>> marks; // (copy, is best)
    for (auto& c : h.checkpoints) {
        const std::string name = fs::path(c.path).filename().string();
        const bool link = fs::is_symlink(c.path, ec);
        if (name == "checkpoint_last.pt" || name == "checkpoint_best.pt" || link || isLastSave(name))
            marks.push_back({c, name == "checkpoint_best.pt"});
        else
            kept.push_back(c);
    }
    for (auto& mark : marks) {
        // Named, not a structured binding: clang 14 (the fuzz preset) cannot capture those in a lambda.
        RunCheckpoint& copy = mark.first;
        const bool best = mark.second;
        const auto size = fs::file_size(copy.path, ec);
        const bool lastSave = isLastSave(fs::path(copy.path).filename().string());
        const auto same = std::find_if(kept.begin(), kept.end(), [&](const RunCheckpoint& k) {
            if (fs::is_symlink(copy.path, ec))
                return fs::equivalent(k.path, copy.path, ec);
            if (lastSave) // a separate save of the same state: same step and layout, other bytes
                return k.step && copy.step && *k.step == *copy.step && k.layout == copy.layout;
            return k.step && copy.step && *k.step == *copy.step && fs::file_size(k.path, ec) == size;
        });
        if (same == kept.end()) {
            kept.push_back(copy);
            continue;
        }
        if (best) {
            same->best = true;
            h.bestFrom = fs::path(copy.path).filename().string() + " (a copy of it)";
        } else {
            same->latest = true;
            h.latestFrom = fs::path(copy.path).filename().string()
                + (fs::is_symlink(copy.path, ec) ? " (a link to it)" : lastSave ? " (the same state saved as last)" : " (a copy of it)");
        }
    }
    h.checkpoints = std::move(kept);
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
    std::optional<int64_t> last;
    while (std::getline(in, line)) {
        ++lineNo;
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        try {
            const auto j = parsePythonJson(line);
            if (!j.is_object() || !j.contains("step") || !j["step"].is_number_integer())
                continue;
            const int64_t step = j["step"].get<int64_t>();
            if (last && step <= *last)
                h.logRestarts.push_back({p.string(), step, *last, lineNo});
            last = step;
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
    int lineNo = 1;
    std::optional<int64_t> last;
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> cells;
        std::stringstream ls(line);
        for (std::string c; std::getline(ls, c, ',');)
            cells.push_back(c);
        if (static_cast<std::size_t>(stepCol) >= cells.size() || cells[static_cast<std::size_t>(stepCol)].empty())
            continue;
        ++lineNo;
        try {
            const int64_t step = std::stoll(cells[static_cast<std::size_t>(stepCol)]);
            if (last && step < *last) // Lightning's CSV has one row per metric and step: equal steps repeat
                h.logRestarts.push_back({p.string(), step, *last, lineNo});
            last = step;
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
        // <run>/probes/after-<checkpoint>/ holds the update recorded after each save (packaging/python
        // ckpt_writer.py probe_dir_for; read by core/report/probe_list.cpp), never a checkpoint, whatever
        // its name says ("after-step_10").
        if (name == "probes" && e.is_directory(ec))
            continue;
        if (e.is_directory(ec)) {
            // A model-parallel rank's folder whose checkpoints rank 0's folder stands for (the adapters say).
            if (listedThroughAnother(e.path().string()))
                continue;
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
            if (isCheckpointFileName(name)) {
                // By name alone (the adapters' claimFileName): a run may list thousands of files.
                RunCheckpoint c{e.path().string(), stepFromName(name), layoutFromFileName(e.path().string())};
                if (std::string why = unfinishedSaveReason(c.path); !why.empty()) {
                    c.complete = false;
                    c.incompleteReason = std::move(why);
                }
                h.checkpoints.push_back(std::move(c));
            }
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
    // torchtune's epoch_N/recipe_state.pt: steps_run, the optimizer steps taken (torchtune@bd2a0fc7
    // recipes/full_finetune_single_device.py save_checkpoint); absent from the final epoch's folder.
    if (const fs::path recipe = p / "recipe_state.pt"; fs::is_regular_file(recipe)) {
        try {
            auto opened = CheckpointFile::open(recipe.string());
            const NodeId n = opened->graph().get(opened->root(), "steps_run");
            if (n != kNoNode && opened->graph()[n].kind == Kind::Int)
                return opened->graph()[n].i;
        } catch (const std::exception&) {
        }
    }
    // Megatron-core's distributed checkpoint keeps its counters in common.pt (NeMo's Lightning dict:
    // global_step; Megatron-LM <= core 0.18: iteration); NeMo 2.0 puts it in weights/.
    for (const fs::path common : {p / "common.pt", p / "weights" / "common.pt"}) {
        if (!fs::is_regular_file(common))
            continue;
        try {
            auto opened = CheckpointFile::open(common.string());
            for (const char* key : {"global_step", "iteration"}) {
                const NodeId n = opened->graph().get(opened->root(), key);
                if (n != kNoNode && opened->graph()[n].kind == Kind::Int)
                    return opened->graph()[n].i;
            }
        } catch (const std::exception&) {
        }
    }
    // A single file's own global_step, where the layout records one at all (accelerate does not: the
    // "step" of random_states_<i>.pkl is Accelerator.step, reset at every dataloader end).
    if (conventionsOf(c.layout).noGlobalStepInFiles)
        return std::nullopt;
    if (fs::is_regular_file(p)) {
        try {
            auto opened = CheckpointFile::open(p.string());
            const ValueGraph& g = opened->graph();
            const NodeId root = opened->root();
            auto integer = [&](NodeId n) -> std::optional<int64_t> {
                if (n != kNoNode && g.valid(n) && g[n].kind == Kind::Int)
                    return g[n].i;
                return std::nullopt;
            };
            if (auto v = integer(g.get(root, "global_step")))
                return v;
            // fairseq: optimizer_history[-1].num_updates; Composer: state.timestamp.Timestamp.batch
            // (state_reader_parts.cpp readFrameworkCounters reads them for the state too).
            if (const NodeId hist = g.get(root, "optimizer_history"); g.valid(hist) && g[hist].kind == Kind::List && !g[hist].items.empty()) {
                if (auto v = integer(g.get(g[hist].items.back(), "num_updates")))
                    return v;
            }
            if (auto v = integer(g.get(g.get(g.get(g.get(root, "state"), "timestamp"), "Timestamp"), "batch")))
                return v;
        } catch (const std::exception&) {
        }
    }
    return std::nullopt;
}

// A pointer file's text: empty when there is none or it cannot be read (then a warning says so and
// the newest complete checkpoint is taken as latest).
std::string pointerText(RunHistory& h, const fs::path& pointer)
{
    if (!fs::is_regular_file(pointer))
        return {};
    try {
        return readText(pointer);
    } catch (const FormatError& e) {
        h.warnings.push_back(pointer.string() + ": " + e.what() + "; the newest complete checkpoint is taken as latest");
        return {};
    }
}

// Marks the checkpoint named `target` latest; `source` names the pointer for latestFrom and warnings.
void markNamed(RunHistory& h, const std::string& target, const std::string& source)
{
    const auto it = std::find_if(h.checkpoints.begin(), h.checkpoints.end(), [&](const RunCheckpoint& c) {
        return fs::path(c.path).filename() == target || fs::path(c.path).filename() == fs::path(target).filename();
    });
    h.latestFrom = source;
    if (it == h.checkpoints.end()) {
        h.warnings.push_back(source + " names '" + target + "', which is not a checkpoint of this run");
        return;
    }
    it->latest = true;
    if (!it->complete)
        h.warnings.push_back(source + " names " + it->path + ", which is incomplete: " + it->incompleteReason);
}

// DeepSpeed's `latest` file names the checkpoint to resume from. Returns false when there is no
// readable, non-empty pointer, so the caller falls back to the newest complete checkpoint.
bool markFromPointer(RunHistory& h, const fs::path& pointer)
{
    const std::string target = pointerText(h, pointer);
    if (target.empty())
        return false;
    markNamed(h, target, "latest file");
    return true;
}

// Megatron-LM's tracker: rank 0 writes the iteration number (or "release") into
// latest_checkpointed_iteration.txt after every rank has saved (NVIDIA/Megatron-LM@d98e8a64
// megatron/training/checkpointing.py get_checkpoint_tracker_filename, read_metadata); it names
// iter_{:07d}.
bool markFromMegatronTracker(RunHistory& h, const fs::path& tracker)
{
    const std::string text = pointerText(h, tracker);
    if (text.empty())
        return false;
    std::string folder = text;
    if (text.size() < 12 && std::all_of(text.begin(), text.end(), ::isdigit)) {
        char name[32];
        std::snprintf(name, sizeof name, "iter_%07lld", std::stoll(text));
        folder = name;
    } else if (text != "release") {
        h.warnings.push_back(tracker.string() + ": '" + text + "' is neither an iteration number nor 'release'");
        return false;
    }
    markNamed(h, folder, "latest_checkpointed_iteration.txt");
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
            if (it->complete && isFinalArtefact(it->layout) == exports) {
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
    const std::string base = fs::path(dir).filename().string();
    const bool epochFolder = epochFolderIndex(base).has_value();
    const FrameworkConventions& conventions = conventionsOf(layout.layout);
    if (conventions.finalArtefact)
        return standalone || layout.stepFromName.has_value() || epochFolder; // torchtune's final epoch_N
    if (conventions.namesAFramework)
        return true;
    if (!stepFromName(base) && !epochFolder)
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
        if (auto epoch = epochFolderIndex(fs::path(c.path).filename().string()))
            c.saveIndex = epoch;
        if (!c.step)
            c.step = stepFromContent(c);
        if (auto index = saveIndexFromName(c.layout, fs::path(c.path).filename().string()))
            c.saveIndex = index;
    }
    std::stable_sort(h.checkpoints.begin(), h.checkpoints.end(), [](const RunCheckpoint& a, const RunCheckpoint& b) {
        // A model saved at the end of training without a step (NeMo's .nemo) comes after the checkpoints.
        const bool aEnd = !a.step && isFinalArtefact(a.layout), bEnd = !b.step && isFinalArtefact(b.layout);
        if (aEnd != bEnd)
            return bEnd;
        if (a.step && b.step)
            return *a.step < *b.step;
        if (a.saveIndex && b.saveIndex) // accelerate's checkpoint_<i>, torchtune's epoch_<N>: one lacks a step
            return *a.saveIndex < *b.saveIndex;
        return a.step.value_or(-1) < b.step.value_or(-1);
    });
    foldCopies(h);
    if (std::none_of(h.checkpoints.begin(), h.checkpoints.end(), [](const RunCheckpoint& c) { return c.latest; }))
        markLatest(h, dir);
    if (std::none_of(h.checkpoints.begin(), h.checkpoints.end(), [](const RunCheckpoint& c) { return c.best; }))
        markBest(h);
    for (auto& [name, points] : h.series)
        std::stable_sort(points.begin(), points.end());
    return h;
}

} // namespace ckpt
