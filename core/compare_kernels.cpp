// SPDX-License-Identifier: MIT
// Pair comparison loops: bit-for-bit difference counts and float64 norms of a, b and a-b in
// one pass over both inputs. Same build flags as stats_kernels.cpp.
#include "core/float_formats.h"
#include "core/stats_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#define CKPT_CLONES __attribute__((target_clones("avx2", "default")))
#define CKPT_INLINE [[gnu::always_inline]] inline

namespace ckpt::kernels {
namespace {

constexpr std::size_t kBlock = 1024;

template<typename T>
CKPT_INLINE T loadAt(const std::byte* p, std::size_t i)
{
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return v;
}

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

// Elements [i, i+m) as float64 reals (complex: two per element).
template<Kind K>
CKPT_INLINE void toReals(const std::byte* p, std::size_t i, std::size_t m, double* v, const float* table)
{
    for (std::size_t j = 0; j < m; ++j) {
        const std::size_t k = i + j;
        if constexpr (K == Kind::Bool)
            v[j] = loadAt<uint8_t>(p, k) != 0;
        else if constexpr (K == Kind::U8)
            v[j] = loadAt<uint8_t>(p, k);
        else if constexpr (K == Kind::I8)
            v[j] = loadAt<int8_t>(p, k);
        else if constexpr (K >= Kind::F8E5M2 && K <= Kind::F8E8M0)
            v[j] = table[loadAt<uint8_t>(p, k)];
        else if constexpr (K == Kind::I16)
            v[j] = loadAt<int16_t>(p, k);
        else if constexpr (K == Kind::U16)
            v[j] = loadAt<uint16_t>(p, k);
        else if constexpr (K == Kind::F16)
            v[j] = halfToFloat(loadAt<uint16_t>(p, k));
        else if constexpr (K == Kind::BF16)
            v[j] = bf16ToFloat(loadAt<uint16_t>(p, k));
        else if constexpr (K == Kind::F32)
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
            v[2 * j] = halfToFloat(loadAt<uint16_t>(p, 2 * k));
            v[2 * j + 1] = halfToFloat(loadAt<uint16_t>(p, 2 * k + 1));
        } else if constexpr (K == Kind::C64) {
            v[2 * j] = loadAt<float>(p, 2 * k);
            v[2 * j + 1] = loadAt<float>(p, 2 * k + 1);
        } else if constexpr (K == Kind::C128) {
            v[2 * j] = loadAt<double>(p, 2 * k);
            v[2 * j + 1] = loadAt<double>(p, 2 * k + 1);
        }
    }
}

CKPT_INLINE void reducePair(const double* va, const double* vb, std::size_t r, PairMoments& m)
{
    double mx = 0, ssd = 0, sa = 0, sb = 0, dot = 0;
    uint64_t nonFinite = 0;
    for (std::size_t j = 0; j < r; ++j) {
        const double x = va[j], y = vb[j];
        const bool f = std::abs(x) <= 1.7976931348623157e308 && std::abs(y) <= 1.7976931348623157e308;
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
    alignas(64) double va[kBlock * reals], vb[kBlock * reals];
    for (std::size_t i = 0; i < n; i += kBlock) {
        const std::size_t cnt = std::min(kBlock, n - i);
        const uint64_t nd = countDiffering<size>(a, b, i, cnt);
        if (nd != 0 && m.firstDiff < 0)
            m.firstDiff = static_cast<int64_t>(base) + firstDiffering<size>(a, b, i, cnt);
        m.nDiff += nd;
        toReals<K>(a, i, cnt, va, table);
        toReals<K>(b, i, cnt, vb, table);
        reducePair(va, vb, cnt * reals, m);
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

void PairMoments::merge(const PairMoments& o)
{
    if (o.firstDiff >= 0 && (firstDiff < 0 || o.firstDiff < firstDiff))
        firstDiff = o.firstDiff;
    n += o.n;
    nDiff += o.nDiff;
    nonFinite += o.nonFinite;
    maxAbs = std::max(maxAbs, o.maxAbs);
    sumSqDiff += o.sumSqDiff;
    sumSqA += o.sumSqA;
    sumSqB += o.sumSqB;
    dot += o.dot;
}

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
