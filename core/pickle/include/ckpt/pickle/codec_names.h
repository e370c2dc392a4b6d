// SPDX-License-Identifier: MIT
// Codec names as Python's codec lookup reads them: _codecs.encode(text, name) is how protocol 2
// pickles bytes (numpy RNG states, Python 2 strings), and a pickle may spell latin-1 any of the
// ways CPython accepts.
#pragma once

#include <string_view>

namespace ckpt {

/// True when `name` is Latin-1 to CPython's codec registry: lowercased, '-' and ' ' read as '_'
/// (encodings.normalize_encoding), then encodings.aliases' names for latin_1.
bool isLatin1Codec(std::string_view name);

} // namespace ckpt
