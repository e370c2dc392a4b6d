// SPDX-License-Identifier: MIT
// Decoding opcode operands, apart from the dispatch: protocol 0's text (Python 2 string reprs,
// raw-unicode-escape, INT / LONG / FLOAT numbers and memo indices exactly as CPython 3.11's C
// unpickler reads them) and LONG1/LONG4 integers of any length.
#include "pickle_machine_impl.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>
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

// STRING's operand is a Python 2 repr: quoted, with backslash escapes, decoded as CPython's
// PyBytes_DecodeEscape does (a trailing backslash and a bad \x escape are errors there too; an
// unknown escape keeps its backslash; an octal escape keeps its low eight bits).
std::string decodeStringRepr(std::string_view s, std::size_t offset)
{
    if (s.size() < 2 || (s.front() != '\'' && s.front() != '"') || s.back() != s.front())
        throw FormatError("STRING opcode operand is not a quoted string" + at(offset));
    s = s.substr(1, s.size() - 2);
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\') {
            out += s[i];
            continue;
        }
        if (i + 1 == s.size())
            throw FormatError("STRING opcode operand ends in a lone backslash" + at(offset));
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
            if (i + 2 >= s.size() || hexValue(s[i + 1]) < 0 || hexValue(s[i + 2]) < 0)
                throw FormatError("bad \\x escape in a STRING opcode operand" + at(offset));
            out += static_cast<char>(hexValue(s[i + 1]) * 16 + hexValue(s[i + 2]));
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

// UNICODE's operand is raw-unicode-escape: \uXXXX and \UXXXXXXXX, other bytes are Latin-1. A
// backslash before any other character stays, and that character is taken as it is (so in
// "\\u0041" the second backslash escapes nothing: CPython reads six characters).
std::string decodeRawUnicodeEscape(std::string_view s, std::size_t offset)
{
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
        const char c = s[i++];
        if (c != '\\') {
            appendUtf8(out, static_cast<uint8_t>(c));
            continue;
        }
        if (i == s.size()) {
            out += '\\';
            break;
        }
        const char e = s[i++];
        if (e != 'u' && e != 'U') {
            out += '\\';
            appendUtf8(out, static_cast<uint8_t>(e));
            continue;
        }
        const std::size_t n = e == 'u' ? 4 : 8;
        const uint32_t cp = parseHex(s, i, n, offset);
        if (cp > 0x10FFFF)
            throw FormatError("code point out of range in a UNICODE opcode" + at(offset));
        appendUtf8(out, cp);
        i += n;
    }
    return out;
}

bool isUtf8(std::string_view s, bool surrogatePass)
{
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned c = p[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t need = 0;
        unsigned lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED && !surrogatePass)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else {
            return false;
        }
        if (i + need >= n)
            return false;
        if (p[i + 1] < lo || p[i + 1] > hi)
            return false;
        for (std::size_t k = 2; k <= need; ++k) {
            if (p[i + k] < 0x80 || p[i + k] > 0xBF)
                return false;
        }
        i += need + 1;
    }
    return true;
}

namespace {

// Py_ISSPACE, and C's isspace in the "C" locale: the same six characters.
bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

// CPython's _PyLong_DigitValue: 0-9, then letters of either case from 10; 37 for the rest.
int digitValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 10;
    return 37;
}

// sys.get_int_max_str_digits()'s default: CPython refuses longer decimal integers in text.
constexpr std::size_t kMaxStrDigits = 4300;

// Digits of a power-of-two base (leading zeros stripped) as decimal text, through base-10^9 limbs.
std::string powerOfTwoDigitsToDecimal(std::string_view digits, int base)
{
    const int perChunk = base == 16 ? 7 : base == 8 ? 9 : 27; // base^perChunk < 2^28
    std::vector<uint32_t> limbs; // little-endian, base 10^9
    for (std::size_t pos = 0; pos < digits.size();) {
        const std::size_t take = std::min<std::size_t>(static_cast<std::size_t>(perChunk), digits.size() - pos);
        uint64_t mul = 1, add = 0;
        for (std::size_t k = 0; k < take; ++k) {
            mul *= static_cast<uint64_t>(base);
            add = add * static_cast<uint64_t>(base) + static_cast<uint64_t>(digitValue(digits[pos + k]));
        }
        pos += take;
        uint64_t carry = add;
        for (auto& limb : limbs) {
            const uint64_t cur = limb * mul + carry;
            limb = static_cast<uint32_t>(cur % 1000000000u);
            carry = cur / 1000000000u;
        }
        while (carry) {
            limbs.push_back(static_cast<uint32_t>(carry % 1000000000u));
            carry /= 1000000000u;
        }
    }
    if (limbs.empty())
        return "0";
    std::string out = std::to_string(limbs.back());
    for (std::size_t i = limbs.size() - 1; i-- > 0;) {
        const std::string part = std::to_string(limbs[i]);
        out += std::string(9 - part.size(), '0') + part;
    }
    return out;
}

// A magnitude in decimal digits (no leading zeros unless "0") and a sign, as a TextInt.
TextInt fromDecimal(bool negative, std::string digits)
{
    TextInt r;
    if (digits == "0")
        return r;
    static constexpr std::string_view kMax = "9223372036854775807";
    const bool fits = digits.size() < kMax.size()
                   || (digits.size() == kMax.size() && (digits <= kMax || (negative && digits == "9223372036854775808")));
    if (fits) {
        const std::string text = (negative ? "-" : "") + digits;
        std::from_chars(text.data(), text.data() + text.size(), r.value);
        return r;
    }
    r.fits = false;
    r.decimal = (negative ? "-" : "") + digits;
    return r;
}

// CPython 3.11's PyLong_FromString(s, NULL, base) for base 0 or 10, on the C string `s` (it ends at
// a NUL): nullopt where CPython raises ValueError.
std::optional<TextInt> pyLongFromString(std::string_view s, int base, std::size_t maxLongBytes, std::size_t offset)
{
    s = s.substr(0, s.find('\0'));
    const std::size_t n = s.size();
    auto ch = [&](std::size_t k) { return k < n ? s[k] : '\0'; };
    std::size_t i = 0;
    while (i < n && isSpace(s[i]))
        ++i;
    bool negative = false;
    if (ch(i) == '+') {
        ++i;
    } else if (ch(i) == '-') {
        negative = true;
        ++i;
    }
    bool errorIfNonzero = false;
    if (base == 0) {
        const char p = ch(i + 1);
        if (ch(i) != '0')
            base = 10;
        else if (p == 'x' || p == 'X')
            base = 16;
        else if (p == 'o' || p == 'O')
            base = 8;
        else if (p == 'b' || p == 'B')
            base = 2;
        else {
            errorIfNonzero = true; // "010": an old octal literal, only valid when it is zero
            base = 10;
        }
    }
    if (ch(i) == '0') {
        const char p = ch(i + 1);
        if ((base == 16 && (p == 'x' || p == 'X')) || (base == 8 && (p == 'o' || p == 'O'))
            || (base == 2 && (p == 'b' || p == 'B'))) {
            i += 2;
            if (ch(i) == '_') // one underscore may follow the prefix
                ++i;
        }
    }
    if (ch(i) == '_')
        return std::nullopt;
    std::string digits;
    char prev = 0;
    for (; i < n; ++i) {
        const char c = s[i];
        if (c == '_') {
            if (prev == '_')
                return std::nullopt;
        } else if (digitValue(c) < base) {
            digits += c;
        } else {
            break;
        }
        prev = c;
    }
    if (prev == '_' || digits.empty())
        return std::nullopt;
    if (base == 10 && digits.size() > kMaxStrDigits)
        return std::nullopt; // "Exceeds the limit (4300 digits) for integer string conversion"
    while (i < n && isSpace(s[i]))
        ++i;
    if (i != n)
        return std::nullopt;
    const std::size_t firstSignificant = std::min(digits.find_first_not_of('0'), digits.size());
    std::string significant = digits.substr(firstSignificant);
    if (significant.empty())
        return TextInt{};
    if (errorIfNonzero)
        return std::nullopt;
    if (base == 10)
        return fromDecimal(negative, std::move(significant));
    const std::size_t bitsPerDigit = base == 16 ? 4 : base == 8 ? 3 : 1;
    if (significant.size() * bitsPerDigit > 8 * maxLongBytes + 8)
        throw LimitError("pickle integer of " + std::to_string(significant.size()) + " digits exceeds the "
                         + std::to_string(maxLongBytes) + "-byte limit (limit exceeded)" + at(offset));
    return fromDecimal(negative, powerOfTwoDigitsToDecimal(significant, base));
}

} // namespace

TextInt parseIntOperand(std::string_view line, std::size_t offset, std::size_t maxLongBytes)
{
    if (line.empty())
        throw FormatError("INT opcode without a number (pickle data was truncated)" + at(offset));
    // strtol(s, &end, 0) over the C string CPython hands it: the line and its newline, or up to a NUL.
    const std::string_view c = line.substr(0, line.find('\0'));
    const std::size_t n = c.size();
    std::size_t i = 0;
    while (i < n && isSpace(c[i]))
        ++i;
    bool negative = false;
    if (i < n && (c[i] == '+' || c[i] == '-')) {
        negative = c[i] == '-';
        ++i;
    }
    int base = 10;
    if (i < n && c[i] == '0') {
        // glibc takes "0x" as a prefix only when a hex digit follows; else "0" is octal's zero.
        if (i + 2 < n && (c[i + 1] == 'x' || c[i + 1] == 'X') && digitValue(c[i + 2]) < 16) {
            base = 16;
            i += 2;
        } else {
            base = 8;
        }
    }
    const std::size_t digitsStart = i;
    uint64_t magnitude = 0;
    bool overflow = false;
    for (; i < n && digitValue(c[i]) < base; ++i) {
        const auto d = static_cast<uint64_t>(digitValue(c[i]));
        if (magnitude > (UINT64_MAX - d) / static_cast<uint64_t>(base))
            overflow = true;
        else
            magnitude = magnitude * static_cast<uint64_t>(base) + d;
    }
    const std::size_t end = i == digitsStart ? 0 : i; // no digits: strtol's end is the start
    if (magnitude > (negative ? uint64_t(1) << 63 : (uint64_t(1) << 63) - 1))
        overflow = true; // ERANGE
    if (!overflow && end == n) { // *end is the newline or a NUL
        TextInt r;
        r.value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
        r.isBool = line.size() == 2 && (r.value == 0 || r.value == 1); // Python 2's "00" / "01"
        return r;
    }
    if (auto r = pyLongFromString(line, 0, maxLongBytes, offset))
        return *r;
    throw FormatError("INT opcode operand '" + std::string(line.substr(0, 40)) + "' is not a number" + at(offset));
}

TextInt parseLongOperand(std::string_view line, std::size_t offset, std::size_t maxLongBytes)
{
    if (line.empty())
        throw FormatError("LONG opcode without a number (pickle data was truncated)" + at(offset));
    if (line.back() == 'L')
        line.remove_suffix(1);
    if (auto r = pyLongFromString(line, 0, maxLongBytes, offset))
        return *r;
    throw FormatError("LONG opcode operand '" + std::string(line.substr(0, 40)) + "' is not a number" + at(offset));
}

double parseFloatOperand(std::string_view line, std::size_t offset)
{
    auto bad = [&]() {
        return FormatError("FLOAT opcode operand '" + std::string(line.substr(0, 40)) + "' is not a number" + at(offset));
    };
    if (line.empty())
        throw FormatError("FLOAT opcode without a number (pickle data was truncated)" + at(offset));
    const std::string_view c = line.substr(0, line.find('\0'));
    const std::size_t n = c.size();
    std::size_t i = 0;
    const bool negative = n > 0 && c[0] == '-';
    if (n > 0 && (c[0] == '+' || c[0] == '-'))
        i = 1;
    const std::size_t mantissa = i;
    std::size_t digits = 0;
    while (i < n && isDigit(c[i]))
        ++i, ++digits;
    const std::size_t intEnd = i;
    if (i < n && c[i] == '.') {
        ++i;
        while (i < n && isDigit(c[i]))
            ++i, ++digits;
    }
    if (digits == 0) { // not a decimal number: "inf", "infinity" or "nan", in any case
        auto word = [&](std::size_t at, std::string_view w) {
            if (n - std::min(at, n) < w.size())
                return false;
            for (std::size_t k = 0; k < w.size(); ++k) {
                if (std::tolower(static_cast<unsigned char>(c[at + k])) != w[k])
                    return false;
            }
            return true;
        };
        double v = 0;
        std::size_t j = mantissa;
        if (word(j, "inf")) {
            j += 3;
            if (word(j, "inity"))
                j += 5;
            v = std::numeric_limits<double>::infinity();
        } else if (word(j, "nan")) {
            j += 3;
            v = std::numeric_limits<double>::quiet_NaN();
        } else {
            throw bad();
        }
        if (j != n)
            throw bad();
        return negative ? -v : v;
    }
    int64_t exponent = 0;
    if (i < n && (c[i] == 'e' || c[i] == 'E')) {
        std::size_t j = i + 1;
        bool expNegative = false;
        if (j < n && (c[j] == '+' || c[j] == '-'))
            expNegative = c[j++] == '-';
        if (j < n && isDigit(c[j])) {
            for (; j < n && isDigit(c[j]); ++j)
                exponent = std::min<int64_t>(exponent * 10 + (c[j] - '0'), 1000000000);
            if (expNegative)
                exponent = -exponent;
            i = j;
        }
    }
    if (i != n) // PyOS_string_to_double stopped before the newline: trailing text, or whitespace
        throw bad();
    double v = 0;
    const auto [p, ec] = std::from_chars(c.data() + mantissa, c.data() + n, v, std::chars_format::general);
    if (ec == std::errc::result_out_of_range) {
        // Overflow is refused (OverflowError); underflow reads as zero. Which one: the decimal
        // exponent of the first significant digit.
        const std::size_t first = c.find_first_not_of("0.", mantissa);
        int64_t magnitude = 0;
        if (first < intEnd)
            magnitude = static_cast<int64_t>(intEnd - first) - 1;
        else
            magnitude = -static_cast<int64_t>(first - intEnd); // first fraction digit: -1, ...
        if (magnitude + exponent >= 0)
            throw FormatError("FLOAT opcode operand '" + std::string(line.substr(0, 40)) + "' is too large for a float"
                              + at(offset));
        v = 0;
    } else if (ec != std::errc() || p != c.data() + n) {
        throw bad();
    }
    return negative ? -v : v;
}

int64_t parseMemoIndex(std::string_view s, std::size_t offset)
{
    if (s.empty())
        throw FormatError("memo opcode without an index (pickle data was truncated)" + at(offset));
    const auto r = pyLongFromString(s, 10, 0, offset);
    if (!r)
        throw FormatError("bad memo index '" + std::string(s.substr(0, 40)) + "'" + at(offset));
    if (!r->fits)
        throw FormatError("memo index '" + std::string(s.substr(0, 40)) + "' is too large" + at(offset));
    return r->value;
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
    // Redundant sign bytes (a 9-byte payload of a small value) do not make a big integer.
    while (b.size() > 1) {
        const auto last = static_cast<uint8_t>(b[b.size() - 1]);
        const bool prevNegative = (static_cast<uint8_t>(b[b.size() - 2]) & 0x80) != 0;
        if (!((last == 0x00 && !prevNegative) || (last == 0xFF && prevNegative)))
            break;
        b = b.first(b.size() - 1);
    }
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
