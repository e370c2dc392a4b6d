// SPDX-License-Identifier: MIT
// Paths from the root of a saved object to its parts, as `ckpt` prints them:
// ["optimizer", "state", 0, "exp_avg"]. Dict keys stay strings or integers as saved.
#pragma once

#include "ckpt/pickle/tensor_info.h"

#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace ckpt {

using KeyPart = std::variant<int64_t, std::string>;
using KeyPath = std::vector<KeyPart>;

/// "optimizer/state/0/exp_avg", "model/conv.weight"; empty parts or parts holding '/' are quoted.
std::string formatKeyPath(const KeyPath& path);

/// The key a dict key node stands for: strings and ints as they are, anything else by its repr.
KeyPart keyPartOf(const ValueGraph& graph, NodeId key);

/// Python-style repr of a simple value, for keys and summaries (strings quoted, bytes b'..').
std::string reprOf(const ValueGraph& graph, NodeId id, std::size_t maxLength = 80);

struct WalkVisit {
    const KeyPath& path;
    NodeId node;
    bool repeat; // a container that is not entered: a cycle back to an ancestor, or the budget is spent
};

/// Visits every path from `root`, parents before children, as iterating what torch.load
/// returns would: a shared container is entered under each of its keys. A container that is
/// its own ancestor (a cycle) is visited with repeat=true and not entered. Shared structure
/// can grow exponentially (a memo "billion laughs"), so once `budget` visits have been made a
/// container already entered elsewhere is no longer entered again; the function then returns
/// false. Object attributes (BUILD state dicts) are walked by attribute name; tensors, arrays
/// and scalars are leaves.
bool walkObject(const ValueGraph& graph, NodeId root, const std::function<void(const WalkVisit&)>& visit,
                std::size_t budget = 0);

struct TensorEntry {
    KeyPath key;
    uint32_t tensor = 0; // index into Document::tensors
    bool alias = false;  // the same tensor object already appeared under another key
};

/// Every tensor reachable from the root, in the order torch.load's dict iteration would give.
std::vector<TensorEntry> listTensors(const Document& doc);

} // namespace ckpt
