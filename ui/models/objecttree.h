// SPDX-License-Identifier: MIT
// The object tree behind ObjectTreeModel, without Qt: items are built level by level when a
// view asks for them, and every container is expanded at one place only. The other places it
// is reached from become leaves that point back to it, so shared structure, memo "billion
// laughs" and cycles cost one row per reference instead of exploding.
#pragma once

#include "ckpt/formats/key_path.h"
#include "ckpt/pickle/value_graph.h"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

/// One child of a node as the tree shows it: dict items by key, sequence items by index,
/// object attributes by name, and "(args)" / "(state)" pseudo-keys for the rest.
struct ObjectChild {
    std::string label;
    ckpt::KeyPart key;
    ckpt::NodeId node = ckpt::kNoNode;
};

/// Children of `id` in display order; labels and keys are left empty when `withKeys` is false.
std::vector<ObjectChild> objectChildren(const ckpt::ValueGraph& graph, ckpt::NodeId id, bool withKeys = true);

/// Kinds that can have children (and are therefore expanded only once).
bool isContainer(const ckpt::ValueGraph& graph, ckpt::NodeId id);

class ObjectTreeItem {
public:
    ObjectTreeItem(ObjectTreeItem* parent, int row, ObjectChild child, bool repeat)
        : m_parent(parent), m_row(row), m_child(std::move(child)), m_repeat(repeat) {}

    ObjectTreeItem* parent() const { return m_parent; }
    int row() const { return m_row; }
    const std::string& label() const { return m_child.label; }
    const ckpt::KeyPart& key() const { return m_child.key; }
    ckpt::NodeId node() const { return m_child.node; }
    /// The container is expanded elsewhere; this row only refers to it.
    bool isRepeat() const { return m_repeat; }
    /// Key path from the root object (the root item itself has the empty path).
    ckpt::KeyPath path() const;

private:
    friend class ObjectTree;
    ObjectTreeItem* m_parent;
    int m_row;
    ObjectChild m_child;
    bool m_repeat;
    bool m_populated = false;
    mutable int8_t m_hasChildren = -1; // unknown until asked
    std::vector<std::unique_ptr<ObjectTreeItem>> m_children;
};

class ObjectTree {
public:
    /// Scans the graph once (O(nodes + edges)) to find where each container is first reached.
    ObjectTree(const ckpt::ValueGraph& graph, ckpt::NodeId root, std::string rootLabel);

    /// The invisible top item; its only child is the root object.
    ObjectTreeItem* top() { return &m_top; }
    const std::vector<std::unique_ptr<ObjectTreeItem>>& children(ObjectTreeItem* item);
    bool hasChildren(const ObjectTreeItem* item) const;
    /// Where the container `node` is expanded (for "same object as ...").
    ckpt::KeyPath firstPath(ckpt::NodeId node) const;

private:
    struct Occurrence {
        ckpt::NodeId parent; // kNoNode for the root object
        uint32_t row;
    };

    const ckpt::ValueGraph& m_graph;
    ObjectTreeItem m_top;
    std::unordered_map<ckpt::NodeId, Occurrence> m_first;
};
