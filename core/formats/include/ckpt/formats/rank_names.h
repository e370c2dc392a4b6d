// SPDX-License-Identifier: MIT
// Numbers in checkpoint file and folder names: the rank that wrote a file (rng_state_3.pth,
// zero_pp_rank_1_mp_rank_00_optim_states.pt, __0_0.distcp, __2.metadata, model_rank1.pt) and the step
// a checkpoint is named for (checkpoint-1200, iter_0001200, epoch=3-step=1200.ckpt): one parser of
// each for every layout, the state readers and the audit alike.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>

namespace ckpt {

/// The number in `pattern`'s first capture group at its first match in `name`; -1 when it does
/// not match or the digits do not fit an int (a name we do not recognise, never an error).
int rankInName(const std::string& name, const std::regex& pattern);

/// The rank of a per-rank file in a folder no layout describes (model_rank1.pt,
/// mp_rank_00_model_states.pt): the digits after "rank" or "_pp_rank_" in the file name; -1 when none.
int rankFromFileName(const std::string& path);

/// The step a checkpoint's name says: "checkpoint-0001200", "checkpoint_3", "global_step1200",
/// Megatron's "iter_0001200", fairseq's "checkpoint_3_1200.pt", Composer's "ep3-ba1200-rank0.pt",
/// "step=1200", "step-1200"; nullopt when it says none.
std::optional<int64_t> stepFromName(const std::string& name);

} // namespace ckpt
