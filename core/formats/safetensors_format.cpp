// SPDX-License-Identifier: MIT
// parseSafetensors: the 8-byte header length, the UTF-8 JSON header read by a SAX parser that
// refuses anything outside the schema, then the data layout check (safetensors_layout.cpp).
// The sharded index is safetensors_index.cpp's.
#include "ckpt/formats/safetensors_format.h"
#include "safetensors_support.h"

#include <nlohmann/json.hpp>

#include <array>
#include <limits>
#include <unordered_set>
#include <utility>

namespace ckpt {
namespace {

using Json = nlohmann::json;
using detail::kLengthBytes;
using detail::offsetsText;
using detail::quoteName;

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

bool isJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// --------------------------------------------------------------------------------------------------------
// Header SAX: builds the tensor list directly (no DOM), rejecting anything outside the schema as soon as
// it is seen, so a hostile header can neither nest deeply nor make us hold a second copy of itself.

constexpr detail::JsonTextName kHeaderName{"header", "header offset", " (JSON allows none; pad with spaces)"};

class HeaderSax final : public detail::StrictJsonSax {
public:
    explicit HeaderSax(SafetensorsHeader& out) : StrictJsonSax(kHeaderName), out_(out) {}

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
            // Tensor names are checked for repeats once the header closed (checkUniqueKeys).
            if (k == "__metadata__") {
                if (sawMetadata_)
                    fail("the header lists " + quoteName(k) + " twice (duplicate keys are not allowed)");
                sawMetadata_ = true;
            }
            key_ = std::move(k);
            state_ = State::TopValue;
            return true;
        case State::Meta:
            addUniqueKey(metaKeys_, k, "__metadata__");
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
        case State::Top: {
            std::vector<std::string_view> names;
            names.reserve(out_.tensors.size());
            for (const auto& t : out_.tensors)
                names.push_back(t.name);
            checkUniqueKeys(names, "the header");
            state_ = State::Done;
            return true;
        }
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

    bool done() const override { return state_ == State::Done; }

private:
    enum class State { Start, Top, TopValue, Meta, MetaValue, Tensor, TensorValue, Shape, Offsets, Done };
    static constexpr unsigned kDtype = 1, kShape = 2, kOffsets = 4;

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
    bool sawMetadata_ = false;
    std::unordered_set<std::string> metaKeys_;
    unsigned fields_ = 0; // fields seen in the current tensor entry
    unsigned field_ = 0;  // the field whose value comes next
    std::array<uint64_t, 2> offsets_{};
    std::size_t offsetCount_ = 0;
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

    const std::string_view text(reinterpret_cast<const char*>(file.data()) + kLengthBytes,
                                static_cast<std::size_t>(n));
    SafetensorsHeader out = parseSafetensorsHeaderJson(text);
    out.headerSize = n;
    detail::checkTensorLayout(out, fileSize);
    return out;
}

SafetensorsHeader parseSafetensorsHeaderJson(std::string_view text, SafetensorsJsonReader reader)
{
    SafetensorsHeader out;
    out.headerSize = text.size();
    if (!text.empty() && isJsonSpace(text.front()))
        out.warnings.emplace_back("the header starts with whitespace; safetensors readers older than "
                                  "April 2026 (PR #686) reject such files");
    if (reader == SafetensorsJsonReader::Fast && detail::readHeaderFast(text, out))
        return out;
    HeaderSax sax(out);
    detail::parseStrictJson(text, sax); // checks the UTF-8 first
    return out;
}

} // namespace ckpt
