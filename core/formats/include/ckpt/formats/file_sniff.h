// SPDX-License-Identifier: MIT
// What the first bytes of a file say it is: zip, legacy torch.save, safetensors, a pickle, or
// something else named by its magic bytes. Shared by the loader and the imports scan.
#pragma once

#include "ckpt/io/byte_reader.h"

#include <string>
#include <string_view>

namespace ckpt {

/// The legacy torch.save magic number pickle at protocol 2.
inline constexpr std::string_view kLegacyMagic{"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e", 15};

bool startsWith(Bytes data, std::string_view prefix);
/// Also at protocol 0/1 (text LONG) and 4 (a FRAME first).
bool startsWithLegacyMagic(Bytes data);
bool looksLikeSafetensors(Bytes data);
/// PROTO, or a protocol 0/1 opcode that ends in STOP or at least names a global.
bool looksLikePickle(Bytes data);

/// What the first bytes say a file is, for messages: "zip archive", "PNG image"...
std::string sniffFileKind(Bytes head);

} // namespace ckpt
