// SPDX-License-Identifier: MIT
// The header layout is POSIX.1-1988 ustar (name 0..99, size 124..135 in octal or GNU's base-256,
// checksum 148..155, typeflag 156, prefix 345..499), with GNU 'L' long-name members and pax 'x'
// extended headers ("<len> path=<name>\n", "<len> size=<n>\n") for what does not fit, as Python's
// tarfile writes them (Lib/tarfile.py TarInfo.frombuf, _proc_pax, _proc_gnulong).
#include "ckpt/io/tar_index.h"

#include "ckpt/io/errors.h"

#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>

namespace ckpt {
namespace {

constexpr std::size_t kBlock = 512;

std::string_view field(Bytes header, std::size_t at, std::size_t length)
{
    const char* p = reinterpret_cast<const char*>(header.data()) + at;
    return {p, strnlen(p, length)};
}

std::optional<uint64_t> octal(Bytes header, std::size_t at, std::size_t length)
{
    const auto first = static_cast<unsigned char>(header[at]);
    if (first & 0x80) { // GNU base-256 for sizes past 8 GiB
        uint64_t v = 0;
        for (std::size_t i = 1; i < length; ++i) {
            if (v >> 56)
                return std::nullopt;
            v = (v << 8) | static_cast<unsigned char>(header[at + i]);
        }
        return v;
    }
    std::string_view text = field(header, at, length);
    while (!text.empty() && (text.front() == ' '))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\0'))
        text.remove_suffix(1);
    uint64_t v = 0;
    if (text.empty())
        return uint64_t{0};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 8);
    if (ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return v;
}

bool checksumHolds(Bytes header)
{
    const auto stored = octal(header, 148, 8);
    if (!stored)
        return false;
    uint64_t sum = 0;
    for (std::size_t i = 0; i < kBlock; ++i)
        sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(header[i]);
    return sum == *stored;
}

bool zeroBlock(Bytes block)
{
    for (const std::byte b : block) {
        if (b != std::byte{0})
            return false;
    }
    return true;
}

// pax records: "<length> <key>=<value>\n", the length counting the whole record.
void applyPax(std::string_view records, std::string& path, std::optional<uint64_t>& size)
{
    while (!records.empty()) {
        std::size_t length = 0;
        const auto [end, ec] = std::from_chars(records.data(), records.data() + records.size(), length);
        if (ec != std::errc() || length == 0 || length > records.size())
            throw FormatError("a pax extended header record is malformed");
        const std::string_view record = records.substr(0, length);
        const std::size_t space = record.find(' '), equals = record.find('=');
        if (space == std::string_view::npos || equals == std::string_view::npos || equals < space || record.back() != '\n')
            throw FormatError("a pax extended header record is malformed");
        const std::string_view key = record.substr(space + 1, equals - space - 1);
        const std::string_view value = record.substr(equals + 1, record.size() - equals - 2);
        if (key == "path") {
            path = std::string(value);
        } else if (key == "size") {
            uint64_t v = 0;
            const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
            if (r.ec != std::errc())
                throw FormatError("a pax size record is not a number");
            size = v;
        }
        records.remove_prefix(length);
    }
}

} // namespace

bool looksLikeTar(Bytes head)
{
    return head.size() >= kBlock && !zeroBlock(head.subspan(0, kBlock)) && checksumHolds(head.subspan(0, kBlock));
}

std::vector<TarMember> tarIndex(Bytes archive)
{
    std::vector<TarMember> members;
    std::string longName;                 // from a GNU 'L' member, for the next header
    std::string paxPath;                  // from a pax 'x' header, for the next header
    std::optional<uint64_t> paxSize;
    uint64_t at = 0;
    while (at + kBlock <= archive.size()) {
        const Bytes header = archive.subspan(at, kBlock);
        if (zeroBlock(header))
            break; // the end-of-archive marker
        if (!checksumHolds(header))
            throw FormatError("not a tar archive: the header at byte " + std::to_string(at) + " has a wrong checksum");
        const auto size = octal(header, 124, 12);
        if (!size)
            throw FormatError("the tar header at byte " + std::to_string(at) + " has an unreadable size");
        const char type = static_cast<char>(header[156]);
        const uint64_t data = at + kBlock;
        const uint64_t length = (type == 'x' || type == 'L' || type == 'g') ? *size : paxSize.value_or(*size);
        if (data > archive.size() || length > archive.size() - data)
            throw FormatError("the tar member at byte " + std::to_string(at) + " runs past the end of the file (truncated)");
        const std::string_view content(reinterpret_cast<const char*>(archive.data() + data), static_cast<std::size_t>(length));
        if (type == 'L') {
            longName.assign(content.data(), strnlen(content.data(), content.size()));
        } else if (type == 'x') {
            applyPax(content, paxPath, paxSize);
        } else if (type != 'g') {
            TarMember m;
            const std::string_view prefix = std::memcmp(header.data() + 257, "ustar", 5) == 0 ? field(header, 345, 155) : std::string_view();
            m.name = !paxPath.empty() ? paxPath : !longName.empty() ? longName
                   : prefix.empty() ? std::string(field(header, 0, 100)) : std::string(prefix) + "/" + std::string(field(header, 0, 100));
            m.type = type == '\0' ? '0' : type;
            // tarfile names a directory without its trailing slash (TarInfo.frombuf)
            while (m.type == '5' && m.name.size() > 1 && m.name.back() == '/')
                m.name.pop_back();
            m.offset = data;
            m.size = length;
            members.push_back(std::move(m));
            if (members.size() > 1000000)
                throw LimitError("the tar archive has more than 1000000 members (limit exceeded)");
            longName.clear();
            paxPath.clear();
            paxSize.reset();
        }
        at = data + (length + kBlock - 1) / kBlock * kBlock;
    }
    return members;
}

} // namespace ckpt
