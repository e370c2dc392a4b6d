// SPDX-License-Identifier: MIT
// The safetensors reader: header length, JSON header validation, offsets against the file;
// inputs that start with '{' also go through the sharded index parser. Both JSON readers (the
// simdjson fast path and the strict SAX reader) read every header and index text and must agree:
// the same result, or the same error.
#include "fuzz_support.h"

#include "ckpt/formats/safetensors_format.h"

#include <cstdio>
#include <cstdlib>

namespace {

using ckpt::SafetensorsJsonReader;

/// Runs `parse` with each reader; aborts (a finding) when they disagree.
template<typename Parse>
void readersAgree(const char* what, Parse parse)
{
    using Result = decltype(parse(SafetensorsJsonReader::Fast));
    Result results[2];
    std::string errors[2];
    bool ok[2] = {false, false};
    for (int i = 0; i < 2; ++i) {
        try {
            results[i] = parse(i == 0 ? SafetensorsJsonReader::Fast : SafetensorsJsonReader::Strict);
            ok[i] = true;
        } catch (const ckpt::FormatError& e) {
            errors[i] = e.what();
        }
    }
    if (ok[0] != ok[1] || errors[0] != errors[1] || (ok[0] && results[0] != results[1])) {
        std::fprintf(stderr, "%s: the fast and the strict JSON readers disagree\n  fast:   %s\n  strict: %s\n", what,
                     ok[0] ? "accepted" : errors[0].c_str(), ok[1] ? "accepted" : errors[1].c_str());
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    const std::span<const std::byte> file{reinterpret_cast<const std::byte*>(data), size};
    ckpt::fuzz::refusalsAreFine([&] { (void)ckpt::parseSafetensors(file); });

    // The header text as parseSafetensors cuts it, when the length fits.
    if (size >= 8) {
        uint64_t n = 0;
        for (int i = 0; i < 8; ++i)
            n |= static_cast<uint64_t>(data[i]) << (8 * i);
        if (n <= size - 8) {
            const std::string_view header(reinterpret_cast<const char*>(data) + 8, n);
            readersAgree("header", [&](SafetensorsJsonReader r) { return ckpt::parseSafetensorsHeaderJson(header, r); });
        }
    }
    if (size > 0 && data[0] == '{') {
        const std::string_view text(reinterpret_cast<const char*>(data), size);
        readersAgree("header", [&](SafetensorsJsonReader r) { return ckpt::parseSafetensorsHeaderJson(text, r); });
        readersAgree("index", [&](SafetensorsJsonReader r) { return ckpt::parseSafetensorsIndex(text, r); });
    }
    return 0;
}
