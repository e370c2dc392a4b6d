// SPDX-License-Identifier: MIT
#include "ckpt/formats/file_sniff.h"

#include "ckpt/pickle/pickle_machine.h"

#include <algorithm>
#include <cstring>

namespace ckpt {

bool startsWith(Bytes data, std::string_view prefix)
{
    return data.size() >= prefix.size() && std::memcmp(data.data(), prefix.data(), prefix.size()) == 0;
}

// The legacy format's first pickle is the magic number as a LONG1. At protocol 2 the file
// starts with it; at protocol 4 a FRAME opcode comes first, so look a few bytes in.
bool startsWithLegacyMagic(Bytes data)
{
    if (startsWith(data, kLegacyMagic) || startsWith(data, "L119547037146038801333356L\n."))
        return true; // protocol 2 / protocol 0-1
    constexpr std::string_view kLong = kLegacyMagic.substr(2, 12);
    if (data.size() < 32 || static_cast<uint8_t>(data[0]) != 0x80)
        return false;
    const std::string_view head = asText(data.subspan(0, 32));
    const auto at = head.find(kLong);
    return at != std::string_view::npos && at <= 12;
}

bool looksLikeSafetensors(Bytes data)
{
    if (data.size() < 10)
        return false;
    const uint64_t n = loadLE<uint64_t>(data, 0);
    if (n < 2 || n > data.size() - 8)
        return false;
    for (std::size_t i = 8; i < 8 + n; ++i) {
        const auto c = static_cast<char>(data[i]);
        if (c == '{')
            return true;
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return false;
    }
    return false;
}

// A protocol 0/1 pickle has no header: run the machine and see whether it reaches STOP or
// at least names a global before it breaks (a payload followed by junk still counts).
namespace {

bool probePickle(Bytes data)
{
    ValueGraph graph(std::size_t(1) << 20);
    PickleMachine vm(graph);
    try {
        vm.run(data);
        return true;
    } catch (const std::exception&) {
        return !vm.globals().empty();
    }
}

} // namespace

// First bytes of a pickle: PROTO, or an opcode that can start a protocol 0/1 pickle.
bool looksLikePickle(Bytes data)
{
    if (data.empty())
        return false;
    const auto op = static_cast<uint8_t>(data[0]);
    if (op == 0x80)
        return data.size() > 1 && static_cast<uint8_t>(data[1]) <= 5;
    if (data.size() > 1 && op == 'g' && static_cast<uint8_t>(data[1]) >= 'a')
        return false; // "global_step100": a text file, not GET
    // Protocol 0/1 pickles have no header, and CPython reads protocol 2+ opcodes without one
    // too (pickletester's test_constants: b'\x88.'); accept any opcode that can come first.
    static constexpr std::string_view kFirstOps = "(cNIJKLMFGSTUVXBCP]}l)dghiq\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x95\x96";
    if (kFirstOps.find(static_cast<char>(op)) == std::string_view::npos)
        return false;
    return static_cast<uint8_t>(data.back()) == '.' || probePickle(data);
}


std::string sniffFileKind(Bytes head)
{
    struct Magic {
        std::string_view bytes;
        const char* kind;
    };
    static const Magic kMagics[] = {
        {"PK\x03\x04", "a zip archive"},
        {"\x89PNG", "a PNG image"},
        {"\xff\xd8\xff", "a JPEG image"},
        {"\x1f\x8b", "a gzip file"},
        {"BZh", "a bzip2 file"},
        {"\xfd" "7zXZ", "an xz file"},
        {"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"},
        {"\x7f" "ELF", "an executable (ELF)"},
        {"%PDF", "a PDF document"},
        {"\x89HDF", "an HDF5 file"},
        {"\x93NUMPY", "a numpy .npy array"},
        {"PYTORCH1", "a TorchScript container from the PyTorch 1.0 preview"},
        {"GGUF", "a GGUF model file"},
    };
    for (const auto& m : kMagics) {
        if (startsWith(head, m.bytes))
            return m.kind;
    }
    if (head.size() > 262 && std::memcmp(head.data() + 257, "ustar", 5) == 0)
        return "a tar archive";
    const bool text = std::all_of(head.begin(), head.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(head.size(), 512)),
                                  [](std::byte b) {
                                      const auto c = static_cast<uint8_t>(b);
                                      return c == '\n' || c == '\r' || c == '\t' || (c >= 0x20 && c < 0x7F) || c >= 0x80;
                                  });
    return text ? "a text file" : "unrecognised binary data";
}

} // namespace ckpt
