// SPDX-License-Identifier: MIT
#include "ckpt/state/checkpoint_layout.h"

#include "ckpt/formats/model_export.h"
#include "ckpt/formats/rank_names.h"
#include "ckpt/io/archive_path.h"
#include "ckpt/io/errors.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <stdexcept>
#include <tuple>

namespace fs = std::filesystem;

namespace ckpt {
namespace {

bool endsWith(const std::string& s, std::string_view suffix) { return s.size() >= suffix.size() && s.ends_with(suffix); }

bool isTorchFileName(const std::string& name)
{
    for (const char* ext : {".pt", ".pth", ".bin", ".ckpt", ".pkl", ".safetensors", ".distcp"}) {
        if (endsWith(name, ext))
            return true;
    }
    return false;
}

// E: the model's and the run's configuration (transformers' save_pretrained writes config.json and
// generation_config.json, its tokenizer the tokenizer files; peft adapter_config.json; Megatron,
// NeMo and torchtune keep YAML or JSON args). Read as environment facts, never as tensors.
bool isConfigFileName(const std::string& name)
{
    static const std::set<std::string> names = {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                                                "special_tokens_map.json", "added_tokens.json", "vocab.json", "merges.txt",
                                                "tokenizer.model", "adapter_config.json", "args.json", "params.json",
                                                "preprocessor_config.json", "chat_template.jinja"};
    return names.contains(name) || endsWith(name, ".yaml") || endsWith(name, ".yml");
}

// A shard of a sharded safetensors set, "model-00002-of-00004.safetensors".
bool isSafetensorsShardName(const std::string& name)
{
    static const std::regex shard(R"(-\d{5}-of-\d{5}\.safetensors$)");
    return std::regex_search(name, shard);
}

std::string roleOfFile(const std::string& name, int& rank)
{
    static const std::regex rngRank(R"((?:rng[-_]rank[-_]?|rng_state_|random_states_)(\d+))");
    static const std::regex zeroRank(R"(zero_pp_rank_(\d+)_)");
    rank = rankInName(name, rngRank);
    if (name == "manifest.json")
        return "manifest";
    if (name == "COMPLETE" || name == "COMPLETED" || name == "commit_success.txt")
        return "complete";
    if (name == "trainer_state.json")
        return "trainer_state";
    if (name == "training_args.bin")
        return "training_args";
    if (isConfigFileName(name))
        return "config";
    if (endsWith(name, ".bin.index.json"))
        return "model_index"; // pytorch_model.bin.index.json maps names to the .bin shards, which hold the tensors
    if (name == ".metadata" || endsWith(name, ".metadata"))
        return "metadata";
    if (rank >= 0 || name == "rng_state.pth" || name.starts_with("rng")) {
        rank = std::max(rank, 0);
        return "rng";
    }
    // A LoRA adapter: peft's save_pretrained writes adapter_model.safetensors (or .bin); torchtune
    // writes adapter_model.pt in its own parameter names beside that PEFT copy (docs/layouts.md §4).
    if (name.starts_with("adapter_model.") && isTorchFileName(name))
        return "adapter";
    if (name.find("optim") != std::string::npos) {
        rank = rankInName(name, zeroRank);
        return "optimizer";
    }
    if (name.find("scheduler") != std::string::npos || name.find("lr_sched") != std::string::npos)
        return "scheduler";
    if (name.starts_with("scaler"))
        return "scaler";
    if (name.starts_with("sampler") || name.starts_with("dl_state_dict") || name.find("dataloader") != std::string::npos)
        return "data";
    if (name.find("model") != std::string::npos || name.starts_with("pytorch_model") || endsWith(name, ".safetensors")
        || endsWith(name, ".safetensors.index.json")) {
        rank = rankInName(name, zeroRank);
        return "model";
    }
    if (isTorchFileName(name))
        return "state";
    return "other";
}

// Megatron-LM's legacy save (NVIDIA/Megatron-LM@d98e8a64 megatron/training/checkpointing.py
// get_checkpoint_name): one folder per model-parallel position, mp_rank_{tp:02d} with PP = 1,
// mp_rank_{tp:02d}_{pp:03d} with PP > 1 (and _{ep:03d} with expert parallelism), holding
// model_optim_rng.pt, and distrib_optim.pt beside it under the distributed optimizer. Only
// data-parallel rank 0 of each position writes; the tracker file names the iteration after all
// have (docs/layouts.md §1).
CheckpointLayout megatronLayout(CheckpointLayout out, std::vector<fs::path> rankDirs, const std::regex& mpRank)
{
    out.layout = Layout::Megatron;
    std::sort(rankDirs.begin(), rankDirs.end());
    std::error_code ec;
    std::vector<std::string> missing;
    for (const fs::path& dir : rankDirs) {
        std::smatch m;
        const std::string name = dir.filename().string();
        std::regex_match(name, m, mpRank);
        const int tp = std::stoi(m[1].str()), pp = m[2].matched ? std::stoi(m[2].str()) : 0, ep = m[3].matched ? std::stoi(m[3].str()) : -1;
        bool model = false;
        for (const auto& e : fs::directory_iterator(dir, fs::directory_options::skip_permission_denied, ec)) {
            if (!e.is_regular_file(ec))
                continue;
            const std::string file = e.path().filename().string();
            LayoutFile f{e.path().string(), file == "distrib_optim.pt" ? "optimizer" : (file == "model_optim_rng.pt" ? "state" : "other"), -1};
            f.tp = tp;
            f.pp = pp;
            f.ep = ep;
            model = model || file == "model_optim_rng.pt";
            out.files.push_back(std::move(f));
        }
        if (!model)
            missing.push_back(name);
    }
    std::sort(out.files.begin(), out.files.end(), [](const LayoutFile& a, const LayoutFile& b) {
        return std::tie(a.ep, a.pp, a.tp, a.path) < std::tie(b.ep, b.pp, b.tp, b.path);
    });
    if (!missing.empty()) {
        out.complete = false;
        out.incompleteReason = "no model_optim_rng.pt in " + missing.front() + (missing.size() > 1 ? " and " + std::to_string(missing.size() - 1) + " more" : "");
    }
    return out;
}

// NeMo 1.x with tensor or pipeline parallelism (NVIDIA/NeMo@8cfedd72 nemo/collections/nlp/parts/
// nlp_overrides.py NLPDDPStrategy.save_checkpoint, nemo/utils/model_utils.py
// inject_model_parallel_rank): every rank saves a .ckpt of the same name into its own folder
// checkpoints/mp_rank_TT/ (tp_rank_TT_pp_rank_PPP/ with PP > 1). A file there stands for all the ranks'
// files of that name, read as one checkpoint; nullopt when it has no sibling rank folder.
std::optional<std::vector<LayoutFile>> nemoRankFiles(const std::string& path)
{
    const fs::path file(path);
    const fs::path folder = file.parent_path();
    if (!nemoRankFolder(folder.filename().string()))
        return std::nullopt;
    std::vector<LayoutFile> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(folder.parent_path(), fs::directory_options::skip_permission_denied, ec)) {
        const auto rank = nemoRankFolder(e.path().filename().string());
        if (!rank || !e.is_directory(ec) || !fs::is_regular_file(e.path() / file.filename(), ec))
            continue;
        LayoutFile f{(e.path() / file.filename()).string(), "state", -1};
        f.tp = rank->first;
        f.pp = rank->second;
        files.push_back(std::move(f));
    }
    if (files.size() < 2)
        return std::nullopt;
    std::sort(files.begin(), files.end(), [](const LayoutFile& a, const LayoutFile& b) { return std::tie(a.pp, a.tp) < std::tie(b.pp, b.tp); });
    return files;
}

// metadata.json is written after every rank's data and the .metadata (megatron/core/dist_checkpointing/
// serialization.py save, metadata_finalize_fn): without it the save did not finish.
void markMegatronDistCompleteness(CheckpointLayout& out, bool metadataJson)
{
    if (metadataJson)
        return;
    out.complete = false;
    out.incompleteReason = "no metadata.json, which Megatron-core writes last: the save did not finish";
}

// NeMo 2.0's checkpoint folder (NVIDIA/NeMo@8cfedd72 nemo/lightning/io/pl.py MegatronCheckpointIO,
// nemo/lightning/pytorch/callbacks/model_checkpoint.py; docs/layouts.md §5): weights/ in torch_dist
// format, context/ with io.json, model.yaml and the tokenizer files.
CheckpointLayout nemo2Layout(CheckpointLayout out)
{
    out.layout = Layout::Nemo;
    const fs::path root(out.path);
    out.distributedDir = (root / "weights").string();
    std::error_code ec;
    bool metadataJson = false;
    for (const char* sub : {"weights", "context"}) {
        std::vector<fs::path> entries;
        for (const auto& e : fs::directory_iterator(root / sub, fs::directory_options::skip_permission_denied, ec)) {
            if (e.is_regular_file(ec))
                entries.push_back(e.path());
        }
        std::sort(entries.begin(), entries.end());
        for (const fs::path& p : entries) {
            const std::string name = p.filename().string();
            metadataJson = metadataJson || (std::string_view(sub) == "weights" && name == "metadata.json");
            int rank = -1;
            std::string role = std::string_view(sub) == "context" ? (isConfigFileName(name) ? "config" : "other") : roleOfFile(name, rank);
            out.files.push_back({p.string(), role, rank});
        }
    }
    markMegatronDistCompleteness(out, metadataJson);
    return out;
}

// A .nemo file: a tar of model_config.yaml, tokenizer artefacts and the weights, as
// model_weights.ckpt, one per model-parallel rank (mp_rank_TT/, tp_rank_TT_pp_rank_PPP/), or a
// Megatron-core distributed checkpoint in model_weights/ (NVIDIA/NeMo@8cfedd72
// nemo/collections/nlp/parts/nlp_overrides.py NLPSaveRestoreConnector.save_to; docs/layouts.md §5).
// Members are named as paths below the archive (io/archive_path.h), read in place, a gzip .nemo
// (NeMo before 1.7) member by member too. A file whose members cannot be listed (not a tar, plain
// or gzip-compressed) is listed as one file and the reader says so.
CheckpointLayout nemoArchiveLayout(CheckpointLayout out)
{
    out.layout = Layout::NemoArchive;
    std::vector<std::string> members;
    try {
        members = archiveMemberPaths(out.path);
    } catch (const FormatError&) {
        out.files.push_back({out.path, "other", -1});
        return out;
    }
    for (const std::string& member : members) {
        const fs::path m(member);
        const std::string name = m.filename().string();
        const std::string parent = m.parent_path().filename().string();
        LayoutFile f{member, "other", -1};
        if (name.ends_with(".yaml") || name.ends_with(".yml") || isConfigFileName(name)) {
            f.role = "config";
        } else if (name == "model_weights.ckpt") {
            f.role = "model";
            if (const auto rank = nemoRankFolder(parent)) {
                f.role = "state";
                f.tp = rank->first;
                f.pp = rank->second;
            }
        } else if (m.parent_path().string().find("/model_weights") != std::string::npos || parent == "model_weights") {
            f.role = "distributed"; // model_weights/: a Megatron-core distributed checkpoint inside the tar
            out.distributedDir = (fs::path(out.path) / "model_weights").string();
        }
        out.files.push_back(std::move(f));
    }
    return out;
}

} // namespace

bool opensAsCheckpointFile(const LayoutFile& file)
{
    static const std::set<std::string> notOpened = {"manifest", "complete", "trainer_state", "metadata", "config",
                                                    "model_shard", "model_index", "distributed", "other"};
    if (notOpened.contains(file.role) || file.path.ends_with(".distcp"))
        return false;
    return !file.path.ends_with(".json") || file.path.ends_with(".safetensors.index.json");
}

const char* layoutName(Layout layout)
{
    switch (layout) {
    case Layout::RecoveryGuideDir: return "recovery_guide_dir";
    case Layout::RecoveryGuideFile: return "recovery_guide_file";
    case Layout::HfTrainer: return "hf_trainer";
    case Layout::Lightning: return "lightning";
    case Layout::DeepSpeed: return "deepspeed";
    case Layout::Accelerate: return "accelerate";
    case Layout::Dcp: return "dcp";
    case Layout::StateDict: return "state_dict";
    case Layout::Megatron: return "megatron";
    case Layout::ModelExport: return "model_export";
    case Layout::Nemo: return "nemo";
    case Layout::NemoArchive: return "nemo_archive";
    case Layout::Generic: return "generic";
    }
    return "?";
}

std::string dcpFolder(const CheckpointLayout& layout)
{
    return layout.layout == Layout::Dcp ? layout.path : layout.distributedDir;
}

bool isFinalArtefact(Layout layout) { return layout == Layout::ModelExport || layout == Layout::NemoArchive; }

std::optional<std::pair<int, int>> nemoRankFolder(const std::string& name)
{
    static const std::regex rank(R"(^(?:mp_rank_(\d{2})|tp_rank_(\d{2})_pp_rank_(\d{3}))$)");
    std::smatch m;
    if (!std::regex_match(name, m, rank))
        return std::nullopt;
    if (m[1].matched)
        return std::pair{std::stoi(m[1].str()), 0};
    return std::pair{std::stoi(m[2].str()), std::stoi(m[3].str())};
}

std::string nemoUnfinishedMarker(const std::string& checkpoint)
{
    fs::path p(checkpoint);
    if (p.has_parent_path() && nemoRankFolder(p.parent_path().filename().string()))
        p = p.parent_path().parent_path() / p.filename();
    std::string s = p.string();
    for (const char* suffix : {".nemo", ".ckpt", "-EMA"}) {
        if (s.ends_with(suffix))
            s.erase(s.size() - std::string_view(suffix).size());
    }
    return s + "-unfinished";
}


CheckpointLayout detectLayout(const std::string& path)
{
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        throw std::runtime_error(path + ": no such file or directory");
    CheckpointLayout out;
    out.path = path;
    const std::string base = fs::path(path).filename().string();
    out.stepFromName = stepFromName(base);

    if (fs::exists(nemoUnfinishedMarker(path), ec)) {
        out.complete = false;
        out.incompleteReason = "NeMo's " + fs::path(nemoUnfinishedMarker(path)).filename().string() + " marker is present: the save did not finish";
    }
    if (!fs::is_directory(st)) {
        if (endsWith(base, ".nemo"))
            return nemoArchiveLayout(std::move(out));
        if (endsWith(base, ".ckpt")) {
            if (auto ranks = nemoRankFiles(path)) {
                out.layout = Layout::Nemo;
                out.files = std::move(*ranks);
                return out;
            }
        }
        int rank = -1;
        std::string role = roleOfFile(base, rank);
        out.layout = endsWith(base, ".ckpt") ? Layout::Lightning : Layout::Generic; // refined by content later
        out.files.push_back({path, role == "other" ? "state" : role, rank});
        return out;
    }

    std::vector<std::string> names;
    std::vector<fs::path> rankDirs; // Megatron's mp_rank_TT[_PPP][_EEE]
    static const std::regex mpRank(R"(^mp_rank_(\d{2})(?:_(\d{3}))?(?:_(\d{3}))?$)");
    for (const auto& e : fs::directory_iterator(path, fs::directory_options::skip_permission_denied, ec)) {
        if (e.is_regular_file(ec))
            names.push_back(e.path().filename().string());
        else if (e.is_directory(ec) && std::regex_match(e.path().filename().string(), mpRank))
            rankDirs.push_back(e.path());
    }
    // Megatron-LM's rank folders hold model_optim_rng.pt; NeMo 1.x's mp_rank_TT folders hold each rank's
    // .ckpt files of many checkpoints, so such a folder is a run, not one checkpoint.
    const bool megatron = std::any_of(rankDirs.begin(), rankDirs.end(), [&](const fs::path& d) {
        return fs::exists(d / "model_optim_rng.pt", ec) || fs::exists(d / "distrib_optim.pt", ec);
    });
    if (megatron)
        return megatronLayout(std::move(out), rankDirs, mpRank);
    // NeMo 2.0: the checkpoint folder holds weights/ (Megatron-core's distributed checkpoint) and
    // context/ (the model's config, the tokenizer).
    if (fs::is_directory(fs::path(path) / "weights", ec) && fs::exists(fs::path(path) / "weights" / ".metadata", ec))
        return nemo2Layout(std::move(out));
    std::sort(names.begin(), names.end());
    auto has = [&](std::string_view n) { return std::find(names.begin(), names.end(), n) != names.end(); };
    auto any = [&](auto pred) { return std::any_of(names.begin(), names.end(), pred); };
    // A safetensors index opens as its whole set (formats/safetensors_index.h), so the shards it
    // names are read through it: each tensor is counted once, and the set is one W.
    const bool safetensorsIndex = any([](const std::string& n) { return n.ends_with(".safetensors.index.json"); });
    for (const auto& n : names) {
        int rank = -1;
        std::string role = roleOfFile(n, rank);
        if (safetensorsIndex && role == "model" && isSafetensorsShardName(n))
            role = "model_shard";
        out.files.push_back({(fs::path(path) / n).string(), role, rank});
    }

    static const std::regex iter(R"(^(iter_\d+|release)$)");
    if (has(".metadata") && (has("metadata.json") || has("common.pt") || std::regex_match(base, iter))) {
        // Megatron-core's distributed checkpoint (torch_dist): DCP files, with metadata.json written last
        // and the state that is not sharded in common.pt (core <= 0.18) or a DCP item (docs/layouts.md §6).
        // Megatron-LM's iter_N/, NeMo 1.x's checkpoint folders.
        out.layout = std::regex_match(base, iter) ? Layout::Megatron : Layout::Nemo;
        out.distributedDir = path;
        markMegatronDistCompleteness(out, has("metadata.json"));
        return out;
    }
    if (has("manifest.json")) {
        out.layout = Layout::RecoveryGuideDir;
        out.complete = has("COMPLETE");
        if (!out.complete)
            out.incompleteReason = "no COMPLETE marker: the save did not finish";
    } else if (has("trainer_state.json") || has("training_args.bin")) {
        out.layout = Layout::HfTrainer;
        out.complete = has("trainer_state.json");
        if (!out.complete)
            out.incompleteReason = "no trainer_state.json, which the Trainer writes last";
    } else if (any([](const std::string& n) { return n.ends_with("_model_states.pt") || n.ends_with("_optim_states.pt"); })) {
        out.layout = Layout::DeepSpeed;
    } else if (has(".metadata") || any([](const std::string& n) { return n.ends_with(".distcp"); })) {
        out.layout = Layout::Dcp;
        // Saves without a process group write one __<rank>.metadata per rank instead (formats.md §5.1).
        out.complete = has(".metadata") || any([](const std::string& n) { return n.starts_with("__") && n.ends_with(".metadata"); });
        if (!out.complete)
            out.incompleteReason = "no .metadata file, which DCP writes last";
    } else if (any([](const std::string& n) {
                   // accelerate's save_state names (huggingface/accelerate@8d1479def0bb src/accelerate/utils/constants.py,
                   // checkpointing.py save_accelerator_state; accelerator.py save_state): random_states_<process>.pkl,
                   // optimizer.bin / optimizer_<i>.bin, scheduler.bin, custom_checkpoint_<i>.pkl. Without its RNG
                   // files (deleted, or a load that failed) the folder is still accelerate's.
                   return n.starts_with("random_states_") || n == "optimizer.bin" || (n.starts_with("optimizer_") && n.ends_with(".bin"))
                       || (n.starts_with("custom_checkpoint_") && n.ends_with(".pkl"));
               })) {
        out.layout = Layout::Accelerate;
        // checkpoint_<i> counts saves (ProjectConfiguration.automatic_checkpoint_naming), not steps;
        // accelerate saves no step at all (the Accelerator.step of random_states_<i>.pkl, from 0.32 on,
        // counts micro-batches since the last dataloader end).
        if (base.starts_with("checkpoint_"))
            out.stepFromName.reset();
    } else if (isModelExportListing(names)) {
        // torchtitan's _save_last_step with last_save_model_only (the default) and last_save_in_hf writes
        // only the model, as safetensors, into the last step-N (torchtitan@970fbddb components/checkpoint.py;
        // docs/conventions.md §7); save_pretrained folders look the same. Nothing marks the commit.
        out.layout = Layout::ModelExport;
    } else {
        out.layout = Layout::Generic;
    }
    return out;
}

} // namespace ckpt
