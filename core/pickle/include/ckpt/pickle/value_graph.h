// SPDX-License-Identifier: MIT
// The value graph: what a pickle builds, as inert data. Nodes live in one arena and refer to
// each other by index, so a shared object is one node however often it is referenced (a memo
// "billion laughs" stays small), cycles are harmless, and destruction never recurses.
//
// The pickle machine fills it with raw kinds (Global, Call, NewObj, PersistentId). The
// interpretation layer then builds a second graph where recognised calls became semantic
// kinds (Tensor, Dtype, NdArray...) and everything else an opaque Object.
#pragma once

#include "ckpt/dtypes/dtype.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ckpt {

using NodeId = uint32_t;
constexpr NodeId kNoNode = 0xFFFFFFFFu;

enum class Kind : uint8_t {
    // Python values
    None,
    Bool,     // flag
    Int,      // i
    BigInt,   // text: decimal digits with optional '-'
    Float,    // f
    Complex,  // f, f2
    String,   // text (UTF-8)
    Bytes,    // text (raw bytes); raw graph: flag = a read-only view of a bytearray (READONLY_BUFFER), unhashable
    ByteArray, // text; raw graph: items = the Bytes nodes READONLY_BUFFER made of it (read-only views that follow it)
    Tuple,    // items; raw graph: flag = holds a list, dict, set or bytearray (unhashable, as CPython's hash() says)
    List,     // items; text = class path of a list subclass
    Dict,     // items = key, value, key, value...; text = class path (OrderedDict...); state = BUILD state
    Set,      // items
    FrozenSet,
    Slice,    // items: start, stop, step
    // Raw pickle constructs (only in the machine's graph)
    Global,       // text = "module.name" after Python 2 name mapping
    Call,         // REDUCE: a = callable, b = args tuple; state, items from BUILD / SETITEMS / APPENDS
    NewObj,       // NEWOBJ / NEWOBJ_EX / INST / OBJ: a = class, b = args, c = kwargs
    PersistentId, // a = the persistent id value
    // Interpreted values
    Object,  // opaque object: text = class path, a = args (or kNoNode), state, items (dict or list items)
    Tensor,  // ref = index into the tensor table
    Storage, // ref = index into the storage table (a storage pickled on its own)
    Dtype,   // text = torch dtype name
    Device,  // text = "cpu", "cuda:0"
    Size,    // items = Int nodes
    NdArray, // ref = index into the array table
    NpDtype, // text = numpy dtype string ("uint32", "<f4")
    Layout,  // text = "torch.strided", "torch.sparse_coo"
    Invalid, // text = why this part could not be read (a limit, a broken reference)
};

struct Node {
    Kind kind = Kind::None;
    bool flag = false;       // Bool value
    int64_t i = 0;
    double f = 0, f2 = 0;
    std::string text;
    std::vector<NodeId> items;
    NodeId a = kNoNode, b = kNoNode, c = kNoNode;
    NodeId state = kNoNode;  // BUILD state
    uint32_t ref = 0;        // index into a side table; raw graph: kListItems / kDictItems / kSetItems bits, kBuildStates
};

/// On a raw Global, Call, NewObj or PersistentId node (an object the machine cannot see into),
/// `ref` says which opcodes put `items` there, as bits: APPEND / APPENDS (CPython calls its
/// `extend` or `append`), SETITEM / SETITEMS (`__setitem__`: items are key, value, key, value...),
/// ADDITEMS (`add`). More than one bit set: the items mix kinds, in stream order. On a Global
/// node, any of them is a write into a module, a class or a module-level object.
constexpr uint32_t kListItems = 1;
constexpr uint32_t kDictItems = 2;
constexpr uint32_t kSetItems = 4;

/// BUILD ran more than once on the same node: its `state` is then a Tuple node with this `ref`
/// whose items are every BUILD's state, in order (CPython applies each in turn). A single BUILD
/// leaves the state itself in `state`.
constexpr uint32_t kBuildStates = 16;

class ValueGraph {
public:
    explicit ValueGraph(std::size_t maxNodes = std::size_t(1) << 22) : m_maxNodes(maxNodes) {}

    void setMaxNodes(std::size_t maxNodes) { m_maxNodes = maxNodes; }
    /// Room for `nodes` nodes (capped at the node limit) without moving the ones added.
    void reserve(std::size_t nodes) { m_nodes.reserve(std::min(nodes, m_maxNodes)); }

    /// Adds a node; throws LimitError past the node limit.
    NodeId add(Node node);
    NodeId add(Kind kind) { return add(Node{.kind = kind}); }
    NodeId addInt(int64_t v) { return add(Node{.kind = Kind::Int, .i = v}); }
    NodeId addText(Kind kind, std::string text) { return add(Node{.kind = kind, .text = std::move(text)}); }

    Node& operator[](NodeId id) { return m_nodes[id]; }
    const Node& operator[](NodeId id) const { return m_nodes[id]; }
    std::size_t size() const { return m_nodes.size(); }
    bool valid(NodeId id) const { return id < m_nodes.size(); }

    /// Dict lookup by string key (first match); kNoNode when absent or not a dict-like node.
    NodeId get(NodeId dict, std::string_view key) const;

private:
    std::vector<Node> m_nodes;
    std::size_t m_maxNodes;
};

const char* kindName(Kind kind);

} // namespace ckpt
