// SPDX-License-Identifier: MIT
// The one-pass summary of a large tensor's values from which its two 64-bin histograms are
// binned once min, max and the smallest non-zero |x| are known.
//
// Exact histograms over [min, max] need those bounds before any element is binned, and no
// bounded summary of the elements seen so far can replace a second look (a later element may
// move the bounds and every bin edge with them). Re-reading a tensor larger than memory
// would double its I/O, so the one pass keeps a sketch instead: a count per cell of 2^20
// cells that partition the float32 line by sign, exponent and the top 11 mantissa bits (cells
// 2^-11 of |x| wide). float64 values beyond float32's exponent range would share the end
// cells: a tensor holding such values is binned by a second look instead (sketchCovers).
// Binning the sketch is exact for every cell that lies inside one bin, which is nearly all
// of them; a cell that straddles a bin edge is split between the bins in proportion to the
// overlap and its elements are counted as uncertain: each of them may be one bin off. The
// count is reported, so a user knows how far the histogram is from torch.histc's
// (`StatsOptions::exactHistograms` asks for the exact second look instead).
// Internal to core.
#pragma once

#include "linear_bins.h"
#include "stats_kernels.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace ckpt::kernels {

/// Cells: keys ordered like the values; negative values below kSketchPositive, positive from
/// it. A magnitude cell is an exponent (float32's range) and the top mantissa bits.
constexpr uint32_t kSketchMantissaBits = 11;
constexpr uint32_t kSketchMantissaMask = (1u << kSketchMantissaBits) - 1;
constexpr uint32_t kSketchPositive = 1u << (8 + kSketchMantissaBits);
constexpr uint32_t kSketchCells = 2 * kSketchPositive;
/// The magnitude cell of float64 values from the top of float32's range up.
constexpr uint32_t kSketchTopMagnitude = (254u << kSketchMantissaBits) | kSketchMantissaMask;

/// One worker's counts for a run of elements (at most 2^32 - 1 between absorbs). The table
/// is calloc'd, so the pages of cells never touched never become resident.
struct SketchTable {
    struct Free {
        void operator()(uint32_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint32_t[], Free> counts; // kSketchCells + 1 entries; the last: not counted
    // Keys touched: negative ones in [lo, negHi], positive ones in [posLo, hi]. The cells
    // between (tiny magnitudes) are usually untouched and never visited.
    uint32_t lo = kSketchCells, negHi = 0, posLo = kSketchCells, hi = 0;

    SketchTable();
};

/// True when the sketch's cells are narrow over all of [minAbs, absMax] (the non-zero
/// magnitudes of a tensor): always for float32; for the other kinds when the magnitudes lie in
/// float32's normal range (beyond it the end cells span many decades: such a tensor needs the
/// exact second look instead).
bool sketchCovers(Kind kind, double minAbs, double absMax);

/// Counts the finite non-zero elements of `count` contiguous elements of a kind without a
/// census (32- and 64-bit, complex magnitudes) into `table`.
void sketchElements(Kind kind, const std::byte* data, std::size_t count, SketchTable& table);

/// A tensor's sketch, merged from the tables of the chunks that were scanned.
class ValueSketch {
public:
    /// Adds the table's counts and clears them (only the cells touched are visited).
    void absorb(SketchTable& table);
    void merge(const ValueSketch& other);
    bool empty() const { return neg.counts.empty() && pos.counts.empty(); }
    uint64_t total() const; // elements counted

    struct Binned {
        uint64_t linearUncertain = 0, logUncertain = 0; // elements of cells that straddle a bin edge
    };
    /// Adds the sketched elements to the histograms (64 entries each) with these bins, and
    /// `zeros` zeros to the linear one. `min`..`max` and `minAbs`..`absMax` are the bounds of the
    /// sketched values (the moments'); a cell is clipped to them before it is binned.
    Binned bin(Kind kind, const LinearBins& linear, const LogBins& log, double min, double max, double minAbs,
               double absMax, uint64_t zeros, uint64_t* linearCounts, uint64_t* logCounts) const;

private:
    struct Side {
        uint32_t lo = 0;               // key of counts[0]
        std::vector<uint64_t> counts;  // dense over the keys seen on this side of zero
        void add(const uint32_t* table, uint32_t from, uint32_t to); // keys [from, to]
    };
    Side neg, pos;
};

} // namespace ckpt::kernels
