// SPDX-License-Identifier: MIT
// Element types as PyTorch names them, with sizes and the spellings each file format uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ckpt {

enum class DType : uint8_t {
    Unknown,
    Bool,
    UInt8,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    BFloat16,
    Float32,
    Float64,
    Complex32,
    Complex64,
    Complex128,
    QInt8,
    QUInt8,
    QInt32,
    QUInt4x2,
    QUInt2x4,
    Float8_e5m2,
    Float8_e4m3fn,
    Float8_e5m2fnuz,
    Float8_e4m3fnuz,
    Float8_e8m0fnu,
    Float4_e2m1fn_x2,
    Bits8,
    Bits16,
    Bits1x8,
    Bits2x4,
    Bits4x2,
};

/// The name PyTorch prints without the `torch.` prefix: "float32", "bfloat16", "complex64".
std::string_view dtypeName(DType type);

/// Bytes per element; 0 for Unknown.
std::size_t dtypeSize(DType type);

bool isFloatingPoint(DType type);
bool isComplex(DType type);

/// From a dtype attribute name as pickled (`torch float32`) or as printed; accepts the
/// legacy aliases (`float`, `half`, `long`...). Unknown names give DType::Unknown.
DType dtypeFromTorchName(std::string_view name);

/// From a legacy storage class name such as "FloatStorage" or "BFloat16Storage".
DType dtypeFromStorageClass(std::string_view className);

/// From a safetensors dtype string such as "F32", "BF16", "F8_E4M3".
DType dtypeFromSafetensors(std::string_view code);

} // namespace ckpt
