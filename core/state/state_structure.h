// SPDX-License-Identifier: MIT
// How the training-state reader recognises parts by structure when names differ: a model
// state_dict, an optimizer, scheduler or scaler state, parameter buffers, the optimizer type from
// its state keys, and which part (C, D, E) a counter's key belongs to.
#pragma once

#include "ckpt/formats/key_path.h"
#include "ckpt/pickle/value_graph.h"
#include "ckpt/state/training_state.h"

#include <set>
#include <string>
#include <vector>

namespace ckpt {

/// Per-parameter optimizer state keys (exp_avg, momentum_buffer, step...).
const std::set<std::string>& momentNames();
/// {"state": dict, "param_groups": list}.
bool isOptimizerDict(const ValueGraph& g, NodeId id);
/// How much a dict looks like a model state_dict (tensors under string keys); 0 when it does not.
int stateDictScore(const ValueGraph& g, NodeId id);
bool isSchedulerDict(const ValueGraph& g, NodeId id);
bool isScalerDict(const ValueGraph& g, NodeId id);
/// Buffers rather than parameters: running stats, counters, integer or bool tensors.
bool looksLikeBuffer(const ParameterEntry& p);
std::string inferOptimizerType(const std::set<std::string>& stateKeys, const std::set<std::string>& groupKeys);

/// Which part a counter belongs to, by its key: C (progress), D (data cursor) or E (environment).
extern const std::set<std::string> kProgressKeys;
extern const std::set<std::string> kDataKeys;
extern const std::set<std::string> kEnvKeys;

/// "sampler" for ".../sampler.bin".
std::string fileStem(const std::string& path);
/// A copy of a tensor-free value into another graph (DCP byte items rebuilt into one dict);
/// tensors and objects become Invalid nodes.
NodeId copyValue(const ValueGraph& from, NodeId id, ValueGraph& to, int depth = 0);

/// Breadth-first search for the first node satisfying `pred`, to a limited depth, skipping
/// optimizer subtrees unless looking for an optimizer.
struct Found {
    NodeId node = kNoNode;
    KeyPath key;
};

template<typename Pred>
Found findByStructure(const ValueGraph& g, NodeId root, Pred pred, int maxDepth, bool skipOptimizers = true)
{
    struct Item {
        NodeId node;
        KeyPath key;
        int depth;
    };
    std::vector<Item> queue{{root, {}, 0}};
    std::set<NodeId> seen;
    for (std::size_t i = 0; i < queue.size() && i < 20000; ++i) {
        const Item it = queue[i];
        if (!g.valid(it.node) || !seen.insert(it.node).second)
            continue;
        if (pred(it.node))
            return {it.node, it.key};
        if (it.depth >= maxDepth || (skipOptimizers && isOptimizerDict(g, it.node)))
            continue;
        const Node& n = g[it.node];
        if (n.kind == Kind::Dict) {
            for (std::size_t k = 0; k + 1 < n.items.size(); k += 2) {
                KeyPath key = it.key;
                key.push_back(keyPartOf(g, n.items[k]));
                queue.push_back({n.items[k + 1], std::move(key), it.depth + 1});
            }
        } else if (n.kind == Kind::List || n.kind == Kind::Tuple) {
            for (std::size_t k = 0; k < n.items.size() && k < 64; ++k) {
                KeyPath key = it.key;
                key.push_back(static_cast<int64_t>(k));
                queue.push_back({n.items[k], std::move(key), it.depth + 1});
            }
        } else if (n.kind == Kind::Object && g.valid(n.state) && g[n.state].kind == Kind::Dict) {
            queue.push_back({n.state, it.key, it.depth + 1});
        }
    }
    return {};
}

} // namespace ckpt
