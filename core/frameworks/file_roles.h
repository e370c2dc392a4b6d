// SPDX-License-Identifier: MIT
// The generic roles of a checkpoint's files by their names, shared by the adapters (internal to
// core/frameworks).
#pragma once

#include <string>
#include <string_view>

namespace ckpt::frameworks {

/// The role of a file in a checkpoint folder from its name alone (model, optimizer, rng with its
/// rank...); `rank` is set for per-rank files, -1 otherwise.
std::string roleOfFile(const std::string& name, int& rank);

/// E: the model's and the run's configuration files (config.json, tokenizer files, YAML args).
bool isConfigFileName(const std::string& name);

/// A shard of a sharded safetensors set, "model-00002-of-00004.safetensors".
bool isSafetensorsShardName(const std::string& name);

bool isTorchFileName(const std::string& name);

} // namespace ckpt::frameworks
