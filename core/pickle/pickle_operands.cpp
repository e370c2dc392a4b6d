// SPDX-License-Identifier: MIT
// Decoding opcode operands, apart from the dispatch: protocol 0's text (Python 2 string reprs,
// raw-unicode-escape, decimal numbers, memo indices) and LONG1/LONG4 integers of any length.
#include "pickle_machine_impl.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace ckpt {
namespace detail {
namespace {

void appendUtf8(std::string& out, uint32_t cp)
{
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

uint32_t parseHex(std::string_view s, std::size_t pos, std::size_t n, std::size_t offset)
{
    if (pos + n > s.size())
        throw FormatError("truncated escape sequence in a protocol-0 string" + at(offset));
    uint32_t v = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const int h = hexValue(s[pos + i]);
        if (h < 0)
            throw FormatError("bad hex escape in a protocol-0 string" + at(offset));
        v = v * 16 + static_cast<uint32_t>(h);
    }
    return v;
}

} // namespace

// STRING's operand is a Python 2 repr: quoted, with backslash escapes.
std::string decodeStringRepr(std::string_view s, std::size_t offset)
{
    if (s.size() < 2 || (s.front() != '\'' && s.front() != '"') || s.back() != s.front())
        throw FormatError("STRING opcode operand is not a quoted string" + at(offset));
    s = s.substr(1, s.size() - 2);
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\' || i + 1 == s.size()) {
            out += s[i];
            continue;
        }
        const char e = s[++i];
        switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'x':
            out += static_cast<char>(parseHex(s, i + 1, 2, offset));
            i += 2;
            break;
        default:
            if (e >= '0' && e <= '7') {
                int v = e - '0';
                for (int k = 0; k < 2 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7'; ++k)
                    v = v * 8 + (s[++i] - '0');
                out += static_cast<char>(v & 0xFF);
            } else {
                out += '\\';
                out += e;
            }
        }
    }
    return out;
}

// UNICODE's operand is raw-unicode-escape: \uXXXX and \UXXXXXXXX, other bytes are Latin-1.
std::string decodeRawUnicodeEscape(std::string_view s, std::size_t offset)
{
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == 'u' || s[i + 1] == 'U')) {
            const std::size_t n = s[i + 1] == 'u' ? 4 : 8;
            const uint32_t cp = parseHex(s, i + 2, n, offset);
            if (cp > 0x10FFFF)
                throw FormatError("code point out of range in a UNICODE opcode" + at(offset));
            appendUtf8(out, cp);
            i += 1 + n;
        } else {
            appendUtf8(out, static_cast<uint8_t>(s[i]));
        }
    }
    return out;
}

bool isDecimal(std::string_view s)
{
    if (!s.empty() && (s.front() == '-' || s.front() == '+'))
        s.remove_prefix(1);
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

uint64_t parseIndex(std::string_view s, std::size_t offset)
{
    uint64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
        throw FormatError("bad memo index '" + std::string(s.substr(0, 40)) + "'" + at(offset));
    return v;
}

} // namespace detail

std::string littleEndianToDecimal(Bytes bytes)
{
    if (bytes.empty())
        return "0";
    std::vector<uint8_t> mag(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i)
        mag[i] = static_cast<uint8_t>(bytes[i]);
    const bool negative = (mag.back() & 0x80) != 0;
    if (negative) { // two's complement -> magnitude
        bool carry = true;
        for (auto& b : mag) {
            b = static_cast<uint8_t>(~b);
            if (carry) {
                carry = (++b == 0);
            }
        }
    }
    // Repeated division by 10^9 over the little-endian magnitude.
    std::vector<uint32_t> chunks;
    while (std::any_of(mag.begin(), mag.end(), [](uint8_t b) { return b != 0; })) {
        uint64_t rem = 0;
        for (std::size_t i = mag.size(); i-- > 0;) {
            const uint64_t cur = (rem << 8) | mag[i];
            mag[i] = static_cast<uint8_t>(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        chunks.push_back(static_cast<uint32_t>(rem));
    }
    if (chunks.empty())
        return "0";
    std::string out = negative ? "-" : "";
    out += std::to_string(chunks.back());
    for (std::size_t i = chunks.size() - 1; i-- > 0;) {
        const std::string part = std::to_string(chunks[i]);
        out += std::string(9 - part.size(), '0') + part;
    }
    return out;
}

NodeId PickleMachine::makeLong(Bytes b)
{
    if (b.size() <= 8) {
        uint64_t u = 0;
        for (std::size_t i = 0; i < b.size(); ++i)
            u |= static_cast<uint64_t>(static_cast<uint8_t>(b[i])) << (8 * i);
        const bool negative = !b.empty() && (static_cast<uint8_t>(b.back()) & 0x80);
        if (negative && b.size() < 8)
            u |= ~uint64_t(0) << (8 * b.size());
        // A positive 8-byte payload with the top bit clear fits int64; top bit set means it is
        // negative in two's complement, which also fits.
        if (b.size() < 8 || negative || (u >> 63) == 0)
            return m_graph.addInt(static_cast<int64_t>(u));
    }
    if (b.size() > m_limits.maxLongBytes)
        throw LimitError("pickle integer of " + std::to_string(b.size()) + " bytes exceeds the "
                         + std::to_string(m_limits.maxLongBytes) + "-byte limit (limit exceeded)");
    return makeText(Kind::BigInt, littleEndianToDecimal(b));
}

} // namespace ckpt
