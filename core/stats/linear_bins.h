// SPDX-License-Identifier: MIT
// The bins of the two 64-bin histograms of tensor statistics, element by element and exact.
//
// The linear histogram bins exactly as torch.histc(t, 64, min, max) bins on the CPU: pos = (int64)((v - lo) * 64 / (hi - lo)) evaluated in the arithmetic
// type, the maximum in the last bin, and an empty range widened to [v - 1, v + 1]. The
// arithmetic type is float32 for float32 and every type whose values float32 holds exactly
// (16- and 8-bit types, bool): what torch.histc gives on t.float(), since PyTorch 1.13 has no
// CPU histc for float16 or integers and rounds each step to 8 bits for bfloat16. It is float64
// for float64, 32/64-bit integers and complex magnitudes (torch.histc on t.double()).
// Internal to core.
#pragma once

#include "stats_kernels.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ckpt::kernels {

struct LinearBins {
    double lo = 0, hi = 0;      // the histogram's range (widened when min == max)
    bool single = true;         // float32 arithmetic
    float lo32 = 0, width32 = 1;
    double width = 1;

    /// Bins for finite values in [min, max] of a tensor of this kind.
    static LinearBins over(Kind kind, double min, double max);
    /// Bin (0..63) of a finite value in [lo, hi].
    std::size_t binOf(double v) const;
};

/// The log-|x| histogram: bin floor((log10|x| - lo) / (hi - lo) * 64) over lo = log10 of the
/// smallest non-zero |x|, hi = log10 of the largest (widened like the linear one when equal).
/// A logarithm per element would cost more than the whole scan, so the 63 bin edges are
/// located once, as the smallest |x| of each bin (a bisection over the float64 bit patterns
/// around 10^edge, so they are exactly where the formula changes bin), and an element's bin
/// is the number of edges at or below |x|. For large tensors a table over the top bits of |x|
/// (the exponent and as many mantissa bits as make at most 32768 cells between the smallest
/// and the largest |x|, so cells are far narrower than bins) gives that number directly
/// wherever its cell holds no edge; the few cells that hold one are looked up in the edges.
struct LogBins {
    static constexpr uint8_t kLookUp = 0xff; // table cell with an edge inside

    double lo = 0, hi = 0;
    std::array<double, 63> edges{}; // edges[k - 1]: the smallest |x| in bin k or above (inf: none)
    int shift = 52;                 // key of |x|: its float64 bits >> shift
    uint64_t keyMin = 0, cells = 0; // cells: keys from keyMin in the table (0: no table)
    /// Bins of the cells, kLookUp where a cell holds an edge, then two sentinel cells: 64
    /// (no bin: zero or non-finite) and kLookUp (look the element up in the edges).
    std::vector<uint8_t> table{64, kLookUp};

    /// `elements`: how many will be binned (a table pays off only for many); cells are never
    /// finer than a key shift of `minShift` (29 for float32, whose bits are shifted by 29).
    static LogBins over(double minAbsNonZero, double absMax, uint64_t elements, int minShift);
    /// Bin of a finite non-zero |x| in [minAbsNonZero, absMax].
    std::size_t binOf(double magnitude) const;
};

/// Adds the bins of the finite elements among `count` contiguous elements to `linear` and,
/// for the non-zero ones, `log` (64 entries each). For the kinds without an exact census
/// (32- and 64-bit, complex); the values are those the statistics scan sees (complex: |z|
/// in float64).
void binElements(Kind kind, const std::byte* data, std::size_t count, const LinearBins& linearBins, const LogBins& logBins,
                 uint64_t* linear, uint64_t* log);

} // namespace ckpt::kernels
