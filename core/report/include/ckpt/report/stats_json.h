// SPDX-License-Identifier: MIT
// JSON of statistics and diffs, the `ckpt tensors --stats --json` and `ckpt diff --json`
// contract (README). Non-finite numbers are the strings "nan", "inf", "-inf".
#pragma once

#include "ckpt/compare/checkpoint_diff.h"
#include "ckpt/report/json_export.h"
#include "ckpt/stats/checkpoint_stats.h"

#include <nlohmann/json.hpp>

#include <ostream>

namespace ckpt {

/// {"min", "max", "mean", "std", "l2", "absmax", "nan", "posinf", "neginf", "zeros", "numel",
///  "hist": {"lo", "hi", "counts"}, "log10_abs_hist": {...}, "exact_hist"} or {"problem"}.
nlohmann::json tensorStatsToJson(const TensorStats& stats);


/// {"key", "kind", "dtype", "shape", "shards": [{"rank", "file", "offsets", "sizes", "stats"}], "merged"}
nlohmann::json shardedStatsToJson(const ShardedTensorStats& sharded);
nlohmann::json replicaGroupToJson(const ReplicaGroup& group);

/// {"key", "status", "max_abs_diff", "rel_l2", "cosine", "n_diff", ...}
nlohmann::json tensorDiffToJson(const TensorDiff& diff);

/// `ckpt diff A B --json`: {"a", "b", "prefix_stripped": {"a", "b"}, "tensors": [...],
///  "states": {component: [{"name", "a", "b", "status"}]}, "counts", "warnings"}
nlohmann::json checkpointDiffToJson(const CheckpointDiff& diff);

} // namespace ckpt
