// SPDX-License-Identifier: MIT
#include "ckpt/formats/model_export.h"

namespace ckpt {

bool isModelExportListing(const std::vector<std::string>& names)
{
    bool weights = false;
    for (const auto& n : names) {
        if (n.ends_with(".safetensors")) {
            weights = true;
            continue;
        }
        const bool config = n.ends_with(".json") && n != "manifest.json" && n != "trainer_state.json";
        const bool tokenizer = n.ends_with(".model") || n.ends_with(".txt") || n.ends_with(".tiktoken") || n == "README.md";
        if (!config && !tokenizer)
            return false;
    }
    return weights;
}

} // namespace ckpt
