// SPDX-License-Identifier: MIT
#include "core/safetensors_format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <unordered_set>
#include <utility>

namespace ckpt {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kLengthBytes = 8;
constexpr std::size_t kMaxQuoted = 120;     // longest name quoted verbatim in a message
constexpr std::size_t kMaxJsonDetail = 240; // longest parser detail kept in a message
constexpr std::size_t kMaxIndexDepth = 64;  // nesting allowed inside an index.json

struct DtypeBits {
    std::string_view code;
    int bits;
};

// Rust enum order (increasing alignment), docs/formats.md §6.
constexpr std::array kDtypeBits{
    DtypeBits{"BOOL", 8},        DtypeBits{"F4", 4},           DtypeBits{"F6_E2M3", 6},
    DtypeBits{"F6_E3M2", 6},     DtypeBits{"U8", 8},           DtypeBits{"I8", 8},
    DtypeBits{"F8_E5M2", 8},     DtypeBits{"F8_E4M3", 8},      DtypeBits{"F8_E8M0", 8},
    DtypeBits{"F8_E4M3FNUZ", 8}, DtypeBits{"F8_E5M2FNUZ", 8},  DtypeBits{"I16", 16},
    DtypeBits{"U16", 16},        DtypeBits{"F16", 16},         DtypeBits{"BF16", 16},
    DtypeBits{"I32", 32},        DtypeBits{"U32", 32},         DtypeBits{"F32", 32},
    DtypeBits{"C64", 64},        DtypeBits{"F64", 64},         DtypeBits{"I64", 64},
    DtypeBits{"U64", 64},
};

bool checkedMul(uint64_t a, uint64_t b, uint64_t& out)
{
    if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a)
        return false;
    out = a * b;
    return true;
}

bool checkedAdd(uint64_t a, uint64_t b, uint64_t& out)
{
    if (b > std::numeric_limits<uint64_t>::max() - a)
        return false;
    out = a + b;
    return true;
}

/// A name as it appears in a message: single-quoted, control characters replaced, long names shortened
/// at a UTF-8 character boundary.
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

std::string shapeText(const std::vector<int64_t>& shape)
{
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i)
            out += ',';
        out += std::to_string(shape[i]);
    }
    out += ']';
    return out;
}

std::string offsetsText(uint64_t begin, uint64_t end)
{
    return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

/// Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlongs, no
/// surrogates, nothing above U+10FFFF), or npos. NUL counts as invalid too: JSON allows no raw NUL, and
/// nlohmann's lexer would take one for the end of the input (accepting `{}\0anything`).
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

bool isJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// nlohmann's message without its "[json.exception.parse_error.101] " tag, kept short.
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

// --------------------------------------------------------------------------------------------------------
// Header SAX: builds the tensor list directly (no DOM), rejecting anything outside the schema as soon as
// it is seen, so a hostile header can neither nest deeply nor make us hold a second copy of itself.

class HeaderSax final : public nlohmann::json_sax<Json> {
public:
    explicit HeaderSax(SafetensorsHeader& out) : out_(out) {}

    bool null() override
    {
        if (state_ == State::TopValue && key_ == "__metadata__") {
            // The reference reader deserialises __metadata__ as Option<HashMap>, so null means "none".
            out_.warnings.emplace_back("__metadata__ is null; it is treated as absent");
            state_ = State::Top;
            return true;
        }
        unexpected("null");
    }
    bool boolean(bool v) override { unexpected(v ? "true" : "false"); }
    bool number_integer(number_integer_t v) override { unexpected(v == 0 ? "-0" : std::to_string(v)); }
    bool number_float(number_float_t, const string_t& text) override { unexpected(text); }
    bool binary(binary_t&) override { unexpected("binary data"); }

    bool number_unsigned(number_unsigned_t v) override
    {
        if (state_ == State::Shape) {
            if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                fail(tensorPrefix() + "shape dimension " + std::to_string(v) + " is too large");
            tensor().shape.push_back(static_cast<int64_t>(v));
            return true;
        }
        if (state_ == State::Offsets) {
            if (offsetCount_ >= 2)
                fail(tensorPrefix() + "data_offsets must be two non-negative integers (found more than two)");
            offsets_[offsetCount_++] = v;
            return true;
        }
        unexpected(std::to_string(v));
    }

    bool string(string_t& v) override
    {
        if (state_ == State::TensorValue && field_ == kDtype) {
            const int bits = safetensorsDtypeBits(v);
            if (bits == 0)
                fail(tensorPrefix() + "unknown dtype " + quoteName(v));
            tensor().dtypeCode = v;
            tensor().dtype = dtypeFromSafetensors(v);
            state_ = State::Tensor;
            return true;
        }
        if (state_ == State::MetaValue) {
            out_.metadata.emplace_back(std::move(metaKey_), std::move(v));
            state_ = State::Meta;
            return true;
        }
        unexpected("a string");
    }

    bool start_object(std::size_t) override
    {
        switch (state_) {
        case State::Start:
            state_ = State::Top;
            return true;
        case State::TopValue:
            if (key_ == "__metadata__") {
                state_ = State::Meta;
            } else {
                out_.tensors.emplace_back();
                tensor().name = key_;
                fields_ = 0;
                state_ = State::Tensor;
            }
            return true;
        default:
            unexpected("an object");
        }
    }

    bool key(string_t& k) override
    {
        switch (state_) {
        case State::Top:
            if (!topKeys_.insert(k).second)
                fail("the header lists " + quoteName(k) + " twice (duplicate keys are not allowed)");
            key_ = std::move(k);
            state_ = State::TopValue;
            return true;
        case State::Meta:
            if (!metaKeys_.insert(k).second)
                fail("__metadata__ lists " + quoteName(k) + " twice (duplicate keys are not allowed)");
            metaKey_ = std::move(k);
            state_ = State::MetaValue;
            return true;
        case State::Tensor: {
            unsigned bit = 0;
            if (k == "dtype")
                bit = kDtype;
            else if (k == "shape")
                bit = kShape;
            else if (k == "data_offsets")
                bit = kOffsets;
            else
                fail("tensor " + quoteName(key_) + " has an unexpected field " + quoteName(k)
                     + " (only dtype, shape and data_offsets are allowed)");
            if (fields_ & bit)
                fail("tensor " + quoteName(key_) + " has a duplicate field " + quoteName(k));
            fields_ |= bit;
            field_ = bit;
            state_ = State::TensorValue;
            return true;
        }
        default:
            fail("the header is malformed near key " + quoteName(k));
        }
    }

    bool end_object() override
    {
        switch (state_) {
        case State::Top:
            state_ = State::Done;
            return true;
        case State::Meta:
            metaKeys_.clear();
            state_ = State::Top;
            return true;
        case State::Tensor:
            for (const auto& [bit, name] : {std::pair{kDtype, "dtype"}, std::pair{kShape, "shape"},
                                            std::pair{kOffsets, "data_offsets"}}) {
                if (!(fields_ & bit))
                    fail("tensor " + quoteName(key_) + " has no " + name);
            }
            state_ = State::Top;
            return true;
        default:
            fail("the header is malformed (unexpected end of object)");
        }
    }

    bool start_array(std::size_t) override
    {
        if (state_ == State::TensorValue && field_ == kShape) {
            state_ = State::Shape;
            return true;
        }
        if (state_ == State::TensorValue && field_ == kOffsets) {
            offsetCount_ = 0;
            state_ = State::Offsets;
            return true;
        }
        unexpected("an array");
    }

    bool end_array() override
    {
        if (state_ == State::Shape) {
            state_ = State::Tensor;
            return true;
        }
        if (state_ == State::Offsets) {
            if (offsetCount_ != 2)
                fail(tensorPrefix() + "data_offsets must be two non-negative integers (found "
                     + std::to_string(offsetCount_) + (offsetCount_ == 1 ? " value)" : " values)"));
            if (offsets_[1] < offsets_[0])
                fail(tensorPrefix() + "data_offsets " + offsetsText(offsets_[0], offsets_[1])
                     + " end before they begin");
            tensor().begin = offsets_[0]; // relative to the data section until validated
            tensor().end = offsets_[1];
            state_ = State::Tensor;
            return true;
        }
        fail("the header is malformed (unexpected end of array)");
    }

    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override
    {
        fail("header is not valid JSON (" + jsonDetail(ex) + ")");
    }

    bool done() const { return state_ == State::Done; }

private:
    enum class State { Start, Top, TopValue, Meta, MetaValue, Tensor, TensorValue, Shape, Offsets, Done };
    static constexpr unsigned kDtype = 1, kShape = 2, kOffsets = 4;

    [[noreturn]] static void fail(const std::string& message) { throw FormatError(message); }

    SafetensorsTensor& tensor() { return out_.tensors.back(); }
    std::string tensorPrefix() const { return "tensor " + quoteName(key_) + ": "; }

    /// A value of the wrong kind at the current position; `found` describes it.
    [[noreturn]] void unexpected(const std::string& found) const
    {
        const std::string tail = " (found " + found + ")";
        switch (state_) {
        case State::Start:
            fail("header is not a JSON object" + tail);
        case State::TopValue:
            if (key_ == "__metadata__")
                fail("__metadata__ must be an object mapping strings to strings" + tail);
            fail("entry " + quoteName(key_) + " must be an object with dtype, shape and data_offsets" + tail);
        case State::MetaValue:
            fail("__metadata__ value for " + quoteName(metaKey_) + " must be a string" + tail);
        case State::TensorValue:
            if (field_ == kDtype)
                fail(tensorPrefix() + "dtype must be a string" + tail);
            [[fallthrough]];
        case State::Shape:
            if (field_ == kShape)
                fail(tensorPrefix() + "shape must be an array of non-negative integers" + tail);
            [[fallthrough]];
        case State::Offsets:
            fail(tensorPrefix() + "data_offsets must be two non-negative integers" + tail);
        default:
            fail("the header is malformed" + tail);
        }
    }

    SafetensorsHeader& out_;
    State state_ = State::Start;
    std::string key_;     // current top-level key (tensor name)
    std::string metaKey_; // current __metadata__ key
    std::unordered_set<std::string> topKeys_;
    std::unordered_set<std::string> metaKeys_;
    unsigned fields_ = 0; // fields seen in the current tensor entry
    unsigned field_ = 0;  // the field whose value comes next
    std::array<uint64_t, 2> offsets_{};
    std::size_t offsetCount_ = 0;
};

// --------------------------------------------------------------------------------------------------------
// Index SAX: {"metadata": {...}, "weight_map": {"tensor": "shard", ...}}; other top-level keys are skipped.

/// Re-serialises a nested JSON value compactly while its SAX events stream past (also used to skip one).
class JsonCapture {
public:
    bool active() const { return !stack_.empty(); }
    void open(char bracket)
    {
        separate();
        if (stack_.size() >= kMaxIndexDepth)
            throw LimitError("the index nests deeper than " + std::to_string(kMaxIndexDepth) + " levels");
        text_ += bracket;
        stack_.push_back(Level{});
    }
    /// Returns true when this closed the outermost container.
    bool close(char bracket)
    {
        text_ += bracket;
        stack_.pop_back();
        return stack_.empty();
    }
    void key(const std::string& k)
    {
        separate();
        text_ += Json(k).dump();
        text_ += ':';
        stack_.back().afterKey = true;
    }
    void value(const std::string& jsonText)
    {
        separate();
        text_ += jsonText;
    }
    std::string take() { return std::exchange(text_, {}); }

private:
    struct Level {
        bool first = true;
        bool afterKey = false;
    };
    void separate()
    {
        if (stack_.empty())
            return;
        Level& level = stack_.back();
        if (level.afterKey) {
            level.afterKey = false;
            return;
        }
        if (!level.first)
            text_ += ',';
        level.first = false;
    }
    std::vector<Level> stack_;
    std::string text_;
};

class IndexSax final : public nlohmann::json_sax<Json> {
public:
    explicit IndexSax(SafetensorsIndex& out) : out_(out) {}

    bool null() override { return scalar("null", "null", "null"); }
    bool boolean(bool v) override { return scalar(v ? "true" : "false", v ? "true" : "false", "a boolean"); }
    bool number_integer(number_integer_t v) override
    {
        return scalar(std::to_string(v), std::to_string(v), "a number");
    }
    bool number_unsigned(number_unsigned_t v) override
    {
        return scalar(std::to_string(v), std::to_string(v), "a number");
    }
    bool number_float(number_float_t, const string_t& text) override { return scalar(text, text, "a number"); }
    bool binary(binary_t&) override { fail("the index holds binary data"); }

    bool string(string_t& v) override
    {
        if (!capture_.active() && state_ == State::MapValue) {
            checkShardName(v);
            out_.weightMap.emplace_back(std::move(key_), std::move(v));
            state_ = State::Map;
            return true;
        }
        if (!capture_.active() && state_ == State::MetaValue) {
            out_.metadata.emplace_back(std::move(key_), std::move(v));
            state_ = State::Meta;
            return true;
        }
        return scalar(Json(v).dump(), {}, "a string");
    }

    bool start_object(std::size_t) override
    {
        if (!capture_.active()) {
            switch (state_) {
            case State::Start:
                state_ = State::Top;
                return true;
            case State::TopValue:
                if (topKey_ == "weight_map") {
                    sawWeightMap_ = true;
                    state_ = State::Map;
                    return true;
                }
                if (topKey_ == "metadata") {
                    state_ = State::Meta;
                    return true;
                }
                break;
            case State::MetaValue:
                break;
            default:
                wrongType("an object");
            }
        }
        capture_.open('{');
        return true;
    }

    bool start_array(std::size_t) override
    {
        if (!capture_.active() && state_ != State::MetaValue
            && !(state_ == State::TopValue && topKey_ != "weight_map" && topKey_ != "metadata"))
            wrongType("an array");
        capture_.open('[');
        return true;
    }

    bool key(string_t& k) override
    {
        if (capture_.active()) {
            capture_.key(k);
            return true;
        }
        switch (state_) {
        case State::Top:
            if (!topKeys_.insert(k).second)
                fail("the index lists " + quoteName(k) + " twice (duplicate keys are not allowed)");
            topKey_ = std::move(k);
            state_ = State::TopValue;
            return true;
        case State::Map:
            if (!mapKeys_.insert(k).second)
                fail("weight_map lists " + quoteName(k) + " twice (duplicate keys are not allowed)");
            key_ = std::move(k);
            state_ = State::MapValue;
            return true;
        case State::Meta:
            if (!metaKeys_.insert(k).second)
                fail("the index metadata lists " + quoteName(k) + " twice (duplicate keys are not allowed)");
            key_ = std::move(k);
            state_ = State::MetaValue;
            return true;
        default:
            fail("the index is malformed near key " + quoteName(k));
        }
    }

    bool end_object() override
    {
        if (capture_.active()) {
            if (capture_.close('}'))
                finishCapture();
            return true;
        }
        state_ = state_ == State::Top ? State::Done : State::Top; // Map and Meta return to Top
        return true;
    }

    bool end_array() override
    {
        if (capture_.close(']'))
            finishCapture();
        return true;
    }

    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override
    {
        fail("the index is not valid JSON (" + jsonDetail(ex) + ")");
    }

    bool done() const { return state_ == State::Done; }
    bool sawWeightMap() const { return sawWeightMap_; }

private:
    enum class State { Start, Top, TopValue, Map, MapValue, Meta, MetaValue, Done };

    [[noreturn]] static void fail(const std::string& message) { throw FormatError(message); }

    /// A nested value ended: it was a metadata value (keep its JSON text) or an unknown key's (drop it).
    void finishCapture()
    {
        std::string text = capture_.take();
        if (state_ == State::MetaValue) {
            out_.metadata.emplace_back(std::move(key_), std::move(text));
            state_ = State::Meta;
        } else {
            state_ = State::Top;
        }
    }

    /// `jsonText` goes into captured containers, `plain` into metadata, `kind` into messages.
    bool scalar(const std::string& jsonText, const std::string& plain, const char* kind)
    {
        if (capture_.active()) {
            capture_.value(jsonText);
            return true;
        }
        if (state_ == State::MetaValue) {
            out_.metadata.emplace_back(std::move(key_), plain);
            state_ = State::Meta;
            return true;
        }
        if (state_ == State::TopValue && topKey_ != "weight_map"
            && (topKey_ != "metadata" || std::string_view(kind) == "null")) {
            state_ = State::Top; // an unknown key's value, or "metadata": null
            return true;
        }
        wrongType(kind);
    }

    [[noreturn]] void wrongType(const std::string& found) const
    {
        const std::string tail = " (found " + found + ")";
        switch (state_) {
        case State::Start:
            fail("the index is not a JSON object" + tail);
        case State::TopValue:
            fail("the index " + topKey_ + " must be an object" + tail);
        case State::MapValue:
            fail("weight_map entry " + quoteName(key_) + " must be the name of a shard file" + tail);
        default:
            fail("the index is malformed" + tail);
        }
    }

    void checkShardName(const std::string& shard) const
    {
        bool bad = shard.empty() || shard.front() == '/' || shard.front() == '\\'
            || shard.find('\0') != std::string::npos || (shard.size() >= 2 && shard[1] == ':');
        std::size_t start = 0;
        while (!bad && start <= shard.size()) {
            const std::size_t stop = std::min(shard.find_first_of("/\\", start), shard.size());
            bad = std::string_view(shard).substr(start, stop - start) == "..";
            start = stop + 1;
        }
        if (bad)
            fail("weight_map entry " + quoteName(key_) + " points to " + quoteName(shard)
                 + ", which is not a relative file name inside the checkpoint folder");
    }

    SafetensorsIndex& out_;
    State state_ = State::Start;
    JsonCapture capture_;
    std::string topKey_;
    std::string key_;
    std::unordered_set<std::string> topKeys_, mapKeys_, metaKeys_;
    bool sawWeightMap_ = false;
};

} // namespace

int safetensorsDtypeBits(std::string_view code)
{
    for (const auto& row : kDtypeBits) {
        if (row.code == code)
            return row.bits;
    }
    return 0;
}

SafetensorsHeader parseSafetensors(std::span<const std::byte> file)
{
    const uint64_t fileSize = file.size();
    if (fileSize < kLengthBytes)
        throw FormatError("the file has " + std::to_string(fileSize)
                          + " bytes, too few for a safetensors file (it starts with an 8-byte header length)");

    uint64_t n = 0;
    for (std::size_t i = 0; i < kLengthBytes; ++i)
        n |= static_cast<uint64_t>(std::to_integer<unsigned>(file[i])) << (8 * i);

    if (n > fileSize - kLengthBytes)
        throw FormatError("header length " + std::to_string(n) + " exceeds the file size " + std::to_string(fileSize));
    if (n > kSafetensorsMaxHeaderSize)
        throw LimitError("header length " + std::to_string(n) + " exceeds the limit of "
                         + std::to_string(kSafetensorsMaxHeaderSize) + " bytes");

    SafetensorsHeader out;
    out.headerSize = n;

    const std::string_view text(reinterpret_cast<const char*>(file.data()) + kLengthBytes,
                                static_cast<std::size_t>(n));
    if (const auto bad = findInvalidUtf8(text); bad != std::string_view::npos)
        throw FormatError(text[bad] == '\0' ? "header holds a NUL byte at header offset " + std::to_string(bad)
                                                  + " (JSON allows none; pad with spaces)"
                                            : "header is not valid UTF-8 (byte "
                                                  + hexByte(static_cast<unsigned char>(text[bad]))
                                                  + " at header offset " + std::to_string(bad) + ")");
    if (!text.empty() && isJsonSpace(text.front()))
        out.warnings.emplace_back("the header starts with whitespace; safetensors readers older than "
                                  "April 2026 (PR #686) reject such files");

    HeaderSax sax(out);
    try {
        Json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json,
                        /*strict=*/true, /*ignore_comments=*/false);
    } catch (const nlohmann::json::exception& ex) {
        throw FormatError("header is not valid JSON (" + jsonDetail(ex) + ")");
    }
    if (!sax.done())
        throw FormatError("header is not a complete JSON object");

    // Metadata::validate: in offset order the tensors must tile the data section exactly.
    const uint64_t dataStart = kLengthBytes + n;
    const uint64_t dataSize = fileSize - dataStart;
    auto& tensors = out.tensors;
    std::vector<std::size_t> order(tensors.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::pair(tensors[a].begin, tensors[a].end) < std::pair(tensors[b].begin, tensors[b].end);
    });

    uint64_t expected = 0;
    const SafetensorsTensor* previous = nullptr;
    std::size_t misaligned = 0;
    const SafetensorsTensor* firstMisaligned = nullptr;
    for (const std::size_t index : order) {
        const SafetensorsTensor& t = tensors[index];
        const std::string prefix = "tensor " + quoteName(t.name) + ": ";
        if (t.begin != expected) {
            if (!previous)
                throw FormatError(prefix + "data_offsets " + offsetsText(t.begin, t.end)
                                  + " leave a hole at the start of the data, which must begin at offset 0");
            throw FormatError(prefix + "data_offsets " + offsetsText(t.begin, t.end)
                              + (t.begin > expected ? " leave a hole after tensor " : " overlap tensor ")
                              + quoteName(previous->name) + ", which ends at " + std::to_string(expected));
        }

        const int bits = safetensorsDtypeBits(t.dtypeCode);
        // The reference multiplies left to right in usize. We also require the product of the non-zero
        // dimensions to fit int64 (a superset of its rejections), so that element counts and contiguous
        // strides computed from any shape we return never overflow.
        uint64_t nonZero = 1;
        bool empty = false;
        for (const int64_t dim : t.shape) {
            if (dim == 0) {
                empty = true;
            } else if (!checkedMul(nonZero, static_cast<uint64_t>(dim), nonZero)
                       || nonZero > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
                throw FormatError(prefix + "shape " + shapeText(t.shape) + " has too many elements to count");
            }
        }
        const uint64_t elements = empty ? 0 : nonZero;
        uint64_t totalBits = 0;
        if (!checkedMul(elements, static_cast<uint64_t>(bits), totalBits))
            throw FormatError(prefix + "shape " + shapeText(t.shape) + " of " + t.dtypeCode
                              + " has too many bytes to count");
        if (totalBits % 8 != 0)
            throw FormatError(prefix + "shape " + shapeText(t.shape) + " of " + t.dtypeCode + " holds "
                              + std::to_string(totalBits) + " bits, not a whole number of bytes");
        const uint64_t bytes = totalBits / 8;
        if (t.end - t.begin != bytes)
            throw FormatError(prefix + "data_offsets " + offsetsText(t.begin, t.end) + " hold "
                              + std::to_string(t.end - t.begin) + " bytes but shape " + shapeText(t.shape)
                              + " of " + t.dtypeCode + " needs " + std::to_string(bytes));

        if (bits >= 16 && t.end > t.begin && t.begin % static_cast<uint64_t>(bits / 8) != 0 && ++misaligned == 1)
            firstMisaligned = &t;
        expected = t.end;
        previous = &t;
    }

    if (expected != dataSize) {
        uint64_t dataEnd = 0;
        const bool fits = checkedAdd(dataStart, expected, dataEnd);
        throw FormatError("data ends at " + (fits ? std::to_string(dataEnd) : "offset " + std::to_string(expected)
                                                                                  + " after the header")
                          + " but the file has " + std::to_string(fileSize) + " bytes"
                          + (expected < dataSize ? " (trailing bytes)" : " (truncated)"));
    }

    // Every offset is now known to lie inside the file: make them absolute.
    for (auto& t : tensors) {
        t.begin += dataStart;
        t.end += dataStart;
    }

    if (n % 8 != 0)
        out.warnings.push_back("header length " + std::to_string(n)
                               + " is not a multiple of 8, so the tensor data is not 8-byte aligned in the file"
                                 " (written before safetensors 0.3.1 or by another writer)");
    if (misaligned)
        out.warnings.push_back(std::to_string(misaligned) + (misaligned == 1 ? " tensor starts" : " tensors start")
                               + " at an offset that is not a multiple of its element size (first: "
                               + quoteName(firstMisaligned->name) + ", " + firstMisaligned->dtypeCode + " at data offset "
                               + std::to_string(firstMisaligned->begin - dataStart) + ")");
    return out;
}

SafetensorsIndex parseSafetensorsIndex(std::string_view jsonText)
{
    if (const auto bad = findInvalidUtf8(jsonText); bad != std::string_view::npos)
        throw FormatError(jsonText[bad] == '\0'
                              ? "the index holds a NUL byte at offset " + std::to_string(bad)
                              : "the index is not valid UTF-8 (byte "
                                    + hexByte(static_cast<unsigned char>(jsonText[bad])) + " at offset "
                                    + std::to_string(bad) + ")");
    SafetensorsIndex out;
    IndexSax sax(out);
    try {
        Json::sax_parse(jsonText.begin(), jsonText.end(), &sax, nlohmann::detail::input_format_t::json,
                        /*strict=*/true, /*ignore_comments=*/false);
    } catch (const nlohmann::json::exception& ex) {
        throw FormatError("the index is not valid JSON (" + jsonDetail(ex) + ")");
    }
    if (!sax.done())
        throw FormatError("the index is not a complete JSON object");
    if (!sax.sawWeightMap())
        throw FormatError("the index has no weight_map");
    return out;
}

} // namespace ckpt
