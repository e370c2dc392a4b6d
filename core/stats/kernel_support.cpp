// SPDX-License-Identifier: MIT
// The parts of the statistics kernels that are not hot loops (kinds, moment merging, census
// values), built with the project's normal floating-point semantics: the loop files assume
// finite math and must not hold code that compares with infinities.
#include "float_formats.h"
#include "stats_kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace ckpt::kernels {

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
    const double wa = static_cast<double>(n) / static_cast<double>(total), wb = static_cast<double>(o.n) / static_cast<double>(total);
    const double delta = o.mean - mean;
    if (!std::isfinite(delta)) {
        // Means of opposite sign near the float64 maximum (this file is built without finite
        // math): the weighted mean has no intermediate overflow, and a spread beyond the largest
        // double makes the variance +inf, as torch.var gives it.
        mean = mean * wa + o.mean * wb;
        m2 = std::numeric_limits<double>::infinity();
    } else {
        mean += delta * wb;
        m2 += o.m2 + delta * delta * static_cast<double>(n) * wb;
    }
    n = total;
}

void hugeBlockMoments(const double* v, std::size_t count, Moments& block)
{
    // Values whose squares (or differences) overflow a double: scaled by a power of two, which is
    // exact, so the mean is right and m2 / sumsq overflow only when the true values do.
    double big = 0;
    for (std::size_t i = 0; i < count; ++i)
        big = std::max(big, std::abs(v[i]));
    int e = 0;
    std::frexp(big, &e);
    double sum = 0;
    for (std::size_t i = 0; i < count; ++i)
        sum += std::ldexp(v[i], -e);
    const double meanScaled = sum / static_cast<double>(count);
    double m2Scaled = 0, sqScaled = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const double y = std::ldexp(v[i], -e);
        m2Scaled += (y - meanScaled) * (y - meanScaled);
        sqScaled += y * y;
    }
    block.n = count;
    block.mean = std::ldexp(meanScaled, e);
    block.m2 = std::ldexp(m2Scaled, 2 * e);
    block.sumsq = std::ldexp(sqScaled, 2 * e);
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
    default: return 0; // not a census kind
    }
}

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

} // namespace ckpt::kernels
