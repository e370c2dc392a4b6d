// SPDX-License-Identifier: MIT
#include "ckpt/formats/tensor_view_reader.h"

#include "ckpt/io/errors.h"

#include <cstring>

namespace ckpt {
namespace {

const MappedFile* mappingHolding(const CheckpointFile& file, Bytes bytes)
{
    auto holds = [&](const MappedFile& m) {
        const Bytes all = m.bytes();
        return !all.empty() && bytes.data() >= all.data() && bytes.data() + bytes.size() <= all.data() + all.size();
    };
    if (holds(file.mappedFile()))
        return &file.mappedFile();
    for (const auto& shard : file.shards()) {
        if (holds(shard))
            return &shard;
    }
    return nullptr;
}

} // namespace

TensorViewReader::TensorViewReader(const CheckpointFile& file, const TensorInfo& t)
{
    if (t.layout != TensorLayout::Strided)
        throw FormatError(std::string("a ") + layoutName(t.layout) + " tensor has no dense elements to summarise");
    if (!t.problem.empty())
        throw FormatError(t.problem);
    if (t.storage < 0)
        throw FormatError("the tensor has no storage in the file");
    m_dtype = t.dtype;
    m_elem = dtypeSize(t.dtype);
    if (m_elem == 0)
        throw FormatError("unknown element type '" + t.dtypeName + "'");
    if (t.shape.size() != t.stride.size())
        throw FormatError("the tensor's shape and stride have different lengths");
    m_numel = static_cast<uint64_t>(t.numel());
    m_shape = t.shape;
    m_stride = t.stride;
    m_offset = t.storageOffset;
    m_storage = file.storageBytes(static_cast<std::size_t>(t.storage), m_scratch);
    m_mapped = m_scratch.empty() ? mappingHolding(file, m_storage) : nullptr;
    m_swap = file.bigEndian() && m_elem > 1;
    if (m_numel == 0)
        return;
    // Bounds: the farthest element (strides are non-negative in saved tensors; reject others).
    Int128 last = m_offset;
    int64_t expect = 1;
    for (std::size_t d = m_shape.size(); d-- > 0;) {
        if (m_stride[d] < 0 || m_offset < 0)
            throw FormatError("negative strides or offsets are not supported");
        last += static_cast<Int128>(m_shape[d] - 1) * m_stride[d];
        if (m_shape[d] != 1 && m_stride[d] != expect)
            m_contiguous = false;
        expect *= m_shape[d];
    }
    if ((last + 1) * static_cast<Int128>(m_elem) > static_cast<Int128>(m_storage.size()))
        throw FormatError("the tensor's view reaches past the end of its storage ("
                          + std::to_string(m_storage.size()) + " bytes)");
}

const std::byte* TensorViewReader::read(uint64_t begin, std::size_t count, std::vector<std::byte>& buffer) const
{
    if (m_contiguous) {
        const std::byte* p = m_storage.data() + (static_cast<uint64_t>(m_offset) + begin) * m_elem;
        if (m_mapped) {
            // Copied with pread rather than read through the mapping: mapping and unmapping
            // every page of a window costs more kernel time than the copy, the copy lands in
            // the cache for the scan, and the process's resident memory stays at the buffer.
            if (buffer.size() < count * m_elem) // never shrunk: growing again would clear it
                buffer.resize(count * m_elem);
            m_mapped->readAt(static_cast<uint64_t>(p - m_mapped->bytes().data()), std::span<std::byte>(buffer.data(), count * m_elem));
        } else if (!m_swap) {
            return p;
        } else {
            buffer.resize(count * m_elem);
            std::memcpy(buffer.data(), p, count * m_elem);
        }
    } else {
        buffer.resize(count * m_elem);
        gather(begin, count, buffer.data());
    }
    if (m_swap)
        swapElementBytes(std::span<std::byte>(buffer.data(), count * m_elem), m_dtype);
    return buffer.data();
}

void TensorViewReader::gather(uint64_t begin, std::size_t count, std::byte* out) const
{
    // Multi-index of `begin`, then an odometer; the innermost dimension is copied as runs.
    const std::size_t dims = m_shape.size();
    std::vector<int64_t> index(dims, 0);
    uint64_t rest = begin;
    for (std::size_t d = dims; d-- > 0;) {
        index[d] = static_cast<int64_t>(rest % static_cast<uint64_t>(m_shape[d]));
        rest /= static_cast<uint64_t>(m_shape[d]);
    }
    std::size_t done = 0;
    while (done < count) {
        int64_t pos = m_offset;
        for (std::size_t d = 0; d < dims; ++d)
            pos += index[d] * m_stride[d];
        const int64_t inner = dims ? m_shape[dims - 1] - index[dims - 1] : 1;
        const std::size_t run = std::min<std::size_t>(count - done, static_cast<std::size_t>(inner));
        const int64_t step = dims ? m_stride[dims - 1] : 1;
        const std::byte* src = m_storage.data() + static_cast<uint64_t>(pos) * m_elem;
        if (step == 1) {
            std::memcpy(out + done * m_elem, src, run * m_elem);
        } else {
            for (std::size_t i = 0; i < run; ++i)
                std::memcpy(out + (done + i) * m_elem, src + static_cast<uint64_t>(i) * static_cast<uint64_t>(step) * m_elem, m_elem);
        }
        done += run;
        if (dims == 0)
            break;
        index[dims - 1] += static_cast<int64_t>(run);
        for (std::size_t d = dims - 1; d > 0 && index[d] >= m_shape[d]; --d) {
            index[d] = 0;
            ++index[d - 1];
        }
    }
}

} // namespace ckpt
