// SPDX-License-Identifier: MIT
// The layouts read here are the `tokenizers` library's serializer (huggingface/tokenizers
// tokenizers/src/tokenizer/serialization.rs: "added_tokens" with "id", "model"; models/bpe/
// serialization.rs and wordpiece, wordlevel: "vocab" as a map token -> id; models/unigram/
// serialization.rs: "vocab" as a list of [piece, score]) and transformers'
// tokenization_utils_base.py save_pretrained ("added_tokens_decoder": {id: AddedToken dict}).
// Stored copies in the search corpus; commits not recorded.
#include "ckpt/formats/tokenizer_json.h"

#include "ckpt/io/errors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

namespace ckpt {
namespace {

using json = nlohmann::json;

// Walks the document keeping the path of keys ("[]" for an array element) to the current value.
class IdScanner : public nlohmann::json_sax<json> {
public:
    explicit IdScanner(bool config) : m_config(config) {}
    TokenizerIds ids;

    bool null() override { return value(); }
    bool boolean(bool) override { return value(); }
    bool number_integer(number_integer_t v) override { return id(v); }
    bool number_unsigned(number_unsigned_t v) override { return id(static_cast<int64_t>(std::min<number_unsigned_t>(v, INT64_MAX))); }
    bool number_float(number_float_t, const string_t&) override { return value(); }
    bool string(string_t& s) override
    {
        if (at({"model", "type"}))
            ids.modelType = s;
        return value();
    }
    bool binary(binary_t&) override { return value(); }
    bool start_object(std::size_t) override
    {
        // An added_tokens_decoder entry: its key is the id.
        if (m_config && m_path.size() == 2 && m_path[0] == "added_tokens_decoder") {
            int64_t v = 0;
            const std::string& k = m_path[1];
            const auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), v);
            if (ec == std::errc() && end == k.data() + k.size()) {
                ++ids.addedTokens;
                note(v);
            }
        }
        // A Unigram piece: [token, score] at model.vocab[i], its id the position.
        if (!m_config && at({"model", "vocab", "[]"}))
            note(ids.vocabEntries++);
        m_path.emplace_back();
        m_objects.push_back(true);
        return true;
    }
    bool start_array(std::size_t) override
    {
        if (!m_config && at({"model", "vocab", "[]"}))
            note(ids.vocabEntries++);
        m_path.emplace_back("[]");
        m_objects.push_back(false);
        return true;
    }
    bool key(string_t& k) override
    {
        m_path.back() = k;
        return true;
    }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override
    {
        throw FormatError("not valid JSON at byte " + std::to_string(position) + ": " + e.what());
    }

private:
    bool at(std::initializer_list<const char*> path) const
    {
        if (m_path.size() != path.size())
            return false;
        return std::equal(path.begin(), path.end(), m_path.begin(), [](const char* a, const std::string& b) { return b == a; });
    }
    bool value() { return true; }
    bool close()
    {
        m_path.pop_back();
        m_objects.pop_back();
        return true;
    }
    // The state reader reports maxId + 1 ids: a hostile file's id of INT64_MAX (or beyond, clamped
    // above) made that sum overflow, undefined behaviour (UBSan in the fuzz target, which adds 1
    // the same way). No vocabulary comes near; one below the maximum keeps the sum defined.
    void note(int64_t id)
    {
        id = std::min<int64_t>(id, INT64_MAX - 1);
        ids.maxId = std::max(ids.maxId.value_or(id), id);
    }
    bool id(int64_t v)
    {
        if (!m_config && m_path.size() == 3 && m_path[0] == "model" && m_path[1] == "vocab" && m_objects[2]) {
            ++ids.vocabEntries; // BPE, WordPiece, WordLevel: token -> id
            note(v);
        } else if (!m_config && m_path.size() == 3 && m_path[0] == "added_tokens" && m_path[1] == "[]" && m_path[2] == "id") {
            ++ids.addedTokens;
            note(v);
        }
        return true;
    }

    bool m_config;
    std::vector<std::string> m_path;
    std::vector<bool> m_objects; // whether each open container is an object
};

TokenizerIds scan(std::string_view text, bool config)
{
    IdScanner scanner(config);
    json::sax_parse(text.begin(), text.end(), &scanner);
    return scanner.ids;
}

} // namespace

TokenizerIds tokenizerJsonIds(std::string_view text) { return scan(text, false); }
TokenizerIds tokenizerConfigIds(std::string_view text) { return scan(text, true); }

} // namespace ckpt
