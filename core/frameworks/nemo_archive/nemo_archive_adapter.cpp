// SPDX-License-Identifier: MIT
// A .nemo file: NeMo's final model. See README.md beside this file.
#include "ckpt/frameworks/framework_adapter.h"
#include "../file_roles.h"
#include "../nemo/nemo_names.h"
#include "ckpt/io/archive_path.h"
#include "ckpt/io/errors.h"

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace ckpt::frameworks {
namespace {

// A .nemo file: a tar of model_config.yaml, tokenizer artefacts and the weights, as
// model_weights.ckpt, one per model-parallel rank (mp_rank_TT/, tp_rank_TT_pp_rank_PPP/), or a
// Megatron-core distributed checkpoint in model_weights/ (NVIDIA/NeMo@8cfedd72
// nemo/collections/nlp/parts/nlp_overrides.py NLPSaveRestoreConnector.save_to; docs/layouts.md §5).
// Members are named as paths below the archive (io/archive_path.h), read in place, a gzip .nemo
// (NeMo before 1.7) member by member too. A file whose members cannot be listed (not a tar, plain
// or gzip-compressed) is listed as one file and the reader says so.
CheckpointLayout archiveLayout(CheckpointLayout out)
{
    out.layout = Layout::NemoArchive;
    out.files.clear();
    std::vector<std::string> members;
    try {
        members = archiveMemberPaths(out.path);
    } catch (const FormatError&) {
        out.files.push_back({out.path, "other", -1});
        out.warnings.push_back(out.path + ": its members cannot be listed (it is not a tar archive, plain or "
                               "gzip-compressed, as NeMo writes .nemo files); if it is one, extract it and open the folder");
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
    if (!out.distributedDir.empty())
        out.storage = StateStorage::MegatronDistributed;
    else if (std::any_of(out.files.begin(), out.files.end(), [](const LayoutFile& f) { return f.tp >= 0; }))
        out.storage = StateStorage::ModelParallelFiles;
    return out;
}

class NemoArchiveAdapter final : public FrameworkAdapter {
public:
    Layout layout() const override { return Layout::NemoArchive; }
    const char* name() const override { return "nemo_archive"; }
    const FrameworkConventions& conventions() const override
    {
        static const FrameworkConventions c{.finalArtefact = true};
        return c;
    }

    std::optional<double> claimFileName(const std::string& path) const override
    {
        if (path.ends_with(".nemo"))
            return 0.99;
        return std::nullopt;
    }

    std::optional<Recognition> recogniseFile(const CheckpointLayout& listed) const override
    {
        if (!listed.path.ends_with(".nemo"))
            return std::nullopt;
        return Recognition{0.99, "a .nemo archive (NeMo's save_to)", archiveLayout(listed)};
    }
};

} // namespace

const FrameworkAdapter& nemoArchiveAdapter()
{
    static const NemoArchiveAdapter adapter;
    return adapter;
}

} // namespace ckpt::frameworks
