// SPDX-License-Identifier: MIT
// Element-by-element comparison of two tensors in one pass over both (no copies): whether they
// are bit-for-bit equal, how many elements differ, max |a-b|, ‖a-b‖/‖a‖ and the cosine of the
// angle between them. Used by the two-checkpoint diff and the replica check.
#pragma once

#include "ckpt/formats/key_path.h"
#include "ckpt/stats/tensor_stats.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ckpt {

enum class DiffStatus : uint8_t {
    Equal,        // same dtype, shape and bits
    Changed,      // same dtype and shape, some element's bits differ
    OnlyA,        // present in A only
    OnlyB,        // present in B only
    ShapeChanged, // both present, shapes differ (no element comparison)
    DtypeChanged, // both present, same shape, dtypes differ (no element comparison)
    Unreadable,   // a side's bytes could not be read (TensorDiff::problem says why)
};

/// "equal", "changed", "only_a", "only_b", "shape_changed", "dtype_changed", "unreadable".
const char* diffStatusName(DiffStatus status);

struct TensorDiff {
    std::string key;              // the aligned name, e.g. "model/layers.0.weight"
    std::string component;        // "model", "optimizer", "other"
    std::string fileA, fileB;     // where each side was read ("" when absent)
    KeyPath keyA, keyB;           // key path inside that file
    std::string dtypeA, dtypeB;
    std::vector<int64_t> shapeA, shapeB;
    DiffStatus status = DiffStatus::Equal;
    uint64_t numel = 0;           // elements compared (complex: numbers)
    uint64_t nDiff = 0;           // elements whose bits differ (0.0 vs -0.0 counts; equal NaN bits do not)
    int64_t firstDiff = -1;       // flat (C-order) index of the first differing element, -1 when none
    double maxAbsDiff = 0;        // max |a-b| over pairs where both are finite
    double relL2 = 0;             // ‖a-b‖ / ‖a‖ over finite pairs (inf when ‖a‖ = 0 and a != b)
    double cosine = std::numeric_limits<double>::quiet_NaN(); // a·b / (‖a‖‖b‖); NaN when a norm is 0
    double normA = 0, normB = 0;  // L2 norms over the finite pairs
    uint64_t nonFinitePairs = 0;  // pairs where either side is NaN or ±Inf (left out of the norms)
    std::string problem;
};

/// Compares two tensor views. Sets status, the figures, dtypes and shapes; the caller fills
/// key, component, files and key paths. Statuses OnlyA/OnlyB are never returned. Throws
/// CancelledError when cancelled.
TensorDiff compareTensors(const CheckpointFile& a, const TensorInfo& ta, const CheckpointFile& b, const TensorInfo& tb,
                          const StatsOptions& options = {});

class TensorViewReader;

/// One element-wise comparison of a many-tensor diff: two views of equal dtype and element
/// count (a whole tensor, or one chunk pair of a sharded one) whose figures go to diffs[diff].
struct ViewPairJob {
    std::size_t diff;
    const TensorViewReader* a;
    const TensorViewReader* b;
};

/// Compares every job on one thread pool and fills the figures of the diffs they name, merged
/// over the jobs of each diff. Returns false when cancelled: the diffs whose jobs had finished
/// still get their figures.
bool compareViewPairs(const std::vector<ViewPairJob>& jobs, std::vector<TensorDiff>& diffs, const StatsOptions& options);

} // namespace ckpt
