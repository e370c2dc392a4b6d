// SPDX-License-Identifier: MIT
#include "safetensors_support.h"

#include <algorithm>
#include <vector>

namespace ckpt::detail {
namespace {

constexpr std::size_t kMaxQuoted = 120;     // longest name quoted verbatim in a message
constexpr std::size_t kMaxJsonDetail = 240; // longest parser detail kept in a message

} // namespace

std::string quoteName(std::string_view s)
{
    bool cut = false;
    if (s.size() > kMaxQuoted) {
        std::size_t n = kMaxQuoted;
        while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
            --n;
        s = s.substr(0, n);
        cut = true;
    }
    std::string out;
    out.reserve(s.size() + 8);
    out += '\'';
    for (const char c : s)
        out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) ? '?' : c;
    if (cut)
        out += "...";
    out += '\'';
    return out;
}

std::string offsetsText(uint64_t begin, uint64_t end)
{
    return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

std::size_t findInvalidUtf8(std::string_view s)
{
    const auto at = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    std::size_t i = 0;
    while (i < s.size()) {
        const unsigned char c = at(i);
        if (c == 0)
            return i;
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t len = 0;
        unsigned char lo = 0x80, hi = 0xBF; // allowed range of the second byte
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else {
            return i;
        }
        if (s.size() - i < len)
            return i;
        if (at(i + 1) < lo || at(i + 1) > hi)
            return i;
        for (std::size_t k = 2; k < len; ++k) {
            if ((at(i + k) & 0xC0) != 0x80)
                return i;
        }
        i += len;
    }
    return std::string_view::npos;
}

std::string jsonDetail(const nlohmann::detail::exception& ex)
{
    std::string_view what = ex.what();
    if (what.starts_with("[json.exception.")) {
        if (const auto close = what.find("] "); close != std::string_view::npos)
            what.remove_prefix(close + 2);
    }
    std::string out(what.substr(0, kMaxJsonDetail));
    if (what.size() > kMaxJsonDetail)
        out += "...";
    return out;
}

std::string hexByte(unsigned char c)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    return std::string("0x") + kDigits[c >> 4] + kDigits[c & 0xF];
}

bool isRelativeFileName(std::string_view name)
{
    bool bad = name.empty() || name.front() == '/' || name.front() == '\\'
        || name.find('\0') != std::string_view::npos || (name.size() >= 2 && name[1] == ':');
    std::size_t start = 0;
    while (!bad && start <= name.size()) {
        const std::size_t stop = std::min(name.find_first_of("/\\", start), name.size());
        bad = name.substr(start, stop - start) == "..";
        start = stop + 1;
    }
    return !bad;
}

bool StrictJsonSax::parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex)
{
    fail(std::string(name_.subject) + " is not valid JSON (" + jsonDetail(ex) + ")");
}

void StrictJsonSax::fail(const std::string& message)
{
    throw FormatError(message);
}

void StrictJsonSax::addUniqueKey(std::unordered_set<std::string>& seen, const std::string& key, const std::string& where)
{
    if (!seen.insert(key).second)
        fail(where + " lists " + quoteName(key) + " twice (duplicate keys are not allowed)");
}

void StrictJsonSax::checkUniqueKeys(std::span<const std::string_view> keys, const std::string& where)
{
    // Sorting positions by key puts each key's listings side by side in file order; the first
    // repeat is the smallest position that follows an equal key.
    std::vector<uint32_t> order(keys.size());
    for (uint32_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        const int c = keys[a].compare(keys[b]);
        return c < 0 || (c == 0 && a < b);
    });
    std::size_t repeat = keys.size();
    for (std::size_t i = 1; i < order.size(); ++i) {
        if (keys[order[i]] == keys[order[i - 1]])
            repeat = std::min<std::size_t>(repeat, order[i]);
    }
    if (repeat < keys.size())
        fail(where + " lists " + quoteName(keys[repeat]) + " twice (duplicate keys are not allowed)");
}

void parseStrictJson(std::string_view text, StrictJsonSax& sax)
{
    const JsonTextName& name = sax.name();
    const std::string subject = name.subject;
    if (const auto bad = findInvalidUtf8(text); bad != std::string_view::npos)
        throw FormatError(text[bad] == '\0'
                              ? subject + " holds a NUL byte at " + name.offsetName + " " + std::to_string(bad) + name.nulHint
                              : subject + " is not valid UTF-8 (byte " + hexByte(static_cast<unsigned char>(text[bad]))
                                    + " at " + name.offsetName + " " + std::to_string(bad) + ")");
    try {
        nlohmann::json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json,
                                  /*strict=*/true, /*ignore_comments=*/false);
    } catch (const nlohmann::json::exception& ex) {
        throw FormatError(subject + " is not valid JSON (" + jsonDetail(ex) + ")");
    }
    if (!sax.done())
        throw FormatError(subject + " is not a complete JSON object");
}

} // namespace ckpt::detail
