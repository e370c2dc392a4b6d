// SPDX-License-Identifier: MIT
// The content rules (NaN/Inf, negative second moments, moments frozen across a pair) need
// figures computed from tensor bytes. They ask a TensorContentSource for them by provenance, so
// the way the figures are computed can change without touching a rule.
#pragma once

#include "core/training_state.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ckpt {

struct TensorSummary {
    uint64_t numel = 0;
    uint64_t nan = 0, inf = 0;   // NaN and ±Inf elements
    uint64_t negative = 0;       // finite elements < 0
    uint64_t zeros = 0;
    double l2 = 0;               // over finite elements
    uint64_t digest = 0;         // FNV-1a over the element bytes in C order: equal tensors, equal digest
};

class TensorContentSource {
public:
    virtual ~TensorContentSource() = default;
    /// The summary of the floating-point tensor at `where`; nullopt when it cannot be read or is
    /// not floating point.
    virtual std::optional<TensorSummary> summary(const Provenance& where) = 0;
};

} // namespace ckpt
