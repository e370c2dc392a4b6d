// SPDX-License-Identifier: MIT
// The safetensors header's data layout checked as the reference reader's Metadata::validate checks
// it, with every size computed overflow-checked: the tensors tile the data section exactly, in
// offset order, and each holds the bytes its shape and dtype need.
#include "safetensors_support.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

namespace ckpt::detail {
namespace {

bool checkedMul(uint64_t a, uint64_t b, uint64_t& out)
{
    if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a)
        return false;
    out = a * b;
    return true;
}

bool checkedAdd(uint64_t a, uint64_t b, uint64_t& out)
{
    if (b > std::numeric_limits<uint64_t>::max() - a)
        return false;
    out = a + b;
    return true;
}

std::string shapeText(const std::vector<int64_t>& shape)
{
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i)
            out += ',';
        out += std::to_string(shape[i]);
    }
    out += ']';
    return out;
}

} // namespace

void checkTensorLayout(SafetensorsHeader& out, uint64_t fileSize)
{
    const uint64_t n = out.headerSize;
    // Metadata::validate: in offset order the tensors must tile the data section exactly.
    const uint64_t dataStart = kLengthBytes + n;
    const uint64_t dataSize = fileSize - dataStart;
    auto& tensors = out.tensors;
    std::vector<std::size_t> order(tensors.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::pair(tensors[a].begin, tensors[a].end) < std::pair(tensors[b].begin, tensors[b].end);
    });

    uint64_t expected = 0;
    const SafetensorsTensor* previous = nullptr;
    std::size_t misaligned = 0;
    const SafetensorsTensor* firstMisaligned = nullptr;
    for (const std::size_t index : order) {
        const SafetensorsTensor& t = tensors[index];
        const std::string prefix = "tensor " + quoteName(t.name) + ": ";
        if (t.begin != expected) {
            if (!previous)
                throw FormatError(prefix + "data_offsets " + offsetsText(t.begin, t.end)
                                  + " leave a hole at the start of the data, which must begin at offset 0");
            throw FormatError(prefix + "data_offsets " + offsetsText(t.begin, t.end)
                              + (t.begin > expected ? " leave a hole after tensor " : " overlap tensor ")
                              + quoteName(previous->name) + ", which ends at " + std::to_string(expected));
        }

        const int bits = safetensorsDtypeBits(t.dtypeCode);
        // The reference multiplies left to right in usize. We also require the product of the non-zero
        // dimensions to fit int64 (a superset of its rejections), so that element counts and contiguous
        // strides computed from any shape we return never overflow.
        uint64_t nonZero = 1;
        bool empty = false;
        for (const int64_t dim : t.shape) {
            if (dim == 0) {
                empty = true;
            } else if (!checkedMul(nonZero, static_cast<uint64_t>(dim), nonZero)
                       || nonZero > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
                throw FormatError(prefix + "shape " + shapeText(t.shape) + " has too many elements to count");
            }
        }
        const uint64_t elements = empty ? 0 : nonZero;
        uint64_t totalBits = 0;
        if (!checkedMul(elements, static_cast<uint64_t>(bits), totalBits))
            throw FormatError(prefix + "shape " + shapeText(t.shape) + " of " + t.dtypeCode
                              + " has too many bytes to count");
        if (totalBits % 8 != 0)
            throw FormatError(prefix + "shape " + shapeText(t.shape) + " of " + t.dtypeCode + " holds "
                              + std::to_string(totalBits) + " bits, not a whole number of bytes");
        const uint64_t bytes = totalBits / 8;
        if (t.end - t.begin != bytes)
            throw FormatError(prefix + "data_offsets " + offsetsText(t.begin, t.end) + " hold "
                              + std::to_string(t.end - t.begin) + " bytes but shape " + shapeText(t.shape)
                              + " of " + t.dtypeCode + " needs " + std::to_string(bytes));

        if (bits >= 16 && t.end > t.begin && t.begin % static_cast<uint64_t>(bits / 8) != 0 && ++misaligned == 1)
            firstMisaligned = &t;
        expected = t.end;
        previous = &t;
    }

    if (expected != dataSize) {
        uint64_t dataEnd = 0;
        const bool fits = checkedAdd(dataStart, expected, dataEnd);
        throw FormatError("data ends at " + (fits ? std::to_string(dataEnd) : "offset " + std::to_string(expected)
                                                                                  + " after the header")
                          + " but the file has " + std::to_string(fileSize) + " bytes"
                          + (expected < dataSize ? " (trailing bytes)" : " (truncated)"));
    }

    // Every offset is now known to lie inside the file: make them absolute.
    for (auto& t : tensors) {
        t.begin += dataStart;
        t.end += dataStart;
    }

    if (n % 8 != 0)
        out.warnings.push_back("header length " + std::to_string(n)
                               + " is not a multiple of 8, so the tensor data is not 8-byte aligned in the file"
                                 " (written before safetensors 0.3.1 or by another writer)");
    if (misaligned)
        out.warnings.push_back(std::to_string(misaligned) + (misaligned == 1 ? " tensor starts" : " tensors start")
                               + " at an offset that is not a multiple of its element size (first: "
                               + quoteName(firstMisaligned->name) + ", " + firstMisaligned->dtypeCode + " at data offset "
                               + std::to_string(firstMisaligned->begin - dataStart) + ")");
}

} // namespace ckpt::detail
