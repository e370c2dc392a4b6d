// SPDX-License-Identifier: MIT
// What the safetensors readers share, internal to core: the header reader (safetensors_format.cpp),
// its check of the data layout (safetensors_layout.cpp) and the index reader (safetensors_index.cpp)
// quote names and offsets the same way in their messages, check UTF-8 before any JSON parsing and
// trim nlohmann's parser messages alike (safetensors_support.cpp).
#pragma once

#include "ckpt/formats/safetensors_format.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

namespace ckpt::detail {

inline constexpr std::size_t kLengthBytes = 8; // the little-endian header length N before the JSON

/// A name as it appears in a message: single-quoted, control characters replaced, long names shortened
/// at a UTF-8 character boundary.
std::string quoteName(std::string_view s);

/// "[begin, end]", as data_offsets are written.
std::string offsetsText(uint64_t begin, uint64_t end);

/// Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlongs, no
/// surrogates, nothing above U+10FFFF), or npos. NUL counts as invalid too: JSON allows no raw NUL, and
/// nlohmann's lexer would take one for the end of the input (accepting `{}\0anything`).
std::size_t findInvalidUtf8(std::string_view s);

/// nlohmann's message without its "[json.exception.parse_error.101] " tag, kept short.
std::string jsonDetail(const nlohmann::detail::exception& ex);

/// A weight_map's shard name is a file inside the index's folder: not empty, not absolute (no
/// leading slash or backslash, no drive letter), no NUL and no ".." component.
bool isRelativeFileName(std::string_view name);

/// "0x" and two hex digits.
std::string hexByte(unsigned char c);

/// How a strict JSON text is named in the readers' messages.
struct JsonTextName {
    const char* subject;    // "header", "the index"
    const char* offsetName; // where byte offsets count from: "header offset", "offset"
    const char* nulHint;    // said after a NUL byte's offset
};

/// The SAX base of the header and index readers: each builds its result from the events,
/// rejecting anything outside its schema; a parse error ends the read naming the text.
class StrictJsonSax : public nlohmann::json_sax<nlohmann::json> {
public:
    explicit StrictJsonSax(const JsonTextName& name) : name_(name) {}
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override;
    /// The top-level object closed.
    virtual bool done() const = 0;
    const JsonTextName& name() const { return name_; }

    /// The same verdict over an object's keys once it closed, for the large objects (a header's
    /// tensors, an index's weight_map): names the key whose second listing comes first, as
    /// addUniqueKey would have, without a hashed copy of every key. Public for the fast readers
    /// (safetensors_fast_json.cpp), which give the same verdict.
    static void checkUniqueKeys(std::span<const std::string_view> keys, const std::string& where);

protected:
    [[noreturn]] static void fail(const std::string& message);
    /// Adds an object's key to the ones `seen`; a second one ends the read, saying that `where`
    /// lists it twice (nlohmann keeps the last, the reference reader refuses the file).
    static void addUniqueKey(std::unordered_set<std::string>& seen, const std::string& key, const std::string& where);
    const JsonTextName& name_;
};

/// Checks that `text` is well-formed UTF-8 without NUL, then runs `sax` over it as strict JSON.
/// Throws FormatError naming the first bad byte, the JSON error, or a text that ended early.
void parseStrictJson(std::string_view text, StrictJsonSax& sax);

/// Metadata::validate over a parsed header whose offsets are still relative to the data section:
/// the tensors must tile it exactly, each holding the bytes its shape and dtype need. Makes the
/// offsets absolute and warns about unaligned data. Throws FormatError.
void checkTensorLayout(SafetensorsHeader& header, uint64_t fileSize);

/// The fast readers (safetensors_fast_json.cpp): simdjson's validating parser, then the schema.
/// They return true with `out` filled exactly as the strict SAX readers would fill it, or false
/// (out cleared) for any text they do not take, valid or not: the strict reader then reads it
/// and words the error. simdjson checks the UTF-8 as findInvalidUtf8 does (RFC 3629, and no raw
/// NUL: JSON allows none outside strings, nor any control character inside one).
bool readHeaderFast(std::string_view text, SafetensorsHeader& out);
bool readIndexFast(std::string_view text, SafetensorsIndex& out);

} // namespace ckpt::detail
