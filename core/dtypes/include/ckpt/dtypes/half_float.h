// SPDX-License-Identifier: MIT
// The 16-bit floating-point formats (IEEE binary16 and bfloat16) decoded to float32 as
// branch-free bit arithmetic: the pickle interpreter reads numpy float16 scalars with them and
// the statistics kernels use them in their hot loops.
#pragma once

#include <bit>
#include <cstdint>

namespace ckpt {

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

} // namespace ckpt
