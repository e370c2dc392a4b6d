// SPDX-License-Identifier: MIT
#include "ui/models/objecttree.h"

#include <algorithm>

using namespace ckpt;

namespace {

void addDictItems(const ValueGraph& graph, const std::vector<NodeId>& items, bool withKeys, std::vector<ObjectChild>& out)
{
    for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
        ObjectChild child{.node = items[i + 1]};
        if (withKeys) {
            const Node& k = graph[items[i]];
            child.key = keyPartOf(graph, items[i]);
            child.label = k.kind != Kind::String ? reprOf(graph, items[i], 60) : k.text.empty() ? "''" : k.text;
        }
        out.push_back(std::move(child));
    }
}

void addIndexed(const std::vector<NodeId>& items, bool withKeys, std::vector<ObjectChild>& out)
{
    for (std::size_t i = 0; i < items.size(); ++i) {
        ObjectChild child{.node = items[i]};
        if (withKeys) {
            child.key = static_cast<int64_t>(i);
            child.label = '[' + std::to_string(i) + ']';
        }
        out.push_back(std::move(child));
    }
}

void addPseudo(const char* name, NodeId node, bool withKeys, std::vector<ObjectChild>& out)
{
    ObjectChild child{.node = node};
    if (withKeys) {
        child.key = std::string(name);
        child.label = name;
    }
    out.push_back(std::move(child));
}

bool isDict(const ValueGraph& graph, NodeId id)
{
    return graph.valid(id) && graph[id].kind == Kind::Dict;
}

/// BUILD state as attributes: a __dict__ dict, or the (__dict__, __slots__) pair.
bool addAttributes(const ValueGraph& graph, NodeId state, bool withKeys, std::vector<ObjectChild>& out)
{
    if (isDict(graph, state)) {
        addDictItems(graph, graph[state].items, withKeys, out);
        return true;
    }
    if (!graph.valid(state) || graph[state].kind != Kind::Tuple || graph[state].items.size() != 2)
        return false;
    const auto& parts = graph[state].items;
    const auto dictOrNone = [&](NodeId p) { return isDict(graph, p) || (graph.valid(p) && graph[p].kind == Kind::None); };
    if (!dictOrNone(parts[0]) || !dictOrNone(parts[1]))
        return false;
    for (const NodeId part : parts) {
        if (isDict(graph, part))
            addDictItems(graph, graph[part].items, withKeys, out);
    }
    return true;
}

} // namespace

bool isContainer(const ValueGraph& graph, NodeId id)
{
    if (!graph.valid(id))
        return false;
    switch (graph[id].kind) {
    case Kind::Dict:
    case Kind::List:
    case Kind::Tuple:
    case Kind::Set:
    case Kind::FrozenSet:
    case Kind::Object:
        return true;
    default:
        return false;
    }
}

std::vector<ObjectChild> objectChildren(const ValueGraph& graph, NodeId id, bool withKeys)
{
    std::vector<ObjectChild> out;
    if (!isContainer(graph, id))
        return out;
    const Node& n = graph[id];
    switch (n.kind) {
    case Kind::Dict:
        addDictItems(graph, n.items, withKeys, out);
        if (graph.valid(n.state))
            addPseudo("(attributes)", n.state, withKeys, out);
        break;
    case Kind::List:
    case Kind::Tuple:
    case Kind::Set:
    case Kind::FrozenSet:
        addIndexed(n.items, withKeys, out);
        if (graph.valid(n.state) && !addAttributes(graph, n.state, withKeys, out))
            addPseudo("(state)", n.state, withKeys, out);
        break;
    case Kind::Object: {
        // REDUCE(cls, args) without state reads best as its fields (namedtuples, enums).
        const bool argsAsItems = !graph.valid(n.state) && graph.valid(n.a) && graph[n.a].kind == Kind::Tuple;
        if (argsAsItems)
            addIndexed(graph[n.a].items, withKeys, out);
        else if (graph.valid(n.a))
            addPseudo("(args)", n.a, withKeys, out);
        if (graph.valid(n.c))
            addPseudo("(kwargs)", n.c, withKeys, out);
        if (graph.valid(n.b))
            addPseudo("(callable)", n.b, withKeys, out);
        if (graph.valid(n.state) && !addAttributes(graph, n.state, withKeys, out))
            addPseudo("(state)", n.state, withKeys, out);
        break;
    }
    default:
        break;
    }
    return out;
}

KeyPath ObjectTreeItem::path() const
{
    KeyPath path;
    for (const ObjectTreeItem* item = this; item->m_parent && item->m_parent->m_parent; item = item->m_parent)
        path.push_back(item->m_child.key);
    std::reverse(path.begin(), path.end());
    return path;
}

ObjectTree::ObjectTree(const ValueGraph& graph, NodeId root, std::string rootLabel)
    : m_graph(graph), m_top(nullptr, 0, ObjectChild{}, false)
{
    m_top.m_populated = true;
    if (!graph.valid(root))
        return;
    m_top.m_children.push_back(std::make_unique<ObjectTreeItem>(&m_top, 0, ObjectChild{std::move(rootLabel), KeyPart{}, root}, false));

    // Pre-order walk with an explicit stack (graphs can be deep): the first time a container
    // is reached is where the tree expands it.
    struct Frame {
        NodeId node;
        std::vector<ObjectChild> children;
        std::size_t next = 0;
    };
    std::vector<Frame> stack;
    if (isContainer(graph, root)) {
        m_first.emplace(root, Occurrence{kNoNode, 0});
        stack.push_back(Frame{root, objectChildren(graph, root, false)});
    }
    while (!stack.empty()) {
        Frame& top = stack.back();
        if (top.next == top.children.size()) {
            stack.pop_back();
            continue;
        }
        const auto row = static_cast<uint32_t>(top.next);
        const NodeId child = top.children[top.next++].node;
        if (isContainer(graph, child) && m_first.emplace(child, Occurrence{top.node, row}).second)
            stack.push_back(Frame{child, objectChildren(graph, child, false)}); // invalidates `top`
    }
}

const std::vector<std::unique_ptr<ObjectTreeItem>>& ObjectTree::children(ObjectTreeItem* item)
{
    if (item->m_populated)
        return item->m_children;
    item->m_populated = true;
    if (item->m_repeat)
        return item->m_children;
    auto children = objectChildren(m_graph, item->node());
    item->m_children.reserve(children.size());
    for (std::size_t i = 0; i < children.size(); ++i) {
        const NodeId node = children[i].node;
        bool repeat = false;
        if (isContainer(m_graph, node)) {
            // Expanded here only if this (parent, row) is the first occurrence; the parent is
            // itself a first occurrence, so the pair identifies one place in the tree.
            const auto it = m_first.find(node);
            repeat = it == m_first.end() || it->second.parent != item->node() || it->second.row != i;
        }
        item->m_children.push_back(std::make_unique<ObjectTreeItem>(item, static_cast<int>(i), std::move(children[i]), repeat));
    }
    return item->m_children;
}

bool ObjectTree::hasChildren(const ObjectTreeItem* item) const
{
    if (item == &m_top)
        return !m_top.m_children.empty();
    if (item->m_repeat || !isContainer(m_graph, item->node()))
        return false;
    if (item->m_populated)
        return !item->m_children.empty();
    if (item->m_hasChildren < 0) // views ask on every paint: count once
        item->m_hasChildren = objectChildren(m_graph, item->node(), false).empty() ? 0 : 1;
    return item->m_hasChildren == 1;
}

KeyPath ObjectTree::firstPath(NodeId node) const
{
    KeyPath path;
    for (auto it = m_first.find(node); it != m_first.end() && it->second.parent != kNoNode;
         it = m_first.find(it->second.parent)) {
        const auto siblings = objectChildren(m_graph, it->second.parent);
        if (it->second.row >= siblings.size())
            break;
        path.push_back(siblings[it->second.row].key);
    }
    std::reverse(path.begin(), path.end());
    return path;
}
