// SPDX-License-Identifier: MIT
// What a StatsAccumulator holds: the element kind, moments and the value census. Internal to
// core (the parallel drivers fill it directly).
#pragma once

#include "ckpt/stats/tensor_compare.h"
#include "ckpt/stats/tensor_stats.h"
#include "stats_kernels.h"
#include "value_sketch.h"

#include <algorithm>
#include <array>
#include <memory>
#include <functional>
#include <vector>

namespace ckpt {

/// A value census whose 64-key blocks are zeroed when first used, not up front, and visited only
/// when used: a 16-bit census has 65536 keys (512 KiB), and zeroing and visiting all of them for
/// each of a checkpoint's 90k small bf16 tensors was most of their statistics' time. A block's
/// counts are valid only once live() made it live (block() says which are).
class LazyCensus {
public:
    LazyCensus() = default;
    LazyCensus(LazyCensus&&) noexcept = default;
    LazyCensus& operator=(LazyCensus&&) noexcept = default;
    LazyCensus(const LazyCensus& other) { *this = other; }
    LazyCensus& operator=(const LazyCensus& other)
    {
        if (this == &other)
            return *this;
        reset(other.m_size);
        for (std::size_t b = 0; b * 64 < m_size; ++b) {
            if (other.block(b))
                std::copy_n(other.m_counts.get() + b * 64, 64, live(b));
        }
        return *this;
    }
    bool empty() const { return m_size == 0; }
    std::size_t size() const { return m_size; }
    /// `n` keys (a multiple of 64), every block unused.
    void reset(std::size_t n)
    {
        m_counts.reset(new uint64_t[n]); // uninitialised: live() zeroes a block when first used
        m_size = n;
        m_blocks = {};
    }
    bool block(std::size_t b) const { return (m_blocks[b / 64] >> (b % 64)) & 1; }
    /// Block b's 64 counts, zeroed on its first use.
    uint64_t* live(std::size_t b)
    {
        uint64_t* counts = m_counts.get() + b * 64;
        if (!block(b)) {
            std::fill(counts, counts + 64, 0);
            m_blocks[b / 64] |= uint64_t(1) << (b % 64);
        }
        return counts;
    }
    /// Key k's count (k in a live block).
    uint64_t operator[](std::size_t k) const { return m_counts[k]; }

private:
    std::unique_ptr<uint64_t[]> m_counts;
    std::size_t m_size = 0;
    std::array<uint64_t, 1024 / 64> m_blocks{};
};

/// A worker thread's 32-bit census scratch (65536 entries), made once per thread and always all
/// zero between uses: StatsAccumulator::State::absorbCensus clears what it takes.
uint32_t* censusScratch();

struct StatsAccumulator::State {
    DType dtype = DType::Unknown;
    kernels::Kind kind = kernels::Kind::Unsupported;
    uint64_t count = 0;               // elements added
    kernels::Moments moments;         // non-census kinds only (census kinds derive them from the census)
    /// Census kinds: censusSize(kind) keys once anything was added. The census loops visit only
    /// its live blocks, in key order (zero counts were skipped anyway, so every figure is the same).
    LazyCensus census;

    bool censusBlock(std::size_t b) const { return census.block(b); }
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
