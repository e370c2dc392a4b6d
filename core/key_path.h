// SPDX-License-Identifier: MIT
// Paths from the root of a saved object to its parts, as `ckpt` prints them:
// ["optimizer", "state", 0, "exp_avg"]. Dict keys stay strings or integers as saved.
#pragma once

#include "core/tensor_info.h"

#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace ckpt {

using KeyPart = std::variant<int64_t, std::string>;
using KeyPath = std::vector<KeyPart>;

/// "optimizer.state.0.exp_avg"; parts containing '.' are quoted.
std::string formatKeyPath(const KeyPath& path);

/// The key a dict key node stands for: strings and ints as they are, anything else by its repr.
KeyPart keyPartOf(const ValueGraph& graph, NodeId key);

/// Python-style repr of a simple value, for keys and summaries (strings quoted, bytes b'..').
std::string reprOf(const ValueGraph& graph, NodeId id, std::size_t maxLength = 80);

struct WalkVisit {
    const KeyPath& path;
    NodeId node;
    bool repeat; // the node was already reached by another path
};

/// Visits every node reachable from `root` with the path to it, parents before children.
/// Containers are entered once: a container reached again is visited with repeat=true and
/// not entered, so shared structure (and memo bombs, and cycles) cost O(nodes + edges).
/// Leaves are visited on every path. Object attributes (BUILD state dicts) are walked by
/// attribute name; tensors, arrays and scalars are leaves.
void walkObject(const ValueGraph& graph, NodeId root, const std::function<void(const WalkVisit&)>& visit);

struct TensorEntry {
    KeyPath key;
    uint32_t tensor = 0; // index into Document::tensors
    bool alias = false;  // the same tensor object already appeared under another key
};

/// Every tensor reachable from the root, in the order torch.load's dict iteration would give.
std::vector<TensorEntry> listTensors(const Document& doc);

} // namespace ckpt
