// SPDX-License-Identifier: MIT
// Hugging Face tokenizer files: tokenizer.json (the vocabulary of BPE/WordPiece/WordLevel as a
// map, Unigram's as a list of pairs, added_tokens) and tokenizer_config.json
// (added_tokens_decoder keyed by id), scanned with nlohmann's SAX parser. The same text goes
// through both readers.
#include "fuzz_support.h"

#include "ckpt/formats/tokenizer_json.h"

#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    ckpt::fuzz::refusalsAreFine([&] {
        const ckpt::TokenizerIds ids = ckpt::tokenizerJsonIds(text);
        if (ids.maxId)
            (void)std::to_string(*ids.maxId + 1); // as the state reader reports it
    });
    ckpt::fuzz::refusalsAreFine([&] {
        const ckpt::TokenizerIds ids = ckpt::tokenizerConfigIds(text);
        if (ids.maxId)
            (void)std::to_string(*ids.maxId + 1);
    });
    return 0;
}
