// SPDX-License-Identifier: MIT
#include "value_sketch.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <new>

namespace ckpt::kernels {
namespace {

// The magnitudes a cell holds, [first, last] (see the key functions in sketch_kernels.cpp).
std::pair<double, double> cellMagnitudes(Kind kind, uint32_t magnitude)
{
    if (kind == Kind::F32) {
        constexpr uint32_t dropped = 23 - kSketchMantissaBits;
        const uint32_t first = magnitude << dropped;
        return {std::bit_cast<float>(std::max<uint32_t>(first, 1)), std::bit_cast<float>(first | ((1u << dropped) - 1))};
    }
    const uint32_t e = magnitude >> kSketchMantissaBits;
    if (e == 0)
        return {std::numeric_limits<double>::denorm_min(), std::nextafter(0x1p-126, 0.0)};
    constexpr uint32_t dropped = 52 - kSketchMantissaBits;
    const uint64_t first = (uint64_t(e + 896) << 52) | (uint64_t(magnitude & kSketchMantissaMask) << dropped);
    const double last = magnitude == kSketchTopMagnitude ? std::numeric_limits<double>::max()
                                                         : std::bit_cast<double>(first | ((uint64_t(1) << dropped) - 1));
    return {std::bit_cast<double>(first), last};
}

// Adds `count` elements spread over [v0, v1] to bins k0..k1 (k0 < k1) in proportion to how
// much of the range each bin covers; `edge(k)` is where bin k starts. The parts are rounded
// so that they add up to `count` exactly.
template<typename Edge>
void split(uint64_t count, double v0, double v1, std::size_t k0, std::size_t k1, Edge edge, uint64_t* counts)
{
    const double width = v1 - v0;
    uint64_t given = 0;
    double covered = 0;
    for (std::size_t k = k0; k <= k1; ++k) {
        uint64_t upTo = count;
        if (k < k1) {
            covered = std::clamp(edge(k + 1) - v0, covered, width);
            upTo = width > 0 ? std::min(count, static_cast<uint64_t>(std::llround(count * (covered / width)))) : 0;
        }
        counts[k] += upTo - given;
        given = upTo;
    }
}

} // namespace

SketchTable::SketchTable() : counts(static_cast<uint32_t*>(std::calloc(kSketchCells + 1, sizeof(uint32_t))))
{
    if (!counts)
        throw std::bad_alloc();
}

bool sketchCovers(Kind kind, double minAbs, double absMax)
{
    return kind == Kind::F32 || (minAbs >= 0x1p-126 && absMax <= std::numeric_limits<float>::max());
}

void ValueSketch::Side::add(const uint32_t* table, uint32_t from, uint32_t to)
{
    if (counts.empty()) {
        lo = from;
        counts.assign(to - from + 1, 0);
    } else if (from < lo || to >= lo + counts.size()) {
        const uint32_t newLo = std::min(lo, from);
        const uint32_t newHi = std::max<uint32_t>(lo + static_cast<uint32_t>(counts.size()) - 1, to);
        std::vector<uint64_t> wider(newHi - newLo + 1, 0);
        std::copy(counts.begin(), counts.end(), wider.begin() + (lo - newLo));
        counts = std::move(wider);
        lo = newLo;
    }
    for (uint32_t k = from; k <= to; ++k)
        counts[k - lo] += table[k];
}

void ValueSketch::absorb(SketchTable& t)
{
    uint32_t* table = t.counts.get();
    const auto take = [&](Side& side, uint32_t from, uint32_t to) {
        if (from > to)
            return;
        side.add(table, from, to);
        std::fill(table + from, table + to + 1, 0u);
    };
    take(neg, t.lo, std::min(t.negHi, kSketchPositive - 1));
    take(pos, std::max(t.posLo, kSketchPositive), t.hi);
    table[kSketchCells] = 0;
    t.lo = t.posLo = kSketchCells;
    t.negHi = t.hi = 0;
}

void ValueSketch::merge(const ValueSketch& other)
{
    for (const auto& [mine, theirs] : {std::pair{&neg, &other.neg}, std::pair{&pos, &other.pos}}) {
        if (theirs->counts.empty())
            continue;
        const uint32_t from = theirs->lo, to = theirs->lo + static_cast<uint32_t>(theirs->counts.size()) - 1;
        if (mine->counts.empty()) {
            *mine = *theirs;
            continue;
        }
        const uint32_t newLo = std::min(mine->lo, from);
        const uint32_t newHi = std::max<uint32_t>(mine->lo + static_cast<uint32_t>(mine->counts.size()) - 1, to);
        std::vector<uint64_t> wider(newHi - newLo + 1, 0);
        for (std::size_t i = 0; i < mine->counts.size(); ++i)
            wider[mine->lo - newLo + i] += mine->counts[i];
        for (std::size_t i = 0; i < theirs->counts.size(); ++i)
            wider[from - newLo + i] += theirs->counts[i];
        mine->lo = newLo;
        mine->counts = std::move(wider);
    }
}

uint64_t ValueSketch::total() const
{
    uint64_t n = 0;
    for (const Side* side : {&neg, &pos}) {
        for (uint64_t c : side->counts)
            n += c;
    }
    return n;
}

ValueSketch::Binned ValueSketch::bin(Kind kind, const LinearBins& linear, const LogBins& log, double min, double max,
                                     double minAbs, double absMax, uint64_t zeros, uint64_t* linearCounts,
                                     uint64_t* logCounts) const
{
    Binned out;
    if (zeros)
        linearCounts[linear.binOf(0.0)] += zeros;
    const double linearStep = (linear.hi - linear.lo) / 64;
    const auto linearEdge = [&](std::size_t k) { return linear.lo + linearStep * static_cast<double>(k); };
    const auto logEdge = [&](std::size_t k) { return log.edges[k - 1]; };
    for (const Side* side : {&neg, &pos}) {
        for (std::size_t i = 0; i < side->counts.size(); ++i) {
            const uint64_t c = side->counts[i];
            if (c == 0)
                continue;
            const uint32_t key = side->lo + static_cast<uint32_t>(i);
            const bool negative = key < kSketchPositive;
            const uint32_t magnitude = negative ? kSketchPositive - 1 - key : key - kSketchPositive;
            const auto [first, last] = cellMagnitudes(kind, magnitude);
            // Linear bins: the cell's values, clipped to where the elements are.
            const double v0 = std::max(min, negative ? -last : first), v1 = std::min(max, negative ? -first : last);
            const std::size_t a = linear.binOf(v0), b = linear.binOf(std::max(v0, v1));
            if (a == b) {
                linearCounts[a] += c;
            } else {
                out.linearUncertain += c;
                split(c, v0, v1, a, b, linearEdge, linearCounts);
            }
            // Log bins: the cell's magnitudes, clipped likewise.
            const double m0 = std::max(minAbs, first), m1 = std::min(absMax, last);
            const std::size_t la = log.binOf(m0), lb = log.binOf(std::max(m0, m1));
            if (la == lb) {
                logCounts[la] += c;
            } else {
                out.logUncertain += c;
                split(c, m0, m1, la, lb, logEdge, logCounts);
            }
        }
    }
    return out;
}

} // namespace ckpt::kernels
