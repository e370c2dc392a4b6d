// SPDX-License-Identifier: MIT
// A read-only memory mapping of a user's file. Opened O_RDONLY and mapped PROT_READ: we never
// write to, truncate or lock a checkpoint. Pages are only touched when their bytes are read,
// which is what keeps listing a 2 GB checkpoint at a few MiB of resident memory.
#pragma once

#include "ckpt/io/byte_reader.h"

#include <string>

namespace ckpt {

class MappedFile {
public:
    /// Throws FormatError naming the reason (missing, a directory, permission...). A path below a
    /// tar archive names one of its members (io/archive_path.h): the archive is mapped, and
    /// bytes(), size(), readAt() and the advice cover that member's data alone.
    static MappedFile open(const std::string& path);

    MappedFile() = default;
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    Bytes bytes() const { return {static_cast<const std::byte*>(m_data), m_size}; }
    std::size_t size() const { return m_size; }
    const std::string& path() const { return m_path; }

    /// Copies bytes at `offset` with pread, without touching the mapping: reading many small
    /// scattered headers this way keeps them out of the process's resident set.
    void readAt(uint64_t offset, std::span<std::byte> out) const;

    /// Tells the kernel a range is about to be read sequentially (or is no longer needed), so
    /// long scans keep resident memory bounded.
    void adviseSequential(std::size_t offset, std::size_t length) const;
    void adviseDone(std::size_t offset, std::size_t length) const;

private:
    void reset();

    std::string m_path;
    int m_fd = -1;
    void* m_data = nullptr;  // the file's bytes (an archive member's: inside the mapping)
    std::size_t m_size = 0;
    void* m_map = nullptr;   // the mapping, from the start of the file on disk
    std::size_t m_mapSize = 0;
    uint64_t m_offset = 0;   // of m_data in the file on disk
};

} // namespace ckpt
