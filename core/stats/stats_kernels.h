// SPDX-License-Identifier: MIT
// The hot loops behind tensor statistics and tensor comparison. One call handles a contiguous
// run of little-endian elements of one kind; the element type is chosen once per call, never
// per element, so the loops auto-vectorize (the .cpp files are built with -O3 and clones for
// AVX2). Internal to core: use tensor_stats.h and tensor_compare.h.
#pragma once

#include "ckpt/dtypes/dtype.h"

#include <cstddef>
#include <cstdint>
#include <limits>

namespace ckpt::kernels {

enum class Kind : uint8_t {
    Unsupported,
    // Counted value by value (the census is exact): every statistic comes from the counts.
    Bool, U8, I8, F8E5M2, F8E4M3FN, F8E5M2FNUZ, F8E4M3FNUZ, F8E8M0, // 256 census entries
    I16, U16, F16, BF16,                                          // 65536 census entries
    // Moments accumulated in float64; histograms binned in a second look (core/stats/linear_bins.h).
    F32, F64, I32, U32, I64, U64, C32, C64, C128,
};

Kind kindOf(DType dtype);
inline bool censusExact(Kind k) { return k != Kind::Unsupported && k <= Kind::BF16; }
inline std::size_t censusSize(Kind k) { return k <= Kind::F8E8M0 ? 256 : 65536; }
/// Bytes per element.
std::size_t kindSize(Kind k);

/// Count, mean and sum of squared deviations of the finite elements (merged with Chan et al.'s
/// formula), their sum of squares, min and max, and the special-value counts.
struct Moments {
    uint64_t n = 0;
    double mean = 0, m2 = 0, sumsq = 0;
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();
    double minAbsNonZero = std::numeric_limits<double>::infinity(); // where the log-|x| histogram starts
    uint64_t nan = 0, posinf = 0, neginf = 0, zeros = 0;

    void merge(const Moments& other);
    /// Adds `count` copies of the finite value `v` (census replay).
    void addRepeated(double v, uint64_t count);
};

/// n, mean, m2 and sumsq of `count` finite values some of which are beyond 2^500 in magnitude,
/// where the fast block reduction's shifted squares would overflow (kernel_support.cpp, built
/// without finite math).
void hugeBlockMoments(const double* finite, std::size_t count, Moments& block);

/// Scans `count` elements: for census kinds counts into `census` (censusSize(kind) entries, at
/// most 2^32 - 1 elements per call), for the others the moments (`census` unused).
void scan(Kind kind, const std::byte* data, std::size_t count, Moments& moments, uint32_t* census);

/// The value a census key stands for (census kinds). Non-finite keys give NaN or ±Inf.
double censusValue(Kind kind, uint32_t key);

/// Figures of an element-wise comparison of two runs of the same kind.
struct PairMoments {
    uint64_t n = 0, nDiff = 0, nonFinite = 0;
    int64_t firstDiff = -1;   // smallest flat index whose bits differ
    double maxAbs = 0, sumSqDiff = 0, sumSqA = 0, sumSqB = 0, dot = 0;

    void merge(const PairMoments& other);
};

/// Compares `count` elements of `a` and `b`; `base` is the flat index of their first element.
void comparePair(Kind kind, const std::byte* a, const std::byte* b, std::size_t count, uint64_t base, PairMoments& m);

} // namespace ckpt::kernels
