// SPDX-License-Identifier: MIT
// Reads a tensor's view (shape, stride, storage offset) in C order, a window at a time, as
// contiguous little-endian elements in a caller's buffer: copied with pread when the view is
// contiguous in a mapped file (the mapping's pages are never touched, so a scan of a file
// larger than RAM keeps a bounded footprint), else gathered (and byte-swapped).
#pragma once

#include "ckpt/formats/checkpoint_file.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ckpt {

class TensorViewReader {
public:
    /// Throws FormatError naming the tensor's problem when it has no usable bytes or its view
    /// does not fit its storage (also for sparse, meta and other non-strided layouts).
    TensorViewReader(const CheckpointFile& file, const TensorInfo& tensor);

    uint64_t numel() const { return m_numel; }
    std::size_t elementSize() const { return m_elem; }
    DType dtype() const { return m_dtype; }

    /// Elements [begin, begin + count) in C order; the pointer is valid until the next call
    /// with the same buffer. `buffer` is resized as needed (unused for in-memory storage).
    const std::byte* read(uint64_t begin, std::size_t count, std::vector<std::byte>& buffer) const;

private:
    void gather(uint64_t begin, std::size_t count, std::byte* out) const;

    const MappedFile* m_mapped = nullptr; // the mapping holding m_storage, when it is mapped
    std::vector<std::byte> m_scratch;     // inflated DEFLATE record
    Bytes m_storage;
    DType m_dtype = DType::Unknown;
    std::size_t m_elem = 0;
    uint64_t m_numel = 0;
    std::vector<int64_t> m_shape, m_stride;
    int64_t m_offset = 0;
    bool m_contiguous = true;
    bool m_swap = false;
};

} // namespace ckpt
