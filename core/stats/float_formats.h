// SPDX-License-Identifier: MIT
// Decoding the narrow floating-point formats to float32 for the statistics kernels: float16 and
// bfloat16 (core/dtypes/include/ckpt/dtypes/half_float.h) and the float8 family.
#pragma once

#include "ckpt/dtypes/half_float.h"
#include "stats_kernels.h"

#include <cstdint>

namespace ckpt::kernels {

/// One float8 value of kind F8E5M2, F8E4M3FN, F8E5M2FNUZ, F8E4M3FNUZ or F8E8M0 (0 for others).
float f8ToFloat(Kind kind, uint8_t byte);

/// A 256-entry decoding table for a float8 kind (built once, thread-safe).
const float* f8Table(Kind kind);

} // namespace ckpt::kernels
