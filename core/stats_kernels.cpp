// SPDX-License-Identifier: MIT
// Statistics scan loops. Built with -O3 -fno-trapping-math -fassociative-math (see
// core/CMakeLists.txt) so GCC vectorizes the float64 reductions; reassociation only changes
// rounding in the last bits and finite-math is NOT assumed, so NaN/Inf tests stay exact.
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
constexpr double kInf = std::numeric_limits<double>::infinity();

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
        if (std::isfinite(v[i])) {
            shift = v[i];
            break;
        }
    }
    double s1 = 0, s2 = 0, sq = 0, mn = kInf, mx = -kInf, mnz = kInf;
    uint64_t fin = 0, zeros = 0;
    for (std::size_t i = 0; i < m; ++i) {
        const double x = v[i];
        const uint64_t bits = std::bit_cast<uint64_t>(x);
        const bool f = (bits & 0x7ff0000000000000ull) != 0x7ff0000000000000ull;
        const double d = f ? x - shift : 0.0;
        const double xf = f ? x : 0.0;
        s1 += d;
        s2 += d * d;
        sq += xf * xf;
        const double lo = f ? x : kInf, hi = f ? x : -kInf;
        mn = lo < mn ? lo : mn;
        mx = hi > mx ? hi : mx;
        const double a = f && x != 0 ? std::abs(x) : kInf;
        mnz = a < mnz ? a : mnz;
        fin += f;
        zeros += (bits << 1) == 0;
    }
    if (fin < m) {
        for (std::size_t i = 0; i < m; ++i) {
            if (std::isnan(v[i]))
                ++out.nan;
            else if (v[i] == kInf)
                ++out.posinf;
            else if (v[i] == -kInf)
                ++out.neginf;
        }
    }
    out.zeros += zeros;
    out.sumsq += sq;
    out.min = std::min(out.min, mn);
    out.max = std::max(out.max, mx);
    out.minAbsNonZero = std::min(out.minAbsNonZero, mnz);
    if (fin == 0)
        return;
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

CKPT_INLINE void censusBlock(const double* v, std::size_t m, uint32_t* census)
{
    for (std::size_t i = 0; i < m; ++i) {
        float f = static_cast<float>(v[i]);
        if (std::isinf(f) && std::isfinite(v[i])) // beyond float range: the outermost bucket
            f = std::copysign(std::numeric_limits<float>::max(), f);
        ++census[std::bit_cast<uint32_t>(f) >> 16];
    }
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
            v[j] = std::hypot(loadAt<double>(p, 2 * k), loadAt<double>(p, 2 * k + 1));
        }
    }
}

template<Kind K>
CKPT_INLINE void scanMoments(const std::byte* p, std::size_t n, Moments& out, uint32_t* census)
{
    alignas(64) double v[kBlock];
    for (std::size_t i = 0; i < n; i += kBlock) {
        const std::size_t m = std::min(kBlock, n - i);
        convertBlock<K>(p, i, m, v);
        reduceBlock(v, m, out);
        censusBlock(v, m, census);
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

Kind kindOf(DType dtype)
{
    switch (dtype) {
    case DType::Bool: return Kind::Bool;
    case DType::UInt8: return Kind::U8;
    case DType::Int8: return Kind::I8;
    case DType::Float8_e5m2: return Kind::F8E5M2;
    case DType::Float8_e4m3fn: return Kind::F8E4M3FN;
    case DType::Float8_e5m2fnuz: return Kind::F8E5M2FNUZ;
    case DType::Float8_e4m3fnuz: return Kind::F8E4M3FNUZ;
    case DType::Float8_e8m0fnu: return Kind::F8E8M0;
    case DType::Int16: return Kind::I16;
    case DType::UInt16: return Kind::U16;
    case DType::Float16: return Kind::F16;
    case DType::BFloat16: return Kind::BF16;
    case DType::Float32: return Kind::F32;
    case DType::Float64: return Kind::F64;
    case DType::Int32: return Kind::I32;
    case DType::UInt32: return Kind::U32;
    case DType::Int64: return Kind::I64;
    case DType::UInt64: return Kind::U64;
    case DType::Complex32: return Kind::C32;
    case DType::Complex64: return Kind::C64;
    case DType::Complex128: return Kind::C128;
    default: return Kind::Unsupported;
    }
}

std::size_t kindSize(Kind k)
{
    if (k <= Kind::F8E8M0)
        return 1;
    switch (k) {
    case Kind::I16: case Kind::U16: case Kind::F16: case Kind::BF16: return 2;
    case Kind::F32: case Kind::I32: case Kind::U32: case Kind::C32: return 4;
    case Kind::F64: case Kind::I64: case Kind::U64: case Kind::C64: return 8;
    case Kind::C128: return 16;
    default: return 0;
    }
}

void Moments::merge(const Moments& o)
{
    nan += o.nan;
    posinf += o.posinf;
    neginf += o.neginf;
    zeros += o.zeros;
    sumsq += o.sumsq;
    min = std::min(min, o.min);
    max = std::max(max, o.max);
    minAbsNonZero = std::min(minAbsNonZero, o.minAbsNonZero);
    if (o.n == 0)
        return;
    if (n == 0) {
        n = o.n;
        mean = o.mean;
        m2 = o.m2;
        return;
    }
    const uint64_t total = n + o.n;
    const double delta = o.mean - mean;
    mean += delta * static_cast<double>(o.n) / static_cast<double>(total);
    m2 += o.m2 + delta * delta * static_cast<double>(n) * static_cast<double>(o.n) / static_cast<double>(total);
    n = total;
}

void Moments::addRepeated(double v, uint64_t count)
{
    if (count == 0)
        return;
    Moments one;
    one.n = count;
    one.mean = v;
    one.sumsq = v * v * static_cast<double>(count);
    one.min = one.max = v;
    one.minAbsNonZero = v != 0 ? std::abs(v) : std::numeric_limits<double>::infinity();
    one.zeros = v == 0 ? count : 0;
    merge(one);
}

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

double censusValue(Kind kind, uint32_t key)
{
    switch (kind) {
    case Kind::Bool: return key != 0 ? 1.0 : 0.0;
    case Kind::U8: return static_cast<double>(key);
    case Kind::I8: return static_cast<double>(static_cast<int8_t>(key));
    case Kind::F8E5M2: case Kind::F8E4M3FN: case Kind::F8E5M2FNUZ: case Kind::F8E4M3FNUZ: case Kind::F8E8M0:
        return f8ToFloat(kind, static_cast<uint8_t>(key));
    case Kind::I16: return static_cast<double>(static_cast<int16_t>(key));
    case Kind::U16: return static_cast<double>(key);
    case Kind::F16: return halfToFloat(static_cast<uint16_t>(key));
    case Kind::BF16: return std::bit_cast<float>(key << 16);
    case Kind::Unsupported: return 0;
    default: {
        const uint32_t bits = key << 16;
        const float truncated = std::bit_cast<float>(bits);
        if ((bits & 0x7f800000u) == 0x7f800000u)
            return truncated;
        // Integers below 256 are exact in a bfloat16: their bucket holds that one value.
        const bool integer = kind == Kind::I32 || kind == Kind::U32 || kind == Kind::I64 || kind == Kind::U64;
        if (integer && std::abs(truncated) < 256)
            return truncated;
        return std::bit_cast<float>(bits | 0x8000u); // the bucket's midpoint
    }
    }
}

} // namespace ckpt::kernels
