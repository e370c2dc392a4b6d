// SPDX-License-Identifier: MIT
// How many token ids a Hugging Face tokenizer can produce, from the files save_pretrained writes
// beside a model: tokenizer.json (the `tokenizers` library's serialization: model.vocab, a map of
// token to id for BPE, WordPiece and WordLevel, a list of [token, score] pairs for Unigram, whose
// ids are the positions; plus added_tokens with their ids) and tokenizer_config.json
// (added_tokens_decoder, keyed by id). A tokenizer.json of a large vocabulary is several MB, so it is
// scanned with nlohmann's SAX interface, never built as a document.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ckpt {

struct TokenizerIds {
    std::optional<int64_t> maxId;      // the largest id any token maps to
    int64_t vocabEntries = 0;          // tokens of the model's vocabulary
    int64_t addedTokens = 0;           // added (special) tokens listed
    std::string modelType;             // "BPE", "Unigram"... (empty when not said)
};

/// The ids of tokenizer.json's text. Throws FormatError when it is not JSON.
TokenizerIds tokenizerJsonIds(std::string_view text);

/// The ids tokenizer_config.json's added_tokens_decoder names ({"128000": {...}}). Throws
/// FormatError when it is not JSON.
TokenizerIds tokenizerConfigIds(std::string_view text);

} // namespace ckpt
