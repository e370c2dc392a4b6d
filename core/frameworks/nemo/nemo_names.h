// SPDX-License-Identifier: MIT
// NeMo's names for its rank folders and its unfinished-save marker, shared by the NeMo adapters
// (internal to core/frameworks).
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace ckpt::frameworks {

/// NeMo's marker of a save in progress beside `checkpoint` (a .ckpt file, a folder, a .nemo): the
/// path without its mp_rank_TT/ or tp_rank_TT_pp_rank_PPP/ folder, .nemo, .ckpt and -EMA, plus
/// "-unfinished" (NVIDIA/NeMo@8cfedd72 nemo/utils/callbacks/nemo_model_checkpoint.py
/// format_checkpoint_unfinished_marker_path). The checkpoint is incomplete while it exists.
std::string nemoUnfinishedMarker(const std::string& checkpoint);

/// The folder name of a NeMo 1.x model-parallel rank's files: mp_rank_TT (pipeline size 1) or
/// tp_rank_TT_pp_rank_PPP (nemo/utils/model_utils.py inject_model_parallel_rank); nullopt otherwise.
std::optional<std::pair<int, int>> nemoRankFolder(const std::string& name);

} // namespace ckpt::frameworks
