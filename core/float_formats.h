// SPDX-License-Identifier: MIT
// Decoding the narrow floating-point formats (float16 and the float8 family) to float32,
// written as branch-free bit arithmetic where it sits in hot loops.
#pragma once

#include "core/stats_kernels.h"

#include <bit>
#include <cstdint>

namespace ckpt::kernels {

/// IEEE binary16 to float32, exact for every value (subnormals, Inf, NaN payloads).
[[gnu::always_inline]] inline float halfToFloat(uint16_t h)
{
    // Rebias by multiplication: exact for normals and subnormals; Inf/NaN keep their payload.
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t em = h & 0x7fffu;
    const uint32_t scaled = std::bit_cast<uint32_t>(std::bit_cast<float>(em << 13) * 0x1p112f);
    const uint32_t bits = em >= 0x7c00u ? (0x7f800000u | (em << 13)) : scaled;
    return std::bit_cast<float>(bits | sign);
}

[[gnu::always_inline]] inline float bf16ToFloat(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

/// One float8 value of kind F8E5M2, F8E4M3FN, F8E5M2FNUZ, F8E4M3FNUZ or F8E8M0 (0 for others).
float f8ToFloat(Kind kind, uint8_t byte);

/// A 256-entry decoding table for a float8 kind (built once, thread-safe).
const float* f8Table(Kind kind);

} // namespace ckpt::kernels
