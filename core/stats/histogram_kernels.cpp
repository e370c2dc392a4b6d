// SPDX-License-Identifier: MIT
// Exact histogram binning (core/stats/linear_bins.h). Built with -O3 but WITHOUT the
// reassociation and contraction flags of the other kernel files: every bin index must be the
// correctly rounded (v - lo) * 64 / (hi - lo) that torch.histc computes, element by element.
// The index computations vectorize on their own (no reduction); one increment per element
// then counts both histograms.
#include "linear_bins.h"

#include "element_values.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#define CKPT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define CKPT_INLINE [[gnu::always_inline]] inline

namespace ckpt::kernels {
namespace {

constexpr std::size_t kBlock = 2048;
constexpr uint8_t kSkip = 64; // index of non-finite elements: counted nowhere

CKPT_INLINE uint8_t clampBin(int k) { return static_cast<uint8_t>(k < 0 ? 0 : k > 63 ? 63 : k); }

CKPT_INLINE void indexF32(const std::byte* p, std::size_t i, std::size_t m, float lo, float width, uint8_t* idx)
{
    for (std::size_t j = 0; j < m; ++j) {
        const uint32_t bits = loadAt<uint32_t>(p, i + j);
        const bool finite = (bits & 0x7f800000u) != 0x7f800000u;
        const float x = finite ? std::bit_cast<float>(bits) : lo;
        const int k = static_cast<int>((x - lo) * 64.0f / width);
        idx[j] = finite ? clampBin(k) : kSkip;
    }
}

template<Kind K>
CKPT_INLINE void indexF64(const std::byte* p, std::size_t i, std::size_t m, double lo, double width, uint8_t* idx)
{
    for (std::size_t j = 0; j < m; ++j) {
        const double v = valueAt<K>(p, i + j);
        const bool finite = (std::bit_cast<uint64_t>(v) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull;
        const double x = finite ? v : lo;
        const int k = static_cast<int>((x - lo) * 64.0 / width);
        idx[j] = finite ? clampBin(k) : kSkip;
    }
}

// Log-histogram cells of a block (see LogBins): the table cell of each element's key, or
// the sentinel cell that says "no bin" (zero, non-finite) or "look it up in the edges" (a
// float32 subnormal, or a |z| that rounds differently here than in the scan, out of range).
// Pure integer arithmetic on the bits, so it vectorizes.
CKPT_INLINE void cellsF32(const std::byte* p, std::size_t i, std::size_t m, const LogBins& lb, uint16_t* cell)
{
    // The float64 bits of a normal float32 with bits a are (a + (896 << 23)) << 29, so its key
    // minus keyMin is (a >> k) + (896 << (23 - k)) - keyMin with k = shift - 29 (0..23): in
    // 32-bit arithmetic modulo 2^32, which keeps every in-range difference below `cells` and
    // sends every other one above it.
    const uint32_t cells = static_cast<uint32_t>(lb.cells), k = static_cast<uint32_t>(lb.shift - 29);
    const uint32_t bias = static_cast<uint32_t>((uint64_t(896) << (23 - k)) - lb.keyMin);
    for (std::size_t j = 0; j < m; ++j) {
        const uint32_t a = loadAt<uint32_t>(p, i + j) & 0x7fffffffu;
        const uint32_t exp = a & 0x7f800000u;
        uint32_t c = (a >> k) + bias;
        c = c < cells ? c : cells + 1;
        c = exp == 0 ? (a == 0 ? cells : cells + 1) : c;
        c = exp == 0x7f800000u ? cells : c;
        cell[j] = static_cast<uint16_t>(c);
    }
}

template<Kind K>
CKPT_INLINE void cellsF64(const std::byte* p, std::size_t i, std::size_t m, const LogBins& lb, uint16_t* cell)
{
    const uint64_t cells = lb.cells, keyMin = lb.keyMin;
    const int shift = lb.shift;
    for (std::size_t j = 0; j < m; ++j) {
        const uint64_t a = std::bit_cast<uint64_t>(valueAt<K>(p, i + j)) & 0x7fffffffffffffffull;
        uint64_t c = (a >> shift) - keyMin;
        c = c < cells ? c : cells + 1;
        c = a == 0 || (a & 0x7ff0000000000000ull) == 0x7ff0000000000000ull ? cells : c;
        cell[j] = static_cast<uint16_t>(c);
    }
}

template<Kind K>
CKPT_INLINE double magnitudeAt(const std::byte* p, std::size_t i)
{
    if constexpr (K == Kind::F32)
        return std::abs(static_cast<double>(loadAt<float>(p, i)));
    else
        return std::abs(valueAt<K>(p, i));
}

template<Kind K>
CKPT_INLINE void binT(const std::byte* p, std::size_t n, const LinearBins& b, const LogBins& lb, uint64_t* linear, uint64_t* log)
{
    alignas(64) uint8_t idx[kBlock];
    alignas(64) uint16_t cell[kBlock];
    // One count per (linear bin, log bin) pair, 65 x 65 with the "no bin" index 64: a single
    // increment per element for both histograms. Two tables, element j counting into table
    // j % 2, so that runs of equal pairs (narrow distributions) do not wait on each other's
    // stores. 2 x 17 KiB: they stay in L1.
    constexpr std::size_t kSide = kSkip + 1;
    uint32_t pairs[2][kSide * kSide] = {};
    const uint8_t* table = lb.table.data();
    for (std::size_t i = 0; i < n; i += kBlock) {
        const std::size_t m = std::min(kBlock, n - i);
        if constexpr (K == Kind::F32) {
            indexF32(p, i, m, b.lo32, b.width32, idx);
            cellsF32(p, i, m, lb, cell);
        } else {
            indexF64<K>(p, i, m, b.lo, b.width, idx);
            cellsF64<K>(p, i, m, lb, cell);
        }
        for (std::size_t j = 0; j < m; ++j) {
            uint8_t e = table[cell[j]];
            if (e == LogBins::kLookUp) [[unlikely]]
                e = static_cast<uint8_t>(lb.binOf(magnitudeAt<K>(p, i + j)));
            ++pairs[j & 1][idx[j] * kSide + e];
        }
        if ((i / kBlock) % 1024 == 1023 || i + m == n) { // 32-bit counts: flush well before they could overflow
            for (std::size_t x = 0; x < kSide; ++x) {
                for (std::size_t y = 0; y < kSide; ++y) {
                    const uint64_t c = uint64_t(pairs[0][x * kSide + y]) + pairs[1][x * kSide + y];
                    if (x < kSkip)
                        linear[x] += c;
                    if (y < kSkip)
                        log[y] += c;
                }
            }
            std::memset(pairs, 0, sizeof pairs);
        }
    }
}

#define CKPT_BIN(K) \
    CKPT_CLONES void bin##K(const std::byte* p, std::size_t n, const LinearBins& b, const LogBins& lb, uint64_t* c, uint64_t* l) \
    { binT<Kind::K>(p, n, b, lb, c, l); }
CKPT_BIN(F32)
CKPT_BIN(F64)
CKPT_BIN(I32)
CKPT_BIN(U32)
CKPT_BIN(I64)
CKPT_BIN(U64)
CKPT_BIN(C32)
CKPT_BIN(C64)
CKPT_BIN(C128)
#undef CKPT_BIN

// The formula of the log histogram (the tests' reference applies it to torch.log10).
std::size_t logFormula(double magnitude, double lo, double hi)
{
    const double pos = (std::log10(magnitude) - lo) / (hi - lo) * 64;
    if (!(pos >= 0))
        return 0;
    return std::min<std::size_t>(63, static_cast<std::size_t>(pos));
}

} // namespace

LinearBins LinearBins::over(Kind kind, double min, double max)
{
    LinearBins b;
    // torch.histc widens an empty range by one on each side (in float64, before linspace).
    b.lo = min == max ? min - 1 : min;
    b.hi = min == max ? max + 1 : max;
    b.single = kind == Kind::F32 || censusExact(kind);
    b.lo32 = static_cast<float>(b.lo);
    b.width32 = static_cast<float>(b.hi) - b.lo32;
    b.width = b.hi - b.lo;
    if (!(b.width32 > 0)) // a range too narrow for float32 after widening: everything in bin 0
        b.width32 = std::numeric_limits<float>::infinity();
    if (!(b.width > 0))
        b.width = std::numeric_limits<double>::infinity();
    return b;
}

std::size_t LinearBins::binOf(double v) const
{
    if (single) {
        const float x = static_cast<float>(v);
        return clampBin(static_cast<int>((x - lo32) * 64.0f / width32));
    }
    return clampBin(static_cast<int>((v - lo) * 64.0 / width));
}

LogBins LogBins::over(double minAbs, double absMax, uint64_t elements, int minShift)
{
    LogBins lb;
    lb.table.clear();
    lb.lo = std::log10(minAbs);
    lb.hi = std::log10(absMax);
    if (lb.lo == lb.hi) {
        lb.lo -= 1;
        lb.hi += 1;
    }
    const uint64_t from = std::bit_cast<uint64_t>(minAbs), to = std::bit_cast<uint64_t>(absMax);
    auto binAt = [&](uint64_t bits) { return logFormula(std::bit_cast<double>(bits), lb.lo, lb.hi); };
    for (std::size_t k = 1; k <= 63; ++k) {
        double& edge = lb.edges[k - 1];
        if (binAt(to) < k) {
            edge = std::numeric_limits<double>::infinity();
            continue;
        }
        if (binAt(from) >= k) {
            edge = minAbs;
            continue;
        }
        // Smallest bits in (L, H] with bin >= k; the bracket starts around 10^edge, where the
        // formula changes bin up to rounding, and falls back to the whole range.
        uint64_t L = from, H = to;
        const double guess = std::pow(10.0, lb.lo + (lb.hi - lb.lo) * static_cast<double>(k) / 64);
        const uint64_t gl = std::bit_cast<uint64_t>(guess * (1 - 1e-9)), gh = std::bit_cast<uint64_t>(guess * (1 + 1e-9));
        if (gl > L && gl < H && binAt(gl) < k)
            L = gl;
        if (gh > L && gh < H && binAt(gh) >= k)
            H = gh;
        while (H - L > 1) {
            const uint64_t mid = L + (H - L) / 2;
            (binAt(mid) >= k ? H : L) = mid;
        }
        edge = std::bit_cast<double>(H);
    }
    // The finest key whose table has at most 32768 cells (L1-sized) and 1/8 of the elements,
    // but no finer than `minShift`.
    const uint64_t maxCells = std::min<uint64_t>(32768, elements / 8);
    int shift = 52;
    while (shift > minShift && (to >> (shift - 1)) - (from >> (shift - 1)) + 1 <= maxCells)
        --shift;
    const uint64_t keyMin = from >> shift, keyMax = to >> shift;
    if (keyMax - keyMin + 1 <= maxCells) {
        lb.shift = shift;
        lb.keyMin = keyMin;
        lb.cells = keyMax - keyMin + 1;
        lb.table.resize(lb.cells);
        for (uint64_t key = keyMin; key <= keyMax; ++key) {
            const double first = std::bit_cast<double>(key << shift);
            const double last = std::bit_cast<double>(((key + 1) << shift) - 1);
            const std::size_t a = lb.binOf(first), b = lb.binOf(last);
            lb.table[key - keyMin] = a == b ? static_cast<uint8_t>(a) : kLookUp;
        }
    }
    lb.table.push_back(kSkip);   // cell `cells`: not binned
    lb.table.push_back(kLookUp); // cell `cells + 1`: look the element up in the edges
    return lb;
}

std::size_t LogBins::binOf(double magnitude) const
{
    return static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), magnitude) - edges.begin());
}

void binElements(Kind kind, const std::byte* p, std::size_t n, const LinearBins& b, const LogBins& lb, uint64_t* linear,
                 uint64_t* log)
{
    switch (kind) {
    case Kind::F32: return binF32(p, n, b, lb, linear, log);
    case Kind::F64: return binF64(p, n, b, lb, linear, log);
    case Kind::I32: return binI32(p, n, b, lb, linear, log);
    case Kind::U32: return binU32(p, n, b, lb, linear, log);
    case Kind::I64: return binI64(p, n, b, lb, linear, log);
    case Kind::U64: return binU64(p, n, b, lb, linear, log);
    case Kind::C32: return binC32(p, n, b, lb, linear, log);
    case Kind::C64: return binC64(p, n, b, lb, linear, log);
    case Kind::C128: return binC128(p, n, b, lb, linear, log);
    default: return;
    }
}

} // namespace ckpt::kernels
