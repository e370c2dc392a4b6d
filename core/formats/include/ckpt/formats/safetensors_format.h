// SPDX-License-Identifier: MIT
// Strict reader for the safetensors format (docs/formats.md §6): an 8-byte little-endian header length N,
// N bytes of UTF-8 JSON, then the tensor bytes. Validation follows the reference Rust reader
// (`safetensors/src/tensor.rs`, `read_metadata` + `Metadata::validate`); nothing in the header is trusted
// before it has been checked against the file size, and all size arithmetic is overflow-checked.
#pragma once

#include "ckpt/dtypes/dtype.h"
#include "ckpt/io/errors.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ckpt {

/// The reference reader refuses headers larger than this (`MAX_HEADER_SIZE`).
inline constexpr uint64_t kSafetensorsMaxHeaderSize = 100'000'000;

struct SafetensorsTensor {
    std::string name;
    std::string dtypeCode;        // as written, e.g. "BF16"
    DType dtype = DType::Unknown; // DType::Unknown for codes DType lacks (F4, F6_E2M3, F6_E3M2)
    std::vector<int64_t> shape;   // [] is a scalar (one element)
    uint64_t begin = 0, end = 0;  // absolute byte offsets in the FILE (already + 8 + N), end exclusive
    bool operator==(const SafetensorsTensor&) const = default;
};

struct SafetensorsHeader {
    uint64_t headerSize = 0;                                  // N
    std::vector<SafetensorsTensor> tensors;                   // in header (file) order
    std::vector<std::pair<std::string, std::string>> metadata; // __metadata__, in header order
    std::vector<std::string> warnings;                        // valid but unusual (unaligned, leading space...)
    bool operator==(const SafetensorsHeader&) const = default; // the two JSON readers' results compared
};

/// Bits per element of a safetensors dtype code ("F32" → 32, "F4" → 4, "F6_E2M3" → 6); 0 for an unknown
/// code. Codes are case-sensitive, as in the reference reader.
int safetensorsDtypeBits(std::string_view code);

/// Which JSON reader reads a header or an index. Fast (simdjson) is the default and hands every text it
/// does not take to Strict (nlohmann's SAX), which words each refusal; both give the same result or the
/// same error for every text. The tests and the safetensors fuzz target hold them to that.
enum class SafetensorsJsonReader { Fast, Strict };

/// The JSON header alone (the text after the 8-byte length): tensors with data_offsets still relative
/// to the data section, metadata, warnings. parseSafetensors adds the layout check.
SafetensorsHeader parseSafetensorsHeaderJson(std::string_view text,
                                             SafetensorsJsonReader reader = SafetensorsJsonReader::Fast);

/// Parses and validates a whole safetensors file like the reference Rust reader (Metadata::validate).
/// Throws FormatError with one user-readable sentence ("header length 1234567890123 exceeds the file size
/// 4096", "tensor 'a.weight': data_offsets [0, 10] hold 10 bytes but shape [2,3] of F32 needs 24",
/// "data ends at 100 but the file has 120 bytes (trailing bytes)"), LimitError when N exceeds
/// kSafetensorsMaxHeaderSize.
SafetensorsHeader parseSafetensors(std::span<const std::byte> file);

struct SafetensorsIndex {
    std::vector<std::pair<std::string, std::string>> weightMap; // tensor -> shard file, in file order
    std::vector<std::pair<std::string, std::string>> metadata;  // scalar values stringified ("total_size" → "123")
    bool operator==(const SafetensorsIndex&) const = default;
};

/// Parses a sharded checkpoint's `*.safetensors.index.json` ({"metadata": {...}, "weight_map": {...}}).
/// Shard names must be relative paths without `..`. Throws FormatError.
SafetensorsIndex parseSafetensorsIndex(std::string_view jsonText,
                                       SafetensorsJsonReader reader = SafetensorsJsonReader::Fast);

} // namespace ckpt
