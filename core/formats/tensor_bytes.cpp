// SPDX-License-Identifier: MIT
#include "ckpt/formats/tensor_bytes.h"

#include "ckpt/io/errors.h"

#include <cstring>
#include <string>
#include <variant>

namespace ckpt {

namespace {

// Integer dict keys (an optimizer's state indices) reach a Provenance as text: "0" matches 0.
bool samePart(const KeyPart& a, const KeyPart& b)
{
    if (a == b)
        return true;
    const auto* ai = std::get_if<int64_t>(&a);
    const auto* bi = std::get_if<int64_t>(&b);
    const auto* as = std::get_if<std::string>(&a);
    const auto* bs = std::get_if<std::string>(&b);
    return (ai && bs && std::to_string(*ai) == *bs) || (bi && as && std::to_string(*bi) == *as);
}

bool sameKey(const KeyPath& a, const KeyPath& b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!samePart(a[i], b[i]))
            return false;
    }
    return true;
}

} // namespace

const TensorInfo* tensorAt(const CheckpointFile& file, const KeyPath& key)
{
    for (const TensorEntry& e : file.tensorEntries()) {
        if (sameKey(e.key, key) && e.tensor < file.tensors().size())
            return &file.tensors()[e.tensor];
    }
    return nullptr;
}

std::vector<std::byte> contiguousTensorBytes(const CheckpointFile& file, const TensorInfo& t)
{
    if (t.layout != TensorLayout::Strided)
        throw FormatError(std::string("a ") + layoutName(t.layout) + " tensor has no strided data to read");
    if (!t.hasData())
        throw FormatError(t.problem.empty() ? "the tensor has no bytes in the file" : t.problem);
    const std::size_t elem = dtypeSize(t.dtype);
    if (elem == 0)
        throw FormatError("the tensor's dtype " + t.dtypeName + " has no known element size");
    const auto numel = static_cast<std::size_t>(t.numel());
    std::vector<std::byte> scratch;
    const Bytes region = file.tensorRegion(t, scratch); // starts at storageOffset; hasData() checked the bounds
    std::vector<std::byte> out(numel * elem);
    const std::size_t dims = t.shape.size();
    bool contiguous = true;
    int64_t expected = 1;
    for (std::size_t d = dims; d-- > 0;) {
        contiguous = contiguous && (t.shape[d] == 1 || t.stride[d] == expected);
        expected *= t.shape[d];
    }
    if (contiguous) {
        if (region.size() < out.size())
            throw FormatError("the tensor's view reaches past its storage");
        std::memcpy(out.data(), region.data(), out.size());
        if (file.bigEndian())
            swapElementBytes(out, t.dtype);
        return out;
    }
    std::vector<int64_t> index(dims, 0);
    for (std::size_t n = 0; n < numel; ++n) {
        uint64_t at = 0;
        for (std::size_t d = 0; d < dims; ++d)
            at += static_cast<uint64_t>(index[d]) * static_cast<uint64_t>(t.stride[d]);
        if ((at + 1) * elem > region.size())
            throw FormatError("the tensor's view reaches past its storage");
        std::memcpy(out.data() + n * elem, region.data() + at * elem, elem);
        for (std::size_t d = dims; d-- > 0;) { // row-major odometer
            if (++index[d] < t.shape[d])
                break;
            index[d] = 0;
        }
    }
    if (file.bigEndian())
        swapElementBytes(out, t.dtype);
    return out;
}

} // namespace ckpt
