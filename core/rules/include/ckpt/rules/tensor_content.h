// SPDX-License-Identifier: MIT
// The content rules (NaN/Inf, negative second moments, moments frozen across a pair) need
// figures computed from tensor bytes. They ask a TensorContentSource for them by provenance, so
// the way the figures are computed can change without touching a rule.
#pragma once

#include "ckpt/state/training_state.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace ckpt {

struct TensorSummary {
    uint64_t numel = 0;
    uint64_t nan = 0, inf = 0; // NaN and ±Inf elements
    uint64_t zeros = 0;
    double min = 0;            // over finite elements (NaN when there is none)
    double l2 = 0;             // over finite elements
};

class TensorContentSource {
public:
    virtual ~TensorContentSource() = default;
    /// The summary of the numeric tensor at `where`; nullopt when it cannot be read, and then
    /// `problem` (when given) says why, naming the file.
    virtual std::optional<TensorSummary> summary(const Provenance& where, std::string* problem) = 0;
    std::optional<TensorSummary> summary(const Provenance& where) { return summary(where, nullptr); }
    /// Whether two tensors (any files) hold the same dtype, shape and bits; nullopt when either
    /// cannot be read.
    virtual std::optional<bool> sameBits(const Provenance& a, const Provenance& b) = 0;
};

/// The source `ckpt check` uses: the statistics and comparisons of ckpt/stats/tensor_source.h, the
/// resolver the diff and the GUI use too, so every layout (DCP chunks with one or per-rank
/// metadata included) is read the same way. Files are opened once each, read-only, and cached for
/// the source's lifetime.
/// `parsed`: files already read (TrainingState::files), used instead of opening them again.
std::shared_ptr<TensorContentSource> makeStatsContentSource(const std::vector<std::shared_ptr<const CheckpointFile>>& parsed = {});

} // namespace ckpt
