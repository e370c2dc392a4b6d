// SPDX-License-Identifier: MIT
#include "ckpt/formats/model_export.h"

#include <regex>

namespace ckpt {

bool isModelExportListing(const std::vector<std::string>& names)
{
    // save_pretrained writes safetensors, or with safe_serialization=False pytorch_model.bin (sharded:
    // pytorch_model-00001-of-0000N.bin and pytorch_model.bin.index.json), beside config.json
    // (transformers src/transformers/modeling_utils.py save_pretrained, read in the search corpus's stored copy; its commit is not recorded). A .bin counts as model weights only
    // with that config or index beside it: a lone .bin is any torch.save file.
    static const std::regex binShard(R"(^pytorch_model(-\d{5}-of-\d{5})?\.bin$)");
    bool weights = false, binWeights = false, described = false;
    for (const auto& n : names) {
        if (n.ends_with(".safetensors")) {
            weights = true;
            continue;
        }
        if (std::regex_match(n, binShard)) {
            binWeights = true;
            continue;
        }
        described = described || n == "config.json" || n.ends_with(".bin.index.json");
        const bool config = n.ends_with(".json") && n != "manifest.json" && n != "trainer_state.json";
        const bool tokenizer = n.ends_with(".model") || n.ends_with(".txt") || n.ends_with(".tiktoken") || n.ends_with(".jinja")
                            || n == "README.md";
        if (!config && !tokenizer)
            return false;
    }
    return weights || (binWeights && described);
}

} // namespace ckpt
