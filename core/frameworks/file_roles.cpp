// SPDX-License-Identifier: MIT
#include "file_roles.h"

#include "ckpt/formats/rank_names.h"

#include <algorithm>
#include <regex>
#include <set>

namespace ckpt::frameworks {

bool isTorchFileName(const std::string& name)
{
    for (const char* ext : {".pt", ".pth", ".bin", ".ckpt", ".pkl", ".safetensors", ".distcp"}) {
        if (name.ends_with(ext))
            return true;
    }
    return false;
}

// E: the model's and the run's configuration (transformers' save_pretrained writes config.json and
// generation_config.json, its tokenizer the tokenizer files; peft adapter_config.json; Megatron,
// NeMo and torchtune keep YAML or JSON args). Read as environment facts, never as tensors.
bool isConfigFileName(const std::string& name)
{
    static const std::set<std::string> names = {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                                                "special_tokens_map.json", "added_tokens.json", "vocab.json", "merges.txt",
                                                "tokenizer.model", "adapter_config.json", "args.json", "params.json",
                                                "preprocessor_config.json", "chat_template.jinja"};
    return names.contains(name) || name.ends_with(".yaml") || name.ends_with(".yml");
}

// A shard of a sharded safetensors set, "model-00002-of-00004.safetensors".
bool isSafetensorsShardName(const std::string& name)
{
    static const std::regex shard(R"(-\d{5}-of-\d{5}\.safetensors$)");
    return std::regex_search(name, shard);
}

std::string roleOfFile(const std::string& name, int& rank)
{
    static const std::regex rngRank(R"((?:rng[-_]rank[-_]?|rng_state_|random_states_)(\d+))");
    static const std::regex zeroRank(R"(zero_pp_rank_(\d+)_)");
    rank = rankInName(name, rngRank);
    if (name == "manifest.json")
        return "manifest";
    if (name == "COMPLETE" || name == "COMPLETED" || name == "commit_success.txt")
        return "complete";
    if (name == "trainer_state.json")
        return "trainer_state";
    if (name == "training_args.bin")
        return "training_args";
    if (isConfigFileName(name))
        return "config";
    if (name.ends_with(".bin.index.json"))
        return "model_index"; // pytorch_model.bin.index.json maps names to the .bin shards, which hold the tensors
    if (name == ".metadata" || name.ends_with(".metadata"))
        return "metadata";
    if (rank >= 0 || name == "rng_state.pth" || name.starts_with("rng")) {
        rank = std::max(rank, 0);
        return "rng";
    }
    // A LoRA adapter: peft's save_pretrained writes adapter_model.safetensors (or .bin); torchtune
    // writes adapter_model.pt in its own parameter names beside that PEFT copy (docs/layouts.md §4).
    if (name.starts_with("adapter_model.") && isTorchFileName(name))
        return "adapter";
    if (name.find("optim") != std::string::npos) {
        rank = rankInName(name, zeroRank);
        return "optimizer";
    }
    if (name.find("scheduler") != std::string::npos || name.find("lr_sched") != std::string::npos)
        return "scheduler";
    if (name.starts_with("scaler"))
        return "scaler";
    if (name.starts_with("sampler") || name.starts_with("dl_state_dict") || name.find("dataloader") != std::string::npos)
        return "data";
    if (name.find("model") != std::string::npos || name.starts_with("pytorch_model") || name.ends_with(".safetensors")
        || name.ends_with(".safetensors.index.json")) {
        rank = rankInName(name, zeroRank);
        return "model";
    }
    if (isTorchFileName(name))
        return "state";
    return "other";
}

} // namespace ckpt::frameworks
