// SPDX-License-Identifier: MIT
// Element i of a contiguous little-endian run as the float64 value the statistics see (complex:
// |z|). Shared by the binning kernels so that an element's value, and so its bin, is the same
// in every one of them. Internal to core; inline, for the hot loops.
#pragma once

#include "float_formats.h"
#include "stats_kernels.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ckpt::kernels {

template<typename T>
[[gnu::always_inline]] inline T loadAt(const std::byte* p, std::size_t i)
{
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return v;
}

/// For every kind but the census ones and F32 (whose loops work on the float bits).
template<Kind K>
[[gnu::always_inline]] inline double valueAt(const std::byte* p, std::size_t i)
{
    if constexpr (K == Kind::F64)
        return loadAt<double>(p, i);
    else if constexpr (K == Kind::I32)
        return loadAt<int32_t>(p, i);
    else if constexpr (K == Kind::U32)
        return loadAt<uint32_t>(p, i);
    else if constexpr (K == Kind::I64)
        return static_cast<double>(loadAt<int64_t>(p, i));
    else if constexpr (K == Kind::U64)
        return static_cast<double>(loadAt<uint64_t>(p, i));
    else if constexpr (K == Kind::C32) {
        const double re = halfToFloat(loadAt<uint16_t>(p, 2 * i)), im = halfToFloat(loadAt<uint16_t>(p, 2 * i + 1));
        return std::sqrt(re * re + im * im);
    } else if constexpr (K == Kind::C64) {
        const double re = loadAt<float>(p, 2 * i), im = loadAt<float>(p, 2 * i + 1);
        return std::sqrt(re * re + im * im);
    } else {
        static_assert(K == Kind::C128);
        const double re = loadAt<double>(p, 2 * i), im = loadAt<double>(p, 2 * i + 1);
        return std::sqrt(re * re + im * im);
    }
}

} // namespace ckpt::kernels
