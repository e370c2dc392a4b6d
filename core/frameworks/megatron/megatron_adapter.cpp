// SPDX-License-Identifier: MIT
// Megatron-LM: its legacy per-rank files and its iteration folders of Megatron-core's distributed
// checkpoint. See README.md beside this file.
#include "ckpt/frameworks/framework_adapter.h"
#include "megatron_dist.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <tuple>

namespace fs = std::filesystem;

namespace ckpt::frameworks {

void markMegatronDistCompleteness(CheckpointLayout& out, bool metadataJson)
{
    if (metadataJson)
        return;
    out.complete = false;
    out.incompleteReason = "no metadata.json, which Megatron-core writes last: the save did not finish";
}

void markMegatronDistributed(CheckpointLayout& out, std::string folder)
{
    out.distributedDir = std::move(folder);
    out.storage = StateStorage::MegatronDistributed;
}

CheckpointLayout megatronDistFolderLayout(CheckpointLayout out, Layout layout, const FolderListing& folder)
{
    out.layout = layout;
    markMegatronDistributed(out, folder.path);
    markMegatronDistCompleteness(out, folder.has("metadata.json"));
    return out;
}

bool isMegatronDistFolder(const FolderListing& folder)
{
    return folder.has(".metadata") && (folder.has("metadata.json") || folder.has("common.pt") || isMegatronIterationName(folder.base));
}

bool isMegatronIterationName(const std::string& base)
{
    static const std::regex iter(R"(^(iter_\d+|release)$)");
    return std::regex_match(base, iter);
}

namespace {

// Megatron-LM's legacy save (NVIDIA/Megatron-LM@d98e8a64 megatron/training/checkpointing.py
// get_checkpoint_name): one folder per model-parallel position, mp_rank_{tp:02d} with PP = 1,
// mp_rank_{tp:02d}_{pp:03d} with PP > 1 (and _{ep:03d} with expert parallelism), holding
// model_optim_rng.pt, and distrib_optim.pt beside it under the distributed optimizer. Only
// data-parallel rank 0 of each position writes; the tracker file names the iteration after all
// have (docs/layouts.md §1).
const std::regex& mpRankPattern()
{
    static const std::regex mpRank(R"(^mp_rank_(\d{2})(?:_(\d{3}))?(?:_(\d{3}))?$)");
    return mpRank;
}

CheckpointLayout legacyLayout(CheckpointLayout out, const std::vector<fs::path>& rankDirs)
{
    out.layout = Layout::Megatron;
    out.storage = StateStorage::ModelParallelFiles;
    out.files.clear();
    std::error_code ec;
    std::vector<std::string> missing;
    for (const fs::path& dir : rankDirs) {
        std::smatch m;
        const std::string name = dir.filename().string();
        std::regex_match(name, m, mpRankPattern());
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

class MegatronAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::Megatron; }
    const char* name() const override { return "megatron"; }
    const FrameworkConventions& conventions() const override
    {
        // pretrain_gpt.py loss_func returns {'lm loss': averaged_loss}, which training_log writes to
        // TensorBoard and W&B under that key.
        static const FrameworkConventions c{.lossMetricNames = {"lm loss"},
                                            .lossMetricSource = "NVIDIA/Megatron-LM pretrain_gpt.py loss_func, megatron/training/training.py training_log"};
        return c;
    }

    std::optional<Recognition> recogniseFolder(const FolderListing& folder, const CheckpointLayout& listed) const override
    {
        // Megatron-LM's rank folders hold model_optim_rng.pt; NeMo 1.x's mp_rank_TT folders hold each
        // rank's .ckpt files of many checkpoints, so such a folder is a run, not one checkpoint.
        std::vector<fs::path> rankDirs;
        bool megatronFiles = false;
        std::error_code ec;
        for (const std::string& sub : folder.folders) {
            if (!std::regex_match(sub, mpRankPattern()))
                continue;
            const fs::path dir = fs::path(folder.path) / sub;
            rankDirs.push_back(dir);
            megatronFiles = megatronFiles || fs::exists(dir / "model_optim_rng.pt", ec) || fs::exists(dir / "distrib_optim.pt", ec);
        }
        if (megatronFiles)
            return Recognition{0.99, "mp_rank_TT folders with model_optim_rng.pt (Megatron-LM's legacy save)", legacyLayout(listed, rankDirs)};
        // Megatron-LM's iter_N/ of Megatron-core's torch_dist files.
        if (isMegatronDistFolder(folder) && isMegatronIterationName(folder.base))
            return Recognition{0.97, "an iter_N folder of Megatron-core's distributed checkpoint (.metadata)",
                               megatronDistFolderLayout(listed, Layout::Megatron, folder)};
        return std::nullopt;
    }
};

} // namespace

const FrameworkAdapter& megatronAdapter()
{
    static const MegatronAdapter adapter;
    return adapter;
}

} // namespace ckpt::frameworks
