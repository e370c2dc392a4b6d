// SPDX-License-Identifier: MIT
#include "ckpt/dtypes/dtype.h"

#include <array>
#include <utility>

namespace ckpt {
namespace {

struct DTypeRow {
    DType type;
    std::string_view name;
    std::size_t size;
    std::string_view storageClass; // empty for the ≥2.1 dtypes saved as UntypedStorage
    std::string_view safetensors;
};

constexpr std::array kRows{
    DTypeRow{DType::Unknown, "unknown", 0, "", ""},
    DTypeRow{DType::Bool, "bool", 1, "BoolStorage", "BOOL"},
    DTypeRow{DType::UInt8, "uint8", 1, "ByteStorage", "U8"},
    DTypeRow{DType::Int8, "int8", 1, "CharStorage", "I8"},
    DTypeRow{DType::Int16, "int16", 2, "ShortStorage", "I16"},
    DTypeRow{DType::Int32, "int32", 4, "IntStorage", "I32"},
    DTypeRow{DType::Int64, "int64", 8, "LongStorage", "I64"},
    DTypeRow{DType::UInt16, "uint16", 2, "", "U16"},
    DTypeRow{DType::UInt32, "uint32", 4, "", "U32"},
    DTypeRow{DType::UInt64, "uint64", 8, "", "U64"},
    DTypeRow{DType::Float16, "float16", 2, "HalfStorage", "F16"},
    DTypeRow{DType::BFloat16, "bfloat16", 2, "BFloat16Storage", "BF16"},
    DTypeRow{DType::Float32, "float32", 4, "FloatStorage", "F32"},
    DTypeRow{DType::Float64, "float64", 8, "DoubleStorage", "F64"},
    DTypeRow{DType::Complex32, "complex32", 4, "", ""},
    DTypeRow{DType::Complex64, "complex64", 8, "ComplexFloatStorage", "C64"},
    DTypeRow{DType::Complex128, "complex128", 16, "ComplexDoubleStorage", ""},
    DTypeRow{DType::QInt8, "qint8", 1, "QInt8Storage", ""},
    DTypeRow{DType::QUInt8, "quint8", 1, "QUInt8Storage", ""},
    DTypeRow{DType::QInt32, "qint32", 4, "QInt32Storage", ""},
    DTypeRow{DType::QUInt4x2, "quint4x2", 1, "QUInt4x2Storage", ""},
    DTypeRow{DType::QUInt2x4, "quint2x4", 1, "QUInt2x4Storage", ""},
    DTypeRow{DType::Float8_e5m2, "float8_e5m2", 1, "", "F8_E5M2"},
    DTypeRow{DType::Float8_e4m3fn, "float8_e4m3fn", 1, "", "F8_E4M3"},
    DTypeRow{DType::Float8_e5m2fnuz, "float8_e5m2fnuz", 1, "", "F8_E5M2FNUZ"},
    DTypeRow{DType::Float8_e4m3fnuz, "float8_e4m3fnuz", 1, "", "F8_E4M3FNUZ"},
    DTypeRow{DType::Float8_e8m0fnu, "float8_e8m0fnu", 1, "", "F8_E8M0"},
    DTypeRow{DType::Float4_e2m1fn_x2, "float4_e2m1fn_x2", 1, "", ""},
    DTypeRow{DType::Bits8, "bits8", 1, "", ""},
    DTypeRow{DType::Bits16, "bits16", 2, "", ""},
    DTypeRow{DType::Bits1x8, "bits1x8", 1, "", ""},
    DTypeRow{DType::Bits2x4, "bits2x4", 1, "", ""},
    DTypeRow{DType::Bits4x2, "bits4x2", 1, "", ""},
};

const DTypeRow& row(DType type)
{
    for (const auto& r : kRows) {
        if (r.type == type)
            return r;
    }
    return kRows[0];
}

// Older spellings that torch still accepts as attributes (`torch.float` is float32).
constexpr std::array<std::pair<std::string_view, DType>, 10> kAliases{{
    {"float", DType::Float32},
    {"double", DType::Float64},
    {"half", DType::Float16},
    {"long", DType::Int64},
    {"int", DType::Int32},
    {"short", DType::Int16},
    {"cfloat", DType::Complex64},
    {"cdouble", DType::Complex128},
    {"chalf", DType::Complex32},
    {"uint1", DType::Unknown},
}};

} // namespace

std::string_view dtypeName(DType type) { return row(type).name; }
std::size_t dtypeSize(DType type) { return row(type).size; }

bool isFloatingPoint(DType type)
{
    switch (type) {
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32:
    case DType::Float64:
    case DType::Float8_e5m2:
    case DType::Float8_e4m3fn:
    case DType::Float8_e5m2fnuz:
    case DType::Float8_e4m3fnuz:
    case DType::Float8_e8m0fnu:
        return true;
    default:
        return false;
    }
}

bool isComplex(DType type)
{
    return type == DType::Complex32 || type == DType::Complex64 || type == DType::Complex128;
}

DType dtypeFromTorchName(std::string_view name)
{
    if (name.starts_with("torch."))
        name.remove_prefix(6);
    for (const auto& r : kRows) {
        if (r.type != DType::Unknown && r.name == name)
            return r.type;
    }
    for (const auto& [alias, type] : kAliases) {
        if (alias == name)
            return type;
    }
    return DType::Unknown;
}

DType dtypeFromStorageClass(std::string_view className)
{
    if (const auto dot = className.rfind('.'); dot != std::string_view::npos)
        className.remove_prefix(dot + 1);
    for (const auto& r : kRows) {
        if (!r.storageClass.empty() && r.storageClass == className)
            return r.type;
    }
    return DType::Unknown;
}

DType dtypeFromSafetensors(std::string_view code)
{
    for (const auto& r : kRows) {
        if (!r.safetensors.empty() && r.safetensors == code)
            return r.type;
    }
    return DType::Unknown;
}

} // namespace ckpt
