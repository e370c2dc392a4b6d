// SPDX-License-Identifier: MIT
#include "ckpt/pickle/codec_names.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>

namespace ckpt {

bool isLatin1Codec(std::string_view name)
{
    std::string n(name);
    for (char& c : n)
        c = c == '-' || c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // Lib/encodings/aliases.py (CPython 3.11): every alias of latin_1, and the codec's own names.
    static constexpr std::string_view kNames[] = {"latin_1", "latin1", "iso8859_1", "iso_8859_1", "8859", "cp819", "l1",
                                                  "latin", "iso_ir_100", "csisolatin1", "ibm819", "iso_8859_1:1987"};
    return std::find(std::begin(kNames), std::end(kNames), n) != std::end(kNames);
}

} // namespace ckpt
