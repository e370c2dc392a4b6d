// SPDX-License-Identifier: MIT
// The zip container torch.save writes (formats.md §1.2): sizes only in the central directory,
// ZIP64 records always present, 64-byte aligned STORED entries. Parses a byte span so a fuzzer
// can drive it directly.
#pragma once

#include "ckpt/io/byte_reader.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt {

struct ZipEntry {
    std::string name;
    uint16_t method = 0;        // 0 stored, 8 deflate
    uint16_t flags = 0;         // general-purpose bit flags
    uint32_t crc32 = 0;
    uint64_t compressedSize = 0;
    uint64_t uncompressedSize = 0;
    uint64_t localHeaderOffset = 0;
    uint64_t dataOffset = 0;    // first byte of the (compressed) data in the file
};

struct ZipArchive {
    std::vector<ZipEntry> entries;
    std::vector<std::string> warnings;
    bool zip64 = false;

    /// Reads `out.size()` bytes at an offset of the archive; lets a caller fetch local headers
    /// with pread instead of touching (and keeping resident) one page of the mapping per entry.
    using HeaderReader = std::function<void(uint64_t offset, std::span<std::byte> out)>;

    /// Throws FormatError for anything that would make an entry's bytes lie outside the file.
    static ZipArchive parse(Bytes file, const HeaderReader& readHeader = {});

    /// The first entry (in directory order) of that name; a binary search over byName, since a
    /// checkpoint of many tensors looks up one record per storage.
    const ZipEntry* find(std::string_view name) const;

    std::vector<uint32_t> byName; // indices into entries, sorted by name (stable); filled by parse()
};

/// CRC-32 (zlib polynomial) of a byte range.
uint32_t crc32Of(Bytes data, uint32_t seed = 0);

/// Returns the entry's uncompressed bytes. STORED entries are a view into `file` (no copy);
/// DEFLATE entries are inflated into `scratch`, refusing more than maxInflated bytes.
Bytes entryBytes(Bytes file, const ZipEntry& entry, std::vector<std::byte>& scratch,
                 uint64_t maxInflated = uint64_t(1) << 32);

} // namespace ckpt
