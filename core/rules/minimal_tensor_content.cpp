// SPDX-License-Identifier: MIT
#include "core/rules/minimal_tensor_content.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace ckpt {
namespace {

float halfToFloat(uint16_t h)
{
    const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { // subnormal
            const float v = std::ldexp(static_cast<float>(mant), -24);
            return sign ? -v : v;
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    }
    return std::bit_cast<float>(bits);
}

bool contiguous(const TensorInfo& t)
{
    int64_t expected = 1;
    for (std::size_t i = t.shape.size(); i-- > 0;) {
        if (t.shape[i] != 1 && (i >= t.stride.size() || t.stride[i] != expected))
            return false;
        expected *= t.shape[i];
    }
    return true;
}

} // namespace

std::optional<TensorSummary> summarizeTensor(const CheckpointFile& file, const TensorInfo& t)
{
    const std::size_t size = dtypeSize(t.dtype);
    if (!t.hasData() || t.layout != TensorLayout::Strided || !contiguous(t)
        || (t.dtype != DType::Float16 && t.dtype != DType::BFloat16 && t.dtype != DType::Float32 && t.dtype != DType::Float64))
        return std::nullopt;
    std::vector<std::byte> scratch;
    Bytes region;
    try {
        region = file.tensorRegion(t, scratch);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    const auto n = static_cast<uint64_t>(t.numel());
    if (region.size() < n * size)
        return std::nullopt;
    std::vector<std::byte> swapped;
    const std::byte* data = region.data();
    if (file.bigEndian()) {
        swapped.assign(region.begin(), region.begin() + static_cast<std::ptrdiff_t>(n * size));
        swapElementBytes(swapped, t.dtype);
        data = swapped.data();
    }
    TensorSummary s;
    s.numel = n;
    uint64_t digest = 1469598103934665603ull;
    for (std::size_t i = 0; i < n * size; ++i)
        digest = (digest ^ static_cast<uint8_t>(data[i])) * 1099511628211ull;
    s.digest = digest;
    double sumSquares = 0;
    for (uint64_t i = 0; i < n; ++i) {
        double v;
        const std::byte* p = data + i * size;
        switch (t.dtype) {
        case DType::Float16: { uint16_t h; std::memcpy(&h, p, 2); v = halfToFloat(h); break; }
        case DType::BFloat16: { uint16_t h; std::memcpy(&h, p, 2); v = std::bit_cast<float>(static_cast<uint32_t>(h) << 16); break; }
        case DType::Float32: { float f; std::memcpy(&f, p, 4); v = f; break; }
        default: std::memcpy(&v, p, 8); break;
        }
        if (std::isnan(v)) {
            ++s.nan;
        } else if (std::isinf(v)) {
            ++s.inf;
        } else {
            s.negative += v < 0;
            s.zeros += v == 0;
            sumSquares += v * v;
        }
    }
    s.l2 = std::sqrt(sumSquares);
    return s;
}

const MinimalTensorContent::Opened& MinimalTensorContent::open(const std::string& path)
{
    auto it = m_files.find(path);
    if (it != m_files.end())
        return it->second;
    Opened opened;
    try {
        opened.file = CheckpointFile::open(path);
        // Key paths compare as text: the state model keeps optimizer indices as strings ("0"),
        // the file's own walk as integers (0).
        for (const auto& e : opened.file->tensorEntries())
            opened.byKey.emplace(formatKeyPath(e.key), e.tensor);
    } catch (const std::exception&) {
        opened.file.reset();
    }
    return m_files.emplace(path, std::move(opened)).first->second;
}

std::optional<TensorSummary> MinimalTensorContent::summary(const Provenance& where)
{
    std::lock_guard lock(m_mutex);
    const Opened& f = open(where.file);
    if (!f.file)
        return std::nullopt;
    const auto it = f.byKey.find(formatKeyPath(where.key));
    if (it == f.byKey.end())
        return std::nullopt;
    return summarizeTensor(*f.file, f.file->tensors()[it->second]);
}

} // namespace ckpt
