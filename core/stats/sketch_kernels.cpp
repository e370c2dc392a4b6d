// SPDX-License-Identifier: MIT
// The sketch's hot loop (core/stats/value_sketch.h): a key per element from its bits, in blocks
// that vectorize, then one increment per element. Built like the binning kernels (-O3, no
// value-changing float flags: a complex magnitude must come out as in the binning loops).
#include "value_sketch.h"

#include "element_values.h"

#include <algorithm>
#include <bit>

#define CKPT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define CKPT_INLINE [[gnu::always_inline]] inline

namespace ckpt::kernels {
namespace {

constexpr std::size_t kBlock = 2048;

// Everything below is mask arithmetic (all-ones or zero words) rather than conditions: GCC
// vectorizes the key loops, min/max reductions included, only in that form.

// The key of a counted element from its sign mask and magnitude cell.
CKPT_INLINE uint32_t keyOf(uint32_t negative, uint32_t magnitude)
{
    return (negative & (kSketchPositive - 1 - magnitude)) | (~negative & (kSketchPositive + magnitude));
}

// Tracks the key ranges touched (SketchTable's) along with the keys, as four plain min/max
// reductions, so that they vectorize with the key loop.
struct Ranges {
    uint32_t lo, negHi, posLo, hi;
};

// Keys of m elements; `decode(j, magnitude, counted, negative)` gives element j's magnitude
// cell and its masks (counted: finite and non-zero).
template<typename Decode>
CKPT_INLINE void keyLoop(std::size_t m, uint32_t* key, Ranges& r, Decode decode)
{
    uint32_t lo = r.lo, negHi = r.negHi, posLo = r.posLo, hi = r.hi;
    for (std::size_t j = 0; j < m; ++j) {
        uint32_t magnitude, counted, negative;
        decode(j, magnitude, counted, negative);
        const uint32_t k0 = keyOf(negative, magnitude);
        const uint32_t k = (counted & k0) | (~counted & kSketchCells);
        key[j] = k;
        lo = std::min(lo, k); // not counted: kSketchCells, above every key
        hi = std::max(hi, counted & k0);
        negHi = std::max(negHi, counted & negative & k0);
        posLo = std::min(posLo, k | (negative & kSketchCells));
    }
    r = {lo, negHi, posLo, hi};
}

// float32: the magnitude cell is the top bits of |x| (exponent and kSketchMantissaBits).
CKPT_INLINE void keysF32(const std::byte* p, std::size_t i, std::size_t m, uint32_t* key, Ranges& r)
{
    keyLoop(m, key, r, [&](std::size_t j, uint32_t& magnitude, uint32_t& counted, uint32_t& negative) {
        const uint32_t bits = loadAt<uint32_t>(p, i + j);
        const uint32_t a = bits & 0x7fffffffu;
        magnitude = a >> (23 - kSketchMantissaBits);
        counted = -static_cast<uint32_t>((a != 0) & ((a & 0x7f800000u) != 0x7f800000u));
        negative = -(bits >> 31);
    });
}

// The other kinds, from the float64 value: its exponent re-biased to float32's and clamped
// (everything below 2^-126 in cell 0, everything from the top cell's start in the top cell).
template<Kind K>
CKPT_INLINE void keysF64(const std::byte* p, std::size_t i, std::size_t m, uint32_t* key, Ranges& r)
{
    keyLoop(m, key, r, [&](std::size_t j, uint32_t& magnitude, uint32_t& counted, uint32_t& negative) {
        const uint64_t bits = std::bit_cast<uint64_t>(valueAt<K>(p, i + j));
        const uint64_t a = bits & 0x7fffffffffffffffull;
        const int64_t e = static_cast<int64_t>(a >> 52) - 896;
        const uint32_t inRange = static_cast<uint32_t>((e << kSketchMantissaBits) | static_cast<int64_t>((a >> (52 - kSketchMantissaBits)) & kSketchMantissaMask));
        magnitude = e < 1 ? 0u : e > 254 ? kSketchTopMagnitude : inRange;
        counted = -static_cast<uint32_t>((a != 0) & ((a >> 52) != 0x7ff));
        negative = -static_cast<uint32_t>(bits >> 63);
    });
}

template<Kind K>
CKPT_INLINE void sketchT(const std::byte* p, std::size_t n, SketchTable& t)
{
    alignas(64) uint32_t key[kBlock];
    uint32_t* counts = t.counts.get();
    Ranges r{t.lo, t.negHi, t.posLo, t.hi};
    for (std::size_t i = 0; i < n; i += kBlock) {
        const std::size_t m = std::min(kBlock, n - i);
        if constexpr (K == Kind::F32)
            keysF32(p, i, m, key, r);
        else
            keysF64<K>(p, i, m, key, r);
#pragma GCC unroll 4
        for (std::size_t j = 0; j < m; ++j)
            ++counts[key[j]];
    }
    t.lo = r.lo;
    t.negHi = r.negHi;
    t.posLo = r.posLo;
    t.hi = r.hi;
}

#define CKPT_SKETCH(K) \
    CKPT_CLONES void sketch##K(const std::byte* p, std::size_t n, SketchTable& t) { sketchT<Kind::K>(p, n, t); }
CKPT_SKETCH(F32)
CKPT_SKETCH(F64)
CKPT_SKETCH(I32)
CKPT_SKETCH(U32)
CKPT_SKETCH(I64)
CKPT_SKETCH(U64)
CKPT_SKETCH(C32)
CKPT_SKETCH(C64)
CKPT_SKETCH(C128)
#undef CKPT_SKETCH

} // namespace

void sketchElements(Kind kind, const std::byte* p, std::size_t n, SketchTable& t)
{
    switch (kind) {
    case Kind::F32: return sketchF32(p, n, t);
    case Kind::F64: return sketchF64(p, n, t);
    case Kind::I32: return sketchI32(p, n, t);
    case Kind::U32: return sketchU32(p, n, t);
    case Kind::I64: return sketchI64(p, n, t);
    case Kind::U64: return sketchU64(p, n, t);
    case Kind::C32: return sketchC32(p, n, t);
    case Kind::C64: return sketchC64(p, n, t);
    case Kind::C128: return sketchC128(p, n, t);
    default: return;
    }
}

} // namespace ckpt::kernels
