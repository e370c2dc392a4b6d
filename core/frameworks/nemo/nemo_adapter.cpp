// SPDX-License-Identifier: MIT
// NeMo's training checkpoints: 1.x Lightning .ckpt files (one per model-parallel rank folder, read as
// one), 1.x Megatron-core folders, and 2.0 folders. See README.md beside this file.
#include "ckpt/frameworks/framework_adapter.h"
#include "../file_roles.h"
#include "../megatron/megatron_dist.h"
#include "nemo_names.h"
#include "ckpt/formats/key_path.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <tuple>

namespace fs = std::filesystem;

namespace ckpt::frameworks {

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

namespace {

// NeMo 1.x with tensor or pipeline parallelism (NVIDIA/NeMo@8cfedd72 nemo/collections/nlp/parts/
// nlp_overrides.py NLPDDPStrategy.save_checkpoint, nemo/utils/model_utils.py
// inject_model_parallel_rank): every rank saves a .ckpt of the same name into its own folder
// checkpoints/mp_rank_TT/ (tp_rank_TT_pp_rank_PPP/ with PP > 1). A file there stands for all the ranks'
// files of that name, read as one checkpoint; nullopt when it has no sibling rank folder.
std::optional<std::vector<LayoutFile>> rankFiles(const std::string& path)
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

// NeMo 2.0's checkpoint folder (NVIDIA/NeMo@8cfedd72 nemo/lightning/io/pl.py MegatronCheckpointIO,
// nemo/lightning/pytorch/callbacks/model_checkpoint.py; docs/layouts.md §5): weights/ in torch_dist
// format, context/ with io.json, model.yaml and the tokenizer files.
CheckpointLayout nemo2Layout(CheckpointLayout out)
{
    out.layout = Layout::Nemo;
    out.files.clear();
    const fs::path root(out.path);
    markMegatronDistributed(out, (root / "weights").string());
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

// NeMo 1.x's Lightning checkpoints: its checkpoint callback's state key (NeMoModelCheckpoint{...}) or the
// model config pickled as hyper_parameters.cfg with nemo_version (NVIDIA/NeMo@8cfedd72
// nemo/utils/callbacks/nemo_model_checkpoint.py, nemo/core/classes/modelPT.py).
bool isNemoLightning(const ValueGraph& g, NodeId root)
{
    const NodeId callbacks = g.get(root, "callbacks");
    if (g.valid(callbacks) && g[callbacks].kind == Kind::Dict) {
        const Node& d = g[callbacks];
        for (std::size_t i = 0; i + 1 < d.items.size(); i += 2) {
            const KeyPart key = keyPartOf(g, d.items[i]);
            if (std::holds_alternative<std::string>(key) && std::get<std::string>(key).starts_with("NeMoModelCheckpoint"))
                return true;
        }
    }
    return g.get(root, "hparams_type") != kNoNode && g.get(root, "hparams_name") != kNoNode
        && g.valid(g.get(root, "hyper_parameters")) && g[g.get(root, "hyper_parameters")].text == "omegaconf.dictconfig.DictConfig";
}

class NemoAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::Nemo; }
    const char* name() const override { return "nemo"; }
    const FrameworkConventions& conventions() const override
    {
        // NeMo 1.x resumes through Lightning's loops; its Megatron models read the samples consumed
        // from the checkpoint's name (..._extract_consumed_samples_from_ckpt, NVIDIA/NeMo@8cfedd72
        // nemo/collections/nlp/models/language_modeling/megatron_base_model.py).
        // Its Megatron models log the loss as reduced_train_loss (megatron_gpt_model.py training_step).
        static const FrameworkConventions c{.epochPositionFromOtherCounters = {true, "NVIDIA/NeMo@8cfedd72 megatron_base_model.py _extract_consumed_samples_from_ckpt; Lightning's loops (docs/conventions.md §4)"},
                                            .lossMetricNames = {"reduced_train_loss", "train_loss"},
                                            .lossMetricSource = "NVIDIA/NeMo nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py training_step"};
        return c;
    }

    std::optional<Recognition> recogniseFolder(const FolderListing& folder, const CheckpointLayout& listed) const override
    {
        // NeMo 2.0: the checkpoint folder holds weights/ (Megatron-core's distributed checkpoint) and
        // context/ (the model's config, the tokenizer).
        std::error_code ec;
        if (fs::is_directory(fs::path(folder.path) / "weights", ec) && fs::exists(fs::path(folder.path) / "weights" / ".metadata", ec))
            return Recognition{0.98, "weights/ with Megatron-core's .metadata beside context/ (NeMo 2.0)", nemo2Layout(listed)};
        // NeMo 1.x's checkpoint folders of Megatron-core's torch_dist files (named by the callback, not iter_N).
        if (isMegatronDistFolder(folder) && !isMegatronIterationName(folder.base))
            return Recognition{0.97, "a Megatron-core distributed checkpoint (.metadata) named by NeMo's checkpoint callback",
                               megatronDistFolderLayout(listed, Layout::Nemo, folder)};
        return std::nullopt;
    }

    std::optional<Recognition> recogniseFile(const CheckpointLayout& listed) const override
    {
        if (!listed.path.ends_with(".ckpt"))
            return std::nullopt;
        auto ranks = rankFiles(listed.path);
        if (!ranks)
            return std::nullopt;
        CheckpointLayout out = listed;
        out.layout = Layout::Nemo;
        out.storage = StateStorage::ModelParallelFiles;
        out.files = std::move(*ranks);
        return Recognition{0.95, "one .ckpt per model-parallel rank folder (mp_rank_TT/, NeMo 1.x)", std::move(out)};
    }

    // In a run listing: a .ckpt in a rank folder, or named by NeMo's Megatron models
    // ("...-step=N-consumed_samples=M.ckpt").
    std::optional<double> claimFileName(const std::string& path) const override
    {
        const fs::path p(path);
        const std::string name = p.filename().string();
        if (name.ends_with(".ckpt") && (nemoRankFolder(p.parent_path().filename().string()) || name.find("-consumed_samples=") != std::string::npos))
            return 0.95;
        return std::nullopt;
    }

    std::optional<ContentClaim> recogniseContent(const ContentProbe& p) const override
    {
        const bool lightning = p.has("pytorch-lightning_version") || (p.has("state_dict") && p.has("optimizer_states"));
        if (lightning && isNemoLightning(p.graph, p.root))
            return ContentClaim{0.9, "Lightning keys with NeMo's checkpoint callback or its pickled omegaconf config (NeMo 1.x)"};
        return std::nullopt;
    }

    // NeMo keeps the samples consumed only in the checkpoint's name ("...-step=40-consumed_samples=320.0"),
    // and reads them back from it on resume (NVIDIA/NeMo@8cfedd72 nemo/collections/nlp/models/
    // language_modeling/megatron_base_model.py _extract_consumed_samples_from_ckpt): the data cursor.
    std::vector<NamedFact> factsFromNames(const CheckpointLayout& layout) const override
    {
        static const std::regex consumed(R"(consumed_samples=(\d+)(?:\.\d+)?)");
        const std::string name = fs::path(layout.path).filename().string();
        std::smatch m;
        if (!std::regex_search(name, m, consumed))
            return {};
        return {NamedFact{"data", "consumed_samples", m[1].str(), "(file name)"}};
    }

    // NeMo 1.x's mp_rank_TT/ folders hold one rank's file of each checkpoint: the files of rank
    // folder 0 stand for all ranks (recogniseFile reads them together).
    bool listedThroughAnother(const std::string& folder) const override
    {
        const fs::path dir(folder);
        const std::string name = dir.filename().string();
        const auto rank = nemoRankFolder(name);
        if (!rank || (rank->first == 0 && rank->second == 0))
            return false;
        std::error_code ec;
        return fs::is_directory(dir.parent_path() / (name.starts_with("mp_rank_") ? "mp_rank_00" : "tp_rank_00_pp_rank_000"), ec);
    }

    std::string unfinishedSaveBeside(const std::string& checkpoint) const override
    {
        std::error_code ec;
        const std::string marker = nemoUnfinishedMarker(checkpoint);
        if (!fs::exists(marker, ec))
            return {};
        return "NeMo's " + fs::path(marker).filename().string() + " marker is present: the save did not finish";
    }
};

} // namespace

const FrameworkAdapter& nemoAdapter()
{
    static const NemoAdapter adapter;
    return adapter;
}

} // namespace ckpt::frameworks
