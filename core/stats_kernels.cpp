// SPDX-License-Identifier: MIT
// Statistics scan loops. Built with -O3 -ffast-math-like flags (core/CMakeLists.txt) so GCC
// vectorizes the float64 reductions and min/max: reassociation only changes rounding in the
// last bits. Finite math is assumed, so every NaN/Inf test here looks at the bits, and
// non-finite values are masked out (by bit tests) before any arithmetic.
#include "core/stats_kernels.h"

#include "core/float_formats.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#define CKPT_CLONES __attribute__((target_clones("avx2", "default")))
#define CKPT_INLINE [[gnu::always_inline]] inline

namespace ckpt::kernels {
namespace {

constexpr std::size_t kBlock = 1024; // elements per moments block (a few KiB: stays in L1)
constexpr double kBig = std::numeric_limits<double>::max(); // sentinel: infinities are not assumed here
constexpr uint64_t kExp64 = 0x7ff0000000000000ull;

CKPT_INLINE bool finiteBits(double v) { return (std::bit_cast<uint64_t>(v) & kExp64) != kExp64; }

template<typename T>
CKPT_INLINE T loadAt(const std::byte* p, std::size_t i)
{
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return v;
}

// ---- census-only kinds: one increment per element, two interleaved tables would need
// 2x the cache; a single table with the loop unrolled is as fast on the sizes seen here.

CKPT_CLONES void census8(const std::byte* p, std::size_t n, uint32_t* census)
{
    for (std::size_t i = 0; i < n; ++i)
        ++census[static_cast<uint8_t>(p[i])];
}

CKPT_CLONES void census16(const std::byte* p, std::size_t n, uint32_t* census)
{
    for (std::size_t i = 0; i < n; ++i)
        ++census[loadAt<uint16_t>(p, i)];
}

// ---- moment kinds: convert a block to float64, reduce it, merge the block with Chan's formula.

CKPT_INLINE void reduceBlock(const double* v, std::size_t m, Moments& out)
{
    double shift = 0;
    for (std::size_t i = 0; i < m; ++i) {
        if (finiteBits(v[i])) {
            shift = v[i];
            break;
        }
    }
    double s1 = 0, s2 = 0, sq = 0, mn = kBig, mx = -kBig;
    uint64_t fin = 0, zeros = 0;
    for (std::size_t i = 0; i < m; ++i) {
        const double x = v[i];
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
            const uint64_t bits = std::bit_cast<uint64_t>(v[i]);
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
    out.sumsq += sq;
    if (fin == 0)
        return;
    out.min = std::min(out.min, mn);
    out.max = std::max(out.max, mx);
    Moments block;
    block.n = fin;
    block.mean = shift + s1 / static_cast<double>(fin);
    block.m2 = std::max(0.0, s2 - s1 * s1 / static_cast<double>(fin));
    const uint64_t n = out.n + block.n;
    const double delta = block.mean - out.mean;
    out.mean += delta * static_cast<double>(block.n) / static_cast<double>(n);
    out.m2 += block.m2 + delta * delta * static_cast<double>(out.n) * static_cast<double>(block.n) / static_cast<double>(n);
    out.n = n;
}

// Scalar (one increment per element), so it also tracks the smallest non-zero |x|: a masked
// minimum in the vector loop above would stop GCC from vectorizing it.
CKPT_INLINE void censusBlock(const double* v, std::size_t m, uint32_t* census, Moments& out)
{
    constexpr uint64_t kNone = 0x7ff0000000000000ull; // |x| bits of finite values are below it
    uint64_t mnz = kNone;
    for (std::size_t i = 0; i < m; ++i) {
        const uint64_t magnitude = std::bit_cast<uint64_t>(v[i]) & 0x7fffffffffffffffull;
        mnz = magnitude != 0 && magnitude < mnz ? magnitude : mnz;
        uint32_t f = std::bit_cast<uint32_t>(static_cast<float>(v[i]));
        if ((f & 0x7f800000u) == 0x7f800000u && finiteBits(v[i])) // beyond float range: the outermost bucket
            f = (f & 0x80000000u) | 0x7f7fffffu;
        ++census[f >> 16];
    }
    if (mnz != kNone)
        out.minAbsNonZero = std::min(out.minAbsNonZero, std::bit_cast<double>(mnz));
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

// float32 keys come straight from the input bits: no float64 round trip, no range check.
CKPT_INLINE void censusF32(const std::byte* p, std::size_t i, std::size_t m, uint32_t* census, Moments& out)
{
    uint32_t mnz = 0x7f800000u;
    for (std::size_t j = 0; j < m; ++j) {
        const uint32_t bits = loadAt<uint32_t>(p, i + j);
        const uint32_t magnitude = bits & 0x7fffffffu;
        mnz = magnitude != 0 && magnitude < mnz ? magnitude : mnz;
        ++census[bits >> 16];
    }
    if (mnz != 0x7f800000u)
        out.minAbsNonZero = std::min(out.minAbsNonZero, static_cast<double>(std::bit_cast<float>(mnz)));
}

template<Kind K>
CKPT_INLINE void scanMoments(const std::byte* p, std::size_t n, Moments& out, uint32_t* census)
{
    alignas(64) double v[kBlock];
    for (std::size_t i = 0; i < n; i += kBlock) {
        const std::size_t m = std::min(kBlock, n - i);
        convertBlock<K>(p, i, m, v);
        reduceBlock(v, m, out);
        if constexpr (K == Kind::F32)
            censusF32(p, i, m, census, out);
        else
            censusBlock(v, m, census, out);
    }
}

CKPT_CLONES void scanF32(const std::byte* p, std::size_t n, Moments& o, uint32_t* c) { scanMoments<Kind::F32>(p, n, o, c); }
CKPT_CLONES void scanF64(const std::byte* p, std::size_t n, Moments& o, uint32_t* c) { scanMoments<Kind::F64>(p, n, o, c); }
CKPT_CLONES void scanI32(const std::byte* p, std::size_t n, Moments& o, uint32_t* c) { scanMoments<Kind::I32>(p, n, o, c); }
CKPT_CLONES void scanU32(const std::byte* p, std::size_t n, Moments& o, uint32_t* c) { scanMoments<Kind::U32>(p, n, o, c); }
CKPT_CLONES void scanI64(const std::byte* p, std::size_t n, Moments& o, uint32_t* c) { scanMoments<Kind::I64>(p, n, o, c); }
CKPT_CLONES void scanU64(const std::byte* p, std::size_t n, Moments& o, uint32_t* c) { scanMoments<Kind::U64>(p, n, o, c); }
CKPT_CLONES void scanC32(const std::byte* p, std::size_t n, Moments& o, uint32_t* c) { scanMoments<Kind::C32>(p, n, o, c); }
CKPT_CLONES void scanC64(const std::byte* p, std::size_t n, Moments& o, uint32_t* c) { scanMoments<Kind::C64>(p, n, o, c); }
CKPT_CLONES void scanC128(const std::byte* p, std::size_t n, Moments& o, uint32_t* c) { scanMoments<Kind::C128>(p, n, o, c); }

} // namespace

void scan(Kind kind, const std::byte* p, std::size_t n, Moments& m, uint32_t* census)
{
    switch (kind) {
    case Kind::Bool: case Kind::U8: case Kind::I8: case Kind::F8E5M2: case Kind::F8E4M3FN:
    case Kind::F8E5M2FNUZ: case Kind::F8E4M3FNUZ: case Kind::F8E8M0:
        return census8(p, n, census);
    case Kind::I16: case Kind::U16: case Kind::F16: case Kind::BF16:
        return census16(p, n, census);
    case Kind::F32: return scanF32(p, n, m, census);
    case Kind::F64: return scanF64(p, n, m, census);
    case Kind::I32: return scanI32(p, n, m, census);
    case Kind::U32: return scanU32(p, n, m, census);
    case Kind::I64: return scanI64(p, n, m, census);
    case Kind::U64: return scanU64(p, n, m, census);
    case Kind::C32: return scanC32(p, n, m, census);
    case Kind::C64: return scanC64(p, n, m, census);
    case Kind::C128: return scanC128(p, n, m, census);
    case Kind::Unsupported: return;
    }
}

} // namespace ckpt::kernels
