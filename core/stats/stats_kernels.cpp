// SPDX-License-Identifier: MIT
// Statistics scan loops. Built with -O3 -ffast-math-like flags (core/CMakeLists.txt) so GCC
// vectorizes the float64 reductions and min/max: reassociation only changes rounding in the
// last bits. Finite math is assumed, so every NaN/Inf test here looks at the bits, and
// non-finite values are masked out (by bit tests) before any arithmetic.
#include "stats_kernels.h"

#include "element_values.h"
#include "float_formats.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#define CKPT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define CKPT_INLINE [[gnu::always_inline]] inline

namespace ckpt::kernels {
namespace {

constexpr std::size_t kBlock = 1024; // elements per moments block (a few KiB: stays in L1)
constexpr double kBig = std::numeric_limits<double>::max(); // sentinel: infinities are not assumed here
constexpr uint64_t kExp64 = 0x7ff0000000000000ull;
constexpr double kHuge = 0x1p500; // beyond it, shifted squares of a block may overflow

CKPT_INLINE bool finiteBits(double v) { return (std::bit_cast<uint64_t>(v) & kExp64) != kExp64; }

// ---- census-only kinds: one increment per element, two interleaved tables would need
// 2x the cache; a single table with the loop unrolled is as fast on the sizes seen here.

// The input comes from the page cache through the mapping, and the hardware prefetchers stop
// at every 4 KiB page: without a hint the loops wait on memory for most of their time.
constexpr std::size_t kPrefetchAhead = 8192; // bytes

CKPT_INLINE void prefetchRange(const std::byte* from, const std::byte* end, std::size_t bytes)
{
    for (std::size_t off = 0; off < bytes && from + off < end; off += 64)
        __builtin_prefetch(from + off);
}

template<typename Key>
CKPT_INLINE void censusRun(const std::byte* p, std::size_t n, uint32_t* census)
{
    constexpr std::size_t step = 4096 / sizeof(Key); // one page of elements per round
    const std::byte* end = p + n * sizeof(Key);
    for (std::size_t i = 0; i < n; i += step) {
        prefetchRange(p + i * sizeof(Key) + kPrefetchAhead, end, 4096);
        const std::size_t m = std::min(step, n - i);
#pragma GCC unroll 8
        for (std::size_t j = 0; j < m; ++j)
            ++census[loadAt<Key>(p, i + j)];
    }
}

CKPT_CLONES void census8(const std::byte* p, std::size_t n, uint32_t* census) { censusRun<uint8_t>(p, n, census); }
CKPT_CLONES void census16(const std::byte* p, std::size_t n, uint32_t* census) { censusRun<uint16_t>(p, n, census); }

// ---- moment kinds: convert a block to float64, reduce it, merge the block with Chan's formula.

// `value(i)` gives element i of the block as a float64 (a load and a conversion, inlined).
template<typename Value>
CKPT_INLINE void reduceBlock(Value value, std::size_t m, Moments& out)
{
    double shift = 0;
    for (std::size_t i = 0; i < m; ++i) {
        if (finiteBits(value(i))) {
            shift = value(i);
            break;
        }
    }
    double s1 = 0, s2 = 0, sq = 0, mn = kBig, mx = -kBig;
    uint64_t fin = 0, zeros = 0;
    for (std::size_t i = 0; i < m; ++i) {
        const double x = value(i);
        const uint64_t bits = std::bit_cast<uint64_t>(x);
        const bool f = (bits & kExp64) != kExp64;
        const double d = f ? x - shift : 0.0;
        const double xf = f ? x : 0.0;
        s1 += d;
        s2 += d * d;
        sq += xf * xf;
        const double lo = f ? x : kBig, hi = f ? x : -kBig;
        mn = lo < mn ? lo : mn;
        mx = hi > mx ? hi : mx;
        fin += f;
        zeros += (bits << 1) == 0;
    }
    if (fin < m) {
        for (std::size_t i = 0; i < m; ++i) {
            const uint64_t bits = std::bit_cast<uint64_t>(value(i));
            if ((bits & kExp64) != kExp64)
                continue;
            if (bits & 0x000fffffffffffffull)
                ++out.nan;
            else if (bits >> 63)
                ++out.neginf;
            else
                ++out.posinf;
        }
    }
    out.zeros += zeros;
    if (fin == 0)
        return;
    Moments block;
    block.min = mn;
    block.max = mx;
    if (std::max(-mn, mx) > kHuge) {
        // Squares or differences would overflow (float64 near its maximum): the block again, scaled,
        // outside this finite-math file.
        std::array<double, kBlock> finite;
        std::size_t k = 0;
        for (std::size_t i = 0; i < m; ++i) {
            if (finiteBits(value(i)))
                finite[k++] = value(i);
        }
        hugeBlockMoments(finite.data(), k, block);
    } else {
        block.n = fin;
        block.mean = shift + s1 / static_cast<double>(fin);
        block.m2 = std::max(0.0, s2 - s1 * s1 / static_cast<double>(fin));
        block.sumsq = sq;
    }
    out.merge(block); // counts, min/max and the mean/m2 merge, safe near the float64 maximum
}

// The smallest non-zero |x| (where the log-|x| histogram starts), as an unsigned minimum of
// (|x| bits - 1), where zero wraps to the largest value: a loop of its own so that it
// vectorizes (vpminuq). Non-finite values have larger bits than any finite one.
CKPT_INLINE void minAbsBlock(const double* v, std::size_t m, Moments& out)
{
    uint64_t mnz = ~uint64_t(0);
    for (std::size_t i = 0; i < m; ++i) {
        const uint64_t below = (std::bit_cast<uint64_t>(v[i]) & 0x7fffffffffffffffull) - 1u;
        mnz = below < mnz ? below : mnz;
    }
    if (mnz < 0x7ff0000000000000ull - 1u)
        out.minAbsNonZero = std::min(out.minAbsNonZero, std::bit_cast<double>(mnz + 1u));
}

// Loads block [i, i+m) of the input as float64. One instantiation per kind.
template<Kind K>
CKPT_INLINE void convertBlock(const std::byte* p, std::size_t i, std::size_t m, double* v)
{
    for (std::size_t j = 0; j < m; ++j) {
        const std::size_t k = i + j;
        if constexpr (K == Kind::F32)
            v[j] = loadAt<float>(p, k);
        else if constexpr (K == Kind::F64)
            v[j] = loadAt<double>(p, k);
        else if constexpr (K == Kind::I32)
            v[j] = loadAt<int32_t>(p, k);
        else if constexpr (K == Kind::U32)
            v[j] = loadAt<uint32_t>(p, k);
        else if constexpr (K == Kind::I64)
            v[j] = static_cast<double>(loadAt<int64_t>(p, k));
        else if constexpr (K == Kind::U64)
            v[j] = static_cast<double>(loadAt<uint64_t>(p, k));
        else if constexpr (K == Kind::C32) {
            const double re = halfToFloat(loadAt<uint16_t>(p, 2 * k)), im = halfToFloat(loadAt<uint16_t>(p, 2 * k + 1));
            v[j] = std::sqrt(re * re + im * im);
        } else if constexpr (K == Kind::C64) {
            const double re = loadAt<float>(p, 2 * k), im = loadAt<float>(p, 2 * k + 1);
            v[j] = std::sqrt(re * re + im * im);
        } else if constexpr (K == Kind::C128) {
        {
            const double re = loadAt<double>(p, 2 * k), im = loadAt<double>(p, 2 * k + 1);
            v[j] = std::sqrt(re * re + im * im);
        }
        }
    }
}

// The same for float32, straight from the input bits (vpminud).
CKPT_INLINE void minAbsF32(const std::byte* p, std::size_t i, std::size_t m, Moments& out)
{
    uint32_t mnz = ~0u;
    for (std::size_t j = 0; j < m; ++j) {
        const uint32_t below = (loadAt<uint32_t>(p, i + j) & 0x7fffffffu) - 1u;
        mnz = below < mnz ? below : mnz;
    }
    if (mnz < 0x7f800000u - 1u)
        out.minAbsNonZero = std::min(out.minAbsNonZero, static_cast<double>(std::bit_cast<float>(mnz + 1u)));
}

template<Kind K>
CKPT_INLINE void scanMoments(const std::byte* p, std::size_t n, Moments& out)
{
    alignas(64) double v[kBlock];
    constexpr std::size_t size = K == Kind::F32 || K == Kind::I32 || K == Kind::U32 || K == Kind::C32 ? 4 : K == Kind::C128 ? 16 : 8;
    for (std::size_t i = 0; i < n; i += kBlock) {
        const std::size_t m = std::min(kBlock, n - i);
        prefetchRange(p + i * size + kPrefetchAhead, p + n * size, m * size);
        if constexpr (K == Kind::F32) { // straight from the input: no float64 buffer
            reduceBlock([p, i](std::size_t j) { return static_cast<double>(loadAt<float>(p, i + j)); }, m, out);
            minAbsF32(p, i, m, out);
        } else {
            convertBlock<K>(p, i, m, v);
            reduceBlock([&v](std::size_t j) { return v[j]; }, m, out);
            minAbsBlock(v, m, out);
        }
    }
}

CKPT_CLONES void scanF32(const std::byte* p, std::size_t n, Moments& o) { scanMoments<Kind::F32>(p, n, o); }
CKPT_CLONES void scanF64(const std::byte* p, std::size_t n, Moments& o) { scanMoments<Kind::F64>(p, n, o); }
CKPT_CLONES void scanI32(const std::byte* p, std::size_t n, Moments& o) { scanMoments<Kind::I32>(p, n, o); }
CKPT_CLONES void scanU32(const std::byte* p, std::size_t n, Moments& o) { scanMoments<Kind::U32>(p, n, o); }
CKPT_CLONES void scanI64(const std::byte* p, std::size_t n, Moments& o) { scanMoments<Kind::I64>(p, n, o); }
CKPT_CLONES void scanU64(const std::byte* p, std::size_t n, Moments& o) { scanMoments<Kind::U64>(p, n, o); }
CKPT_CLONES void scanC32(const std::byte* p, std::size_t n, Moments& o) { scanMoments<Kind::C32>(p, n, o); }
CKPT_CLONES void scanC64(const std::byte* p, std::size_t n, Moments& o) { scanMoments<Kind::C64>(p, n, o); }
CKPT_CLONES void scanC128(const std::byte* p, std::size_t n, Moments& o) { scanMoments<Kind::C128>(p, n, o); }

} // namespace

void scan(Kind kind, const std::byte* p, std::size_t n, Moments& m, uint32_t* census)
{
    switch (kind) {
    case Kind::Bool: case Kind::U8: case Kind::I8: case Kind::F8E5M2: case Kind::F8E4M3FN:
    case Kind::F8E5M2FNUZ: case Kind::F8E4M3FNUZ: case Kind::F8E8M0:
        return census8(p, n, census);
    case Kind::I16: case Kind::U16: case Kind::F16: case Kind::BF16:
        return census16(p, n, census);
    case Kind::F32: return scanF32(p, n, m);
    case Kind::F64: return scanF64(p, n, m);
    case Kind::I32: return scanI32(p, n, m);
    case Kind::U32: return scanU32(p, n, m);
    case Kind::I64: return scanI64(p, n, m);
    case Kind::U64: return scanU64(p, n, m);
    case Kind::C32: return scanC32(p, n, m);
    case Kind::C64: return scanC64(p, n, m);
    case Kind::C128: return scanC128(p, n, m);
    case Kind::Unsupported: return;
    }
}

} // namespace ckpt::kernels
