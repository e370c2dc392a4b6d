// SPDX-License-Identifier: MIT
// Summary statistics of a tensor's elements, computed in one read of its bytes: min, max,
// mean, standard deviation, L2 norm, max |x|, NaN/Inf/zero counts and two 64-bin histograms.
//
// Partial results are StatsAccumulators: they merge exactly (counts add, moments combine with
// Chan et al.'s parallel formula, histograms from exact value counts or, for 32/64-bit types,
// by re-binning: rebinMergedStats), so the statistics of a tensor split over threads, DCP
// chunks or per-rank shards equal those of the whole tensor.
//
// Conventions (what a user comparing with PyTorch should know):
//  * min, max, mean, std, l2 and absmax are over the FINITE elements; NaN and ±Inf are counted
//    separately. With no finite element they are NaN (l2: 0).
//  * std is Bessel-corrected like torch.std() (NaN for fewer than two finite elements).
//  * Complex tensors are summarised on their magnitudes |z|.
//  * The linear histogram bins exactly as torch.histc(t, 64, min, max) does on the CPU, the
//    log-|x| one exactly by its formula (core/stats/linear_bins.h). Bool, 8- and 16-bit types are
//    counted value by value, so every figure and both histograms come from the counts. 32-
//    and 64-bit types have exact moments, min and max; their histograms need min, max and
//    the smallest non-zero |x| before an element can be binned. A tensor of one 8 MiB chunk
//    is binned exactly right after its scan, from the cache. A larger one is read once: each
//    chunk is summarised in a value sketch (core/stats/value_sketch.h) from which the histograms
//    are binned at the end, exactly except for the elements of sketch cells that straddle a
//    bin edge (histUncertain: each may be one bin off). StatsOptions::exactHistograms bins
//    those tensors exactly instead, by a second look at their elements (from the page cache).
//    Partials of those types merged over different ranges (shards) have no histograms until
//    rebinMergedStats bins them again, from their merged sketches or exactly by a second read
//    (exactHistograms false meanwhile).
#pragma once

#include "ckpt/dtypes/dtype.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace ckpt {

class CheckpointFile;
struct TensorInfo;

constexpr int kHistogramBins = 64;

struct Histogram {
    double lo = 0, hi = 0;        // linear histogram: [min, max]; log histogram: [log10 min|x|, log10 max|x|]
    std::vector<uint64_t> counts; // kHistogramBins bins of width (hi - lo) / 64; empty when nothing was binned
    uint64_t total() const;
};

struct TensorStats {
    std::string dtype;            // PyTorch's name ("float32")
    uint64_t numel = 0;           // elements of the view
    uint64_t finite = 0;          // of them finite
    uint64_t nan = 0, posinf = 0, neginf = 0, zeros = 0;
    double min = std::numeric_limits<double>::quiet_NaN();
    double max = std::numeric_limits<double>::quiet_NaN();
    double mean = std::numeric_limits<double>::quiet_NaN();
    double std = std::numeric_limits<double>::quiet_NaN();
    double l2 = 0;
    double absmax = std::numeric_limits<double>::quiet_NaN();
    Histogram hist;               // finite elements, linear over [min, max]; sums to `finite`
    Histogram logHist;            // finite non-zero elements, over log10|x|; sums to `finite - zeros`
    /// The linear histogram equals torch.histc's; false: either none (merged partials not
    /// binned again, counts empty) or binned from the value sketch with histUncertain > 0.
    bool exactHistograms = true;
    bool exactLogHistogram = true; // the same for the log-|x| histogram
    uint64_t histUncertain = 0;    // elements of the linear histogram that may be one bin off
    uint64_t logHistUncertain = 0; // the same for the log-|x| histogram
    bool complexMagnitude = false;
    std::string problem;          // why there are no statistics (no bytes, sparse, unknown dtype); empty otherwise

    bool ok() const { return problem.empty(); }
};

/// Partial statistics; add() elements, merge() partials, finish() into TensorStats.
class StatsAccumulator {
public:
    /// Throws std::invalid_argument for types without numeric values (quantized, bits, unknown).
    explicit StatsAccumulator(DType dtype);
    StatsAccumulator(const StatsAccumulator& other);
    StatsAccumulator& operator=(const StatsAccumulator& other);
    StatsAccumulator(StatsAccumulator&&) noexcept;
    StatsAccumulator& operator=(StatsAccumulator&&) noexcept;
    ~StatsAccumulator();

    /// `count` contiguous elements in little-endian byte order.
    void add(const std::byte* data, std::size_t count);
    /// Exact combination: the result is what one accumulator fed both inputs would hold.
    /// Throws std::invalid_argument when the dtypes differ.
    void merge(const StatsAccumulator& other);
    TensorStats finish() const;

    DType dtype() const;
    uint64_t count() const;

    struct State; // core/stats/stats_state.h
    State& state() { return *m; }
    const State& state() const { return *m; }

private:
    std::unique_ptr<State> m;
};

/// True when statistics can be computed for this element type.
bool statsSupported(DType dtype);

struct StatsProgress {
    uint64_t bytesDone = 0, bytesTotal = 0;
    std::size_t tensorsDone = 0, tensorsTotal = 0;
};

struct StatsOptions {
    unsigned threads = 0; // 0: std::thread::hardware_concurrency()
    /// Called from worker threads (never concurrently with itself) after each chunk of about
    /// 16 MiB and at the end. Return false to cancel: work stops at the next chunk and the
    /// call throws CancelledError (or reports cancelled = true where a result is returned).
    std::function<bool(const StatsProgress&)> progress;
    /// Histograms of 32/64-bit tensors larger than one chunk binned exactly, by a second look
    /// at their elements right after their scan (from the page cache), instead of from the
    /// one-pass value sketch (see TensorStats::histUncertain).
    bool exactHistograms = false;
    /// Keep the value sketch of every 32/64-bit tensor in its accumulator (one more look at
    /// each chunk, in the cache), so that partials merged over different ranges (shards) get
    /// their histograms from the merged sketches instead of a second read (rebinMergedStats).
    bool mergeableHistograms = false;
};

/// Statistics of one tensor's view (shape, stride and offset applied, big-endian files
/// swapped), split across threads when large. Never throws for bad data: a tensor without
/// usable bytes gets TensorStats::problem. Throws CancelledError when cancelled.
TensorStats computeTensorStats(const CheckpointFile& file, const TensorInfo& tensor, const StatsOptions& options = {});

/// The same as a mergeable partial (for shards). Throws FormatError when the tensor has no
/// usable bytes, std::invalid_argument for unsupported dtypes, CancelledError when cancelled.
StatsAccumulator accumulateTensorStats(const CheckpointFile& file, const TensorInfo& tensor, const StatsOptions& options = {});

/// Bins the histograms of an accumulator merged from parts with different ranges (shards)
/// over the merged min and max, from the parts' merged value sketches, without reading
/// anything; histUncertain elements may be one bin off. False when that is not possible: a
/// part kept no sketch (StatsOptions::mergeableHistograms) or the values are beyond what the
/// sketch resolves; rebinMergedStats is the way then. True (and nothing done) for types
/// counted value by value and when the histograms are binned over the merged ranges already.
bool binMergedFromSketches(StatsAccumulator& merged);

/// The same exactly, by a second read of every part. A no-op for types counted value by
/// value (exact already) and when the histograms are binned over the merged ranges already.
/// Throws like accumulateTensorStats.
struct TensorPart {
    const CheckpointFile* file = nullptr;
    const TensorInfo* tensor = nullptr;
};
void rebinMergedStats(StatsAccumulator& merged, const std::vector<TensorPart>& parts);

} // namespace ckpt
