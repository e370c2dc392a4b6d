// SPDX-License-Identifier: MIT
// The index of a sharded safetensors checkpoint (model.safetensors.index.json), read with a SAX
// parser that keeps only weight_map and metadata and refuses shard names outside the folder.
#include "ckpt/formats/safetensors_format.h"
#include "safetensors_support.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_set>
#include <utility>

namespace ckpt {
namespace {

using Json = nlohmann::json;
using detail::quoteName;

constexpr std::size_t kMaxIndexDepth = 64;  // nesting allowed inside an index.json

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

constexpr detail::JsonTextName kIndexName{"the index", "offset", ""};

class IndexSax final : public detail::StrictJsonSax {
public:
    explicit IndexSax(SafetensorsIndex& out) : StrictJsonSax(kIndexName), out_(out) {}

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
            addUniqueKey(topKeys_, k, "the index");
            topKey_ = std::move(k);
            state_ = State::TopValue;
            return true;
        case State::Map:
            // repeats are found once weight_map closed (checkUniqueKeys)
            key_ = std::move(k);
            state_ = State::MapValue;
            return true;
        case State::Meta:
            addUniqueKey(metaKeys_, k, "the index metadata");
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
        if (state_ == State::Map) {
            std::vector<std::string_view> names;
            names.reserve(out_.weightMap.size());
            for (const auto& entry : out_.weightMap)
                names.push_back(entry.first);
            checkUniqueKeys(names, "weight_map");
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

    bool done() const override { return state_ == State::Done; }
    bool sawWeightMap() const { return sawWeightMap_; }

private:
    enum class State { Start, Top, TopValue, Map, MapValue, Meta, MetaValue, Done };

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
        if (!detail::isRelativeFileName(shard))
            fail("weight_map entry " + quoteName(key_) + " points to " + quoteName(shard)
                 + ", which is not a relative file name inside the checkpoint folder");
    }

    SafetensorsIndex& out_;
    State state_ = State::Start;
    JsonCapture capture_;
    std::string topKey_;
    std::string key_;
    std::unordered_set<std::string> topKeys_, metaKeys_;
    bool sawWeightMap_ = false;
};

} // namespace

SafetensorsIndex parseSafetensorsIndex(std::string_view jsonText, SafetensorsJsonReader reader)
{
    SafetensorsIndex out;
    if (reader == SafetensorsJsonReader::Fast && detail::readIndexFast(jsonText, out))
        return out;
    IndexSax sax(out);
    detail::parseStrictJson(jsonText, sax);
    if (!sax.sawWeightMap())
        throw FormatError("the index has no weight_map");
    return out;
}

} // namespace ckpt
