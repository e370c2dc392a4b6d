// SPDX-License-Identifier: MIT
// Pair comparison loops: bit-for-bit difference counts and float64 norms of a, b and a-b in
// one pass over both inputs. Same build flags as stats_kernels.cpp (finite math assumed:
// non-finite pairs are found by their bits and masked out before any arithmetic).
#include "element_values.h"
#include "float_formats.h"
#include "stats_kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#define CKPT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define CKPT_INLINE [[gnu::always_inline]] inline

namespace ckpt::kernels {
namespace {

constexpr std::size_t kBlock = 1024;

// Element bits compared through an unsigned integer as wide as the element (complex128: two).
template<std::size_t Size>
CKPT_INLINE uint64_t countDiffering(const std::byte* a, const std::byte* b, std::size_t i, std::size_t m)
{
    uint64_t nd = 0;
    if constexpr (Size == 16) {
        for (std::size_t j = 0; j < 2 * m; j += 2)
            nd += (loadAt<uint64_t>(a, 2 * i + j) != loadAt<uint64_t>(b, 2 * i + j))
                | (loadAt<uint64_t>(a, 2 * i + j + 1) != loadAt<uint64_t>(b, 2 * i + j + 1));
    } else {
        using U = std::conditional_t<Size == 1, uint8_t, std::conditional_t<Size == 2, uint16_t, std::conditional_t<Size == 4, uint32_t, uint64_t>>>;
        for (std::size_t j = 0; j < m; ++j)
            nd += loadAt<U>(a, i + j) != loadAt<U>(b, i + j);
    }
    return nd;
}

template<std::size_t Size>
int64_t firstDiffering(const std::byte* a, const std::byte* b, std::size_t i, std::size_t m)
{
    for (std::size_t j = 0; j < m; ++j) {
        if (std::memcmp(a + (i + j) * Size, b + (i + j) * Size, Size) != 0)
            return static_cast<int64_t>(i + j);
    }
    return -1;
}

// Real number r of the input as a float64 (complex: the two halves of element r / 2 are reals
// 2k and 2k + 1, so they are loaded as a run of halves, floats or doubles).
template<Kind K>
CKPT_INLINE double realAt(const std::byte* p, std::size_t r, const float* table)
{
    if constexpr (K == Kind::Bool)
        return loadAt<uint8_t>(p, r) != 0;
    else if constexpr (K == Kind::U8)
        return loadAt<uint8_t>(p, r);
    else if constexpr (K == Kind::I8)
        return loadAt<int8_t>(p, r);
    else if constexpr (K >= Kind::F8E5M2 && K <= Kind::F8E8M0)
        return table[loadAt<uint8_t>(p, r)];
    else if constexpr (K == Kind::I16)
        return loadAt<int16_t>(p, r);
    else if constexpr (K == Kind::U16)
        return loadAt<uint16_t>(p, r);
    else if constexpr (K == Kind::F16 || K == Kind::C32)
        return halfToFloat(loadAt<uint16_t>(p, r));
    else if constexpr (K == Kind::BF16)
        return bf16ToFloat(loadAt<uint16_t>(p, r));
    else if constexpr (K == Kind::F32 || K == Kind::C64)
        return loadAt<float>(p, r);
    else if constexpr (K == Kind::F64 || K == Kind::C128)
        return loadAt<double>(p, r);
    else if constexpr (K == Kind::I32)
        return loadAt<int32_t>(p, r);
    else if constexpr (K == Kind::U32)
        return loadAt<uint32_t>(p, r);
    else if constexpr (K == Kind::I64)
        return static_cast<double>(loadAt<int64_t>(p, r));
    else
        return static_cast<double>(loadAt<uint64_t>(p, r));
}

// Reals [first, first + count) of both inputs, loaded and converted in the loop itself.
template<Kind K>
CKPT_INLINE void reducePair(const std::byte* a, const std::byte* b, std::size_t first, std::size_t count, const float* table,
                            PairMoments& m)
{
    double mx = 0, ssd = 0, sa = 0, sb = 0, dot = 0;
    uint64_t nonFinite = 0;
    for (std::size_t j = first; j < first + count; ++j) {
        const double x = realAt<K>(a, j, table), y = realAt<K>(b, j, table);
        constexpr uint64_t exp = 0x7ff0000000000000ull;
        const bool f = ((std::bit_cast<uint64_t>(x) & exp) != exp) & ((std::bit_cast<uint64_t>(y) & exp) != exp);
        const double dx = f ? x : 0.0, dy = f ? y : 0.0;
        const double d = std::abs(dx - dy);
        mx = d > mx ? d : mx;
        ssd += d * d;
        sa += dx * dx;
        sb += dy * dy;
        dot += dx * dy;
        nonFinite += !f;
    }
    m.maxAbs = std::max(m.maxAbs, mx);
    m.sumSqDiff += ssd;
    m.sumSqA += sa;
    m.sumSqB += sb;
    m.dot += dot;
    m.nonFinite += nonFinite;
}

template<Kind K>
CKPT_INLINE void reduceSame(const std::byte* a, std::size_t first, std::size_t count, const float* table, PairMoments& m)
{
    double sa = 0;
    uint64_t nonFinite = 0;
    for (std::size_t j = first; j < first + count; ++j) {
        const double x = realAt<K>(a, j, table);
        constexpr uint64_t exp = 0x7ff0000000000000ull;
        const bool f = (std::bit_cast<uint64_t>(x) & exp) != exp;
        const double dx = f ? x : 0.0;
        sa += dx * dx;
        nonFinite += !f;
    }
    m.sumSqA += sa;
    m.sumSqB += sa;
    m.dot += sa;
    m.nonFinite += nonFinite;
}

template<Kind K>
CKPT_INLINE void comparePairT(const std::byte* a, const std::byte* b, std::size_t n, uint64_t base, PairMoments& m)
{
    constexpr std::size_t reals = K >= Kind::C32 ? 2 : 1;
    constexpr std::size_t size = K == Kind::Bool || K <= Kind::F8E8M0 ? 1
                               : K <= Kind::BF16                      ? 2
                               : (K == Kind::F32 || K == Kind::I32 || K == Kind::U32 || K == Kind::C32) ? 4
                               : K == Kind::C128                      ? 16
                                                                      : 8;
    const float* table = nullptr;
    if constexpr (K >= Kind::F8E5M2 && K <= Kind::F8E8M0)
        table = f8Table(K);
    for (std::size_t i = 0; i < n; i += kBlock) {
        const std::size_t cnt = std::min(kBlock, n - i);
        // The hardware prefetchers stop at page boundaries: ask for the lines ahead in both inputs.
        for (std::size_t off = 0; off < cnt * size; off += 64) {
            if ((i + kBlock) * size + off < n * size) {
                __builtin_prefetch(a + (i + kBlock) * size + off);
                __builtin_prefetch(b + (i + kBlock) * size + off);
            }
        }
        const uint64_t nd = countDiffering<size>(a, b, i, cnt);
        if (nd != 0 && m.firstDiff < 0)
            m.firstDiff = static_cast<int64_t>(base) + firstDiffering<size>(a, b, i, cnt);
        m.nDiff += nd;
        if (nd == 0) // the same bits: a's norm is b's and the dot product, half the work
            reduceSame<K>(a, i * reals, cnt * reals, table, m);
        else
            reducePair<K>(a, b, i * reals, cnt * reals, table, m);
    }
    m.n += n;
}

#define CKPT_PAIR(K) \
    CKPT_CLONES void pair##K(const std::byte* a, const std::byte* b, std::size_t n, uint64_t base, PairMoments& m) \
    { comparePairT<Kind::K>(a, b, n, base, m); }
CKPT_PAIR(Bool)
CKPT_PAIR(U8)
CKPT_PAIR(I8)
CKPT_PAIR(F8E5M2)
CKPT_PAIR(F8E4M3FN)
CKPT_PAIR(F8E5M2FNUZ)
CKPT_PAIR(F8E4M3FNUZ)
CKPT_PAIR(F8E8M0)
CKPT_PAIR(I16)
CKPT_PAIR(U16)
CKPT_PAIR(F16)
CKPT_PAIR(BF16)
CKPT_PAIR(F32)
CKPT_PAIR(F64)
CKPT_PAIR(I32)
CKPT_PAIR(U32)
CKPT_PAIR(I64)
CKPT_PAIR(U64)
CKPT_PAIR(C32)
CKPT_PAIR(C64)
CKPT_PAIR(C128)
#undef CKPT_PAIR

} // namespace

void comparePair(Kind kind, const std::byte* a, const std::byte* b, std::size_t n, uint64_t base, PairMoments& m)
{
    switch (kind) {
#define CKPT_CASE(K) case Kind::K: return pair##K(a, b, n, base, m);
    CKPT_CASE(Bool) CKPT_CASE(U8) CKPT_CASE(I8) CKPT_CASE(F8E5M2) CKPT_CASE(F8E4M3FN) CKPT_CASE(F8E5M2FNUZ)
    CKPT_CASE(F8E4M3FNUZ) CKPT_CASE(F8E8M0) CKPT_CASE(I16) CKPT_CASE(U16) CKPT_CASE(F16) CKPT_CASE(BF16)
    CKPT_CASE(F32) CKPT_CASE(F64) CKPT_CASE(I32) CKPT_CASE(U32) CKPT_CASE(I64) CKPT_CASE(U64)
    CKPT_CASE(C32) CKPT_CASE(C64) CKPT_CASE(C128)
#undef CKPT_CASE
    case Kind::Unsupported:
        return;
    }
}

} // namespace ckpt::kernels
