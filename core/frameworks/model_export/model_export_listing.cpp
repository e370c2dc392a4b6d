// SPDX-License-Identifier: MIT
#include "ckpt/frameworks/model_export.h"

#include <regex>

namespace ckpt {

namespace {

// A file of saved state other than the model's weights (an optimizer's .pt, a pickle, DCP data):
// with one beside them, the weights are part of a training checkpoint, not a model export.
bool isSavedStateName(const std::string& n)
{
    for (const char* ext : {".pt", ".pth", ".ckpt", ".pkl", ".pickle", ".bin", ".distcp", ".metadata"}) {
        if (n.ends_with(ext))
            return true;
    }
    return false;
}

} // namespace

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
        if (n == "manifest.json" || n == "trainer_state.json" || isSavedStateName(n))
            return false;
        // Anything else a model repository carries says nothing about the layout: configs and
        // tokenizer files, but also licences, READMEs, figures, .gitattributes, and the modelling
        // code of trust_remote_code models (deepseek-ai/DeepSeek-V3 ships modeling_deepseek.py and
        // configuration_deepseek.py beside its 163 shards, LICENSE-CODE and LICENSE-MODEL).
    }
    return weights || (binWeights && described);
}

} // namespace ckpt
