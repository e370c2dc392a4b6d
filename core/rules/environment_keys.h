// SPDX-License-Identifier: MIT
// Environment fields a resume must match (recovery guide §9.1): versions, world size, config,
// data and tokenizer versions, code commit, model architecture, precision.
#pragma once

#include <string>

namespace ckpt::rules {

inline bool isCompatibilityKey(const std::string& name)
{
    static const char* const keys[] = {"torch_version", "cuda_version", "transformers_version", "pytorch-lightning_version",
                                       "ds_version", "world_size", "dp_world_size", "mp_world_size", "config_sha256",
                                       "dataset_version", "tokenizer_version", "code_commit", "model_arch", "precision",
                                       "fp16", "bf16"};
    for (const char* k : keys) {
        if (name == k)
            return true;
    }
    return false;
}

} // namespace ckpt::rules
