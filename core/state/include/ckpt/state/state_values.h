// SPDX-License-Identifier: MIT
// Small readers of pickled values shared by the training-state readers: a scalar (Python number
// or one-element tensor), a value as display text, and a dict's items with their keys as text.
#pragma once

#include "ckpt/formats/checkpoint_file.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckpt {

/// The shortest text that reads back as `v` (integers without a decimal point).
std::string numberText(double v);

/// An int, float or bool, or the value of a one-element tensor (optimizer `step` is a 0-d tensor
/// since torch 1.12); nullopt for anything else.
std::optional<double> scalarOf(const CheckpointFile& file, NodeId id);

/// Text of a simple value (number, string, bool, None, dtype, short list of those); empty when the
/// value is not simple.
std::string simpleText(const CheckpointFile& file, NodeId id);

bool isDict(const ValueGraph& g, NodeId id);

/// A dict's (key as text, value) pairs in order; empty for anything that is not a dict.
std::vector<std::pair<std::string, NodeId>> dictItems(const ValueGraph& g, NodeId id);

/// A pickled configuration as plain JSON: dicts, lists, tuples, numbers, strings, None, and the
/// omegaconf containers NeMo and Lightning pickle (DictConfig and ListConfig as their `_content`,
/// AnyNode and the typed value nodes as their `_val`: omegaconf@350bdb63 basecontainer.py
/// __getstate__, nodes.py). Anything else is its repr text. At most `maxValues` values are
/// converted; the rest is left out.
nlohmann::json plainJson(const CheckpointFile& file, NodeId id, std::size_t maxValues = 100000);

/// The fields of an opaque object (its BUILD state dict), or the dict itself.
std::vector<std::pair<std::string, NodeId>> fieldsOf(const ValueGraph& g, NodeId id);

} // namespace ckpt
