// SPDX-License-Identifier: MIT
// The fast path of the safetensors header and index readers: simdjson's DOM parser validates the
// whole text (syntax, UTF-8, escapes, control characters) at several hundred MB/s, then the schema is
// read off the tree. nlohmann's SAX lexer, which the strict readers use, builds every token one
// character at a time: on a 90k-tensor frontier model its two passes (163 headers and the index) were
// a third of a listing (issue 16).
//
// The contract that keeps one behaviour: a fast reader returns true only for a text the strict
// reader (safetensors_format.cpp, safetensors_index.cpp) would accept, with the same result; for
// anything it does not take, valid or not, it returns false and the strict reader reads the text
// again and words the verdict. Differences between the two parsers are therefore sent to the strict
// reader, never decided here:
//   - simdjson reads "-0" as the integer 0, which the strict header reader refuses: a header that
//     holds "-0" anywhere goes to the strict reader;
//   - numbers that are not integers, nested values the strict index reader would re-serialise, and
//     a null __metadata__ (the strict reader warns about it) go there too.
// tests/fuzz/fuzz_safetensors.cpp runs both readers on every input and requires the same outcome.
#include "safetensors_support.h"

#include <simdjson.h>

#include <algorithm>
#include <limits>
#include <string>

namespace ckpt::detail {
namespace {

namespace dom = simdjson::dom;

/// True when `keys` has no repeat (small objects: metadata, the index's top level).
bool allDifferent(std::vector<std::string_view> keys)
{
    std::sort(keys.begin(), keys.end());
    return std::adjacent_find(keys.begin(), keys.end()) == keys.end();
}

/// One tensor entry {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}: exactly these three
/// fields, each once; offsets stay relative to the data section (checkTensorLayout makes them absolute).
bool readTensorEntry(dom::object entry, SafetensorsTensor& t)
{
    constexpr unsigned kDtype = 1, kShape = 2, kOffsets = 4;
    unsigned fields = 0;
    for (const dom::key_value_pair field : entry) {
        unsigned bit = 0;
        if (field.key == "dtype") {
            bit = kDtype;
            std::string_view code;
            if (field.value.get(code) != simdjson::SUCCESS || safetensorsDtypeBits(code) == 0)
                return false;
            t.dtypeCode = code;
            t.dtype = dtypeFromSafetensors(code);
        } else if (field.key == "shape") {
            bit = kShape;
            dom::array dims;
            if (field.value.get(dims) != simdjson::SUCCESS)
                return false;
            for (const dom::element d : dims) {
                uint64_t v = 0;
                if (d.get(v) != simdjson::SUCCESS || v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                    return false;
                t.shape.push_back(static_cast<int64_t>(v));
            }
        } else if (field.key == "data_offsets") {
            bit = kOffsets;
            dom::array offsets;
            if (field.value.get(offsets) != simdjson::SUCCESS || offsets.size() != 2)
                return false;
            if (offsets.at(0).get(t.begin) != simdjson::SUCCESS || offsets.at(1).get(t.end) != simdjson::SUCCESS
                || t.end < t.begin)
                return false;
        } else {
            return false;
        }
        if (fields & bit)
            return false;
        fields |= bit;
    }
    return fields == (kDtype | kShape | kOffsets);
}

/// __metadata__: an object of strings, no key twice.
bool readHeaderMetadata(dom::element value, SafetensorsHeader& out)
{
    dom::object meta;
    if (value.get(meta) != simdjson::SUCCESS) // null as well: the strict reader warns about it
        return false;
    std::vector<std::string_view> keys;
    for (const dom::key_value_pair kv : meta) {
        std::string_view text;
        if (kv.value.get(text) != simdjson::SUCCESS)
            return false;
        keys.push_back(kv.key);
        out.metadata.emplace_back(kv.key, text);
    }
    return allDifferent(std::move(keys));
}

bool readHeaderTree(std::string_view text, SafetensorsHeader& out)
{
    if (text.find("-0") != std::string_view::npos)
        return false;
    dom::parser parser;
    dom::object top;
    if (parser.parse(text.data(), text.size()).get(top) != simdjson::SUCCESS)
        return false;
    bool sawMetadata = false;
    out.tensors.reserve(top.size()); // grown by doubling, every copy's pages were faulted in anew
    for (const dom::key_value_pair kv : top) {
        if (kv.key == "__metadata__") {
            if (sawMetadata || !readHeaderMetadata(kv.value, out))
                return false;
            sawMetadata = true;
            continue;
        }
        dom::object entry;
        if (kv.value.get(entry) != simdjson::SUCCESS)
            return false;
        SafetensorsTensor& t = out.tensors.emplace_back();
        t.name = kv.key;
        if (!readTensorEntry(entry, t))
            return false;
    }
    std::vector<std::string_view> names;
    names.reserve(out.tensors.size());
    for (const auto& t : out.tensors)
        names.push_back(t.name);
    StrictJsonSax::checkUniqueKeys(names, "the header"); // the strict reader's verdict and words
    return true;
}

/// A metadata value as the strict index reader keeps it: strings as they are, other scalars as
/// their JSON text. Containers and non-integer numbers are left to it.
bool indexMetadataText(dom::element value, std::string& text)
{
    switch (value.type()) {
    case dom::element_type::STRING:
        text = std::string_view(value);
        return true;
    case dom::element_type::INT64:
        text = std::to_string(int64_t(value));
        return true;
    case dom::element_type::UINT64:
        text = std::to_string(uint64_t(value));
        return true;
    case dom::element_type::BOOL:
        text = bool(value) ? "true" : "false";
        return true;
    case dom::element_type::NULL_VALUE:
        text = "null";
        return true;
    default:
        return false;
    }
}

bool readIndexTree(std::string_view text, SafetensorsIndex& out)
{
    dom::parser parser;
    dom::object top;
    if (parser.parse(text.data(), text.size()).get(top) != simdjson::SUCCESS)
        return false;
    std::vector<std::string_view> topKeys;
    bool sawWeightMap = false;
    for (const dom::key_value_pair kv : top) {
        topKeys.push_back(kv.key);
        if (kv.key == "weight_map") {
            dom::object map;
            if (kv.value.get(map) != simdjson::SUCCESS)
                return false;
            sawWeightMap = true;
            out.weightMap.reserve(map.size());
            for (const dom::key_value_pair entry : map) {
                std::string_view shard;
                if (entry.value.get(shard) != simdjson::SUCCESS || !isRelativeFileName(shard))
                    return false;
                out.weightMap.emplace_back(entry.key, shard);
            }
        } else if (kv.key == "metadata") {
            if (kv.value.is_null())
                continue;
            dom::object meta;
            if (kv.value.get(meta) != simdjson::SUCCESS)
                return false;
            std::vector<std::string_view> keys;
            for (const dom::key_value_pair m : meta) {
                std::string value;
                if (!indexMetadataText(m.value, value))
                    return false;
                keys.push_back(m.key);
                out.metadata.emplace_back(m.key, std::move(value));
            }
            if (!allDifferent(std::move(keys)))
                return false;
        } else if (kv.value.is_array() || kv.value.is_object()) {
            return false; // the strict reader replays other keys' containers within its depth limit
        }
    }
    if (!sawWeightMap || !allDifferent(std::move(topKeys)))
        return false;
    std::vector<std::string_view> names;
    names.reserve(out.weightMap.size());
    for (const auto& entry : out.weightMap)
        names.push_back(entry.first);
    StrictJsonSax::checkUniqueKeys(names, "weight_map");
    return true;
}

} // namespace

bool readHeaderFast(std::string_view text, SafetensorsHeader& out)
{
    if (readHeaderTree(text, out))
        return true;
    out.tensors.clear();
    out.metadata.clear();
    return false;
}

bool readIndexFast(std::string_view text, SafetensorsIndex& out)
{
    if (readIndexTree(text, out))
        return true;
    out = {};
    return false;
}

} // namespace ckpt::detail
