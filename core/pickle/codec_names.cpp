// SPDX-License-Identifier: MIT
#include "ckpt/pickle/codec_names.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>

namespace ckpt {

bool isLatin1Codec(std::string_view name)
{
    // codecs.lookup first runs _Py_normalize_encoding (Objects/unicodeobject.c, CPython 3.11) on
    // the name's UTF-8 bytes: ASCII letters and digits (lowercased) and '.' are kept, every run of
    // other bytes between them becomes one '_', runs at either end are dropped. 'Latin-1',
    // 'LATIN 1' and 'latin\u00d5' come out as 'latin_1', 'latin_1' and 'latin'.
    std::string n;
    bool punct = false;
    for (const char ch : name) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c < 0x80 && std::isalnum(c)) || c == '.') {
            if (punct && !n.empty())
                n += '_';
            n += static_cast<char>(std::tolower(c));
            punct = false;
        } else {
            punct = true;
        }
    }
    // Lib/encodings/aliases.py: every alias of latin_1 (looked up as is and with '.' as '_'),
    // and the codec's own name.
    static constexpr std::string_view kNames[] = {"latin_1", "8859", "cp819", "csisolatin1", "ibm819", "iso8859",
                                                  "iso8859_1", "iso_8859_1", "iso_8859_1_1987", "iso_ir_100", "l1",
                                                  "latin", "latin1"};
    for (char& c : n)
        c = c == '.' ? '_' : c;
    return std::find(std::begin(kNames), std::end(kNames), n) != std::end(kNames);
}

} // namespace ckpt
