// SPDX-License-Identifier: MIT
// What a StatsAccumulator holds: the element kind, moments and the value census. Internal to
// core (the parallel drivers fill it directly).
#pragma once

#include "ckpt/stats/tensor_compare.h"
#include "ckpt/stats/tensor_stats.h"
#include "stats_kernels.h"
#include "value_sketch.h"

#include <array>
#include <functional>
#include <vector>

namespace ckpt {

struct StatsAccumulator::State {
    DType dtype = DType::Unknown;
    kernels::Kind kind = kernels::Kind::Unsupported;
    uint64_t count = 0;               // elements added
    kernels::Moments moments;         // non-census kinds only (census kinds derive them from the census)
    std::vector<uint64_t> census;     // census kinds: censusSize(kind) entries once anything was added
    /// Bit b: keys [64b, 64b + 64) of the census may be non-zero. The census loops visit only
    /// those blocks, in key order (zero counts were skipped anyway, so every figure is the same):
    /// a 16-bit census has 65536 keys, and a checkpoint of 90k small bf16 tensors visited them all
    /// for each tensor.
    std::array<uint64_t, 1024 / 64> censusBlocks{};

    bool censusBlock(std::size_t b) const { return (censusBlocks[b / 64] >> (b % 64)) & 1; }
    void markCensusBlock(std::size_t b) { censusBlocks[b / 64] |= uint64_t(1) << (b % 64); }
    /// Non-census kinds: both histograms, binned (core/stats/linear_bins.h) by a look at the
    /// elements or from a value sketch once min, max and the smallest non-zero |x| were known;
    /// empty when they were not binned over the accumulator's current ranges (see finish()).
    std::vector<uint64_t> linear, log;
    double linearLo = 0, linearHi = 0, logLo = 0, logHi = 0;
    uint64_t linearUncertain = 0, logUncertain = 0; // binned from a value sketch: elements maybe one bin off
    /// Non-census kinds with StatsOptions::mergeableHistograms: the elements' value sketch
    /// (complete when its total is the count of finite non-zero elements).
    kernels::ValueSketch sketch;

    /// Adds a worker's 32-bit census and clears it. With the `count` elements at `data` that were
    /// counted into it (few of them), only their keys are visited.
    void absorbCensus(uint32_t* local, const std::byte* data = nullptr, std::size_t count = 0);
};

class TensorViewReader;

namespace detail {

/// Statistics of many views on one thread pool, chunk by chunk in file order; `done` gets each
/// view's accumulator as soon as its last chunk is scanned (serialized, any order).
void scanViewsForStats(const std::vector<const TensorViewReader*>& views, const StatsOptions& options,
                       const std::function<void(std::size_t index, StatsAccumulator&& acc)>& done);

/// Comparison of many view pairs (same dtype and numel) on one thread pool.
void compareViews(const std::vector<std::pair<const TensorViewReader*, const TensorViewReader*>>& pairs,
                  const StatsOptions& options,
                  const std::function<void(std::size_t index, const kernels::PairMoments& m)>& done);

/// Fills a TensorDiff's figures from the comparison moments.
void applyPairMoments(TensorDiff& diff, const kernels::PairMoments& m);

} // namespace detail
} // namespace ckpt
