// SPDX-License-Identifier: MIT
// YAML configuration files as JSON values: NeMo's model_config.yaml and hparams.yaml (OmegaConf's
// to_yaml, which writes through PyYAML), torchtune's and Lightning's configs. They are the E of a
// checkpoint: the model's width and depth, the parallel sizes, the optimizer's settings. Parsed by
// libyaml's event API into nlohmann::json, with limits, since the file comes with an untrusted
// checkpoint: aliases (the "billion laughs" expansion) and nesting are bounded.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string_view>

namespace ckpt {

struct YamlLimits {
    std::size_t maxDepth = 256;      // nested mappings and sequences
    std::size_t maxNodes = 1000000;  // values built, aliases expanded included
};

/// The first document of `text`. Plain scalars are typed the way PyYAML's resolver (YAML 1.1, as
/// OmegaConf reads it back) types them: null (~, null, empty), booleans (true/false, yes/no,
/// on/off), integers (decimal, 0x, 0o, with '_'), floats (with an exponent or a dot, .inf, .nan);
/// quoted scalars and tagged ones stay strings. Mapping keys are their scalar text. Throws
/// FormatError naming the line when the text is not YAML, LimitError past a limit.
nlohmann::json parseYaml(std::string_view text, const YamlLimits& limits = {});

} // namespace ckpt
