// SPDX-License-Identifier: MIT
#include "ckpt/pickle/value_graph.h"

#include "ckpt/io/errors.h"

namespace ckpt {

NodeId ValueGraph::add(Node node)
{
    if (m_nodes.size() >= m_maxNodes)
        throw LimitError("the pickle builds more than " + std::to_string(m_maxNodes) + " objects (limit exceeded)");
    m_nodes.push_back(std::move(node));
    return static_cast<NodeId>(m_nodes.size() - 1);
}

NodeId ValueGraph::get(NodeId dict, std::string_view key) const
{
    if (!valid(dict))
        return kNoNode;
    const Node& d = m_nodes[dict];
    if (d.kind != Kind::Dict && d.kind != Kind::Object)
        return kNoNode;
    for (std::size_t i = 0; i + 1 < d.items.size(); i += 2) {
        const Node& k = m_nodes[d.items[i]];
        if (k.kind == Kind::String && k.text == key)
            return d.items[i + 1];
    }
    return kNoNode;
}

const char* kindName(Kind kind)
{
    switch (kind) {
    case Kind::None: return "none";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::BigInt: return "bigint";
    case Kind::Float: return "float";
    case Kind::Complex: return "complex";
    case Kind::String: return "str";
    case Kind::Bytes: return "bytes";
    case Kind::ByteArray: return "bytearray";
    case Kind::Tuple: return "tuple";
    case Kind::List: return "list";
    case Kind::Dict: return "dict";
    case Kind::Set: return "set";
    case Kind::FrozenSet: return "frozenset";
    case Kind::Slice: return "slice";
    case Kind::Global: return "global";
    case Kind::Call: return "call";
    case Kind::NewObj: return "newobj";
    case Kind::PersistentId: return "persistent_id";
    case Kind::Object: return "object";
    case Kind::Tensor: return "tensor";
    case Kind::Storage: return "storage";
    case Kind::Dtype: return "dtype";
    case Kind::Device: return "device";
    case Kind::Size: return "size";
    case Kind::NdArray: return "ndarray";
    case Kind::NpDtype: return "numpy_dtype";
    case Kind::Layout: return "layout";
    case Kind::Invalid: return "invalid";
    }
    return "?";
}

} // namespace ckpt
