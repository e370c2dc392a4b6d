// SPDX-License-Identifier: MIT
// Rank numbers in file names (rng_state_3.pth, zero_pp_rank_1_mp_rank_00_optim_states.pt,
// __0_0.distcp, __2.metadata, model_rank1.pt): one parser for every layout that names a file
// after the rank that wrote it.
#pragma once

#include <regex>
#include <string>

namespace ckpt {

/// The number in `pattern`'s first capture group at its first match in `name`; -1 when it does
/// not match or the digits do not fit an int (a name we do not recognise, never an error).
int rankInName(const std::string& name, const std::regex& pattern);

/// The rank of a per-rank file in a folder no layout describes (model_rank1.pt,
/// mp_rank_00_model_states.pt): the digits after "rank" or "_pp_rank_" in the file name; -1 when none.
int rankFromFileName(const std::string& path);

} // namespace ckpt
