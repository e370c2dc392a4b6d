// SPDX-License-Identifier: MIT
#include "ckpt/formats/key_path.h"

// GCC 12 reports std::variant<int64_t, std::string> moves in walkObject as maybe-uninitialized;
// it is a known false positive (GCC bug 107138).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_set>

namespace ckpt {
namespace {

std::string quoteString(const std::string& s, std::size_t maxLength)
{
    std::string out = "'";
    for (char c : s) {
        if (out.size() > maxLength) {
            out += "...";
            break;
        }
        if (c == '\'' || c == '\\')
            out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "'";
}

std::string formatDouble(double v)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    // Shortest representation that round-trips, like Python's repr.
    for (int precision = 1; precision <= 17; ++precision) {
        char tryBuf[32];
        std::snprintf(tryBuf, sizeof tryBuf, "%.*g", precision, v);
        if (std::strtod(tryBuf, nullptr) == v) {
            std::string s = tryBuf;
            if (s.find_first_of(".en") == std::string::npos)
                s += ".0";
            return s;
        }
    }
    return buf;
}

} // namespace

std::string formatKeyPath(const KeyPath& path)
{
    // '/' between parts keeps state-dict names readable ("model/conv.weight"); a part that is
    // empty or holds '/' itself is quoted.
    std::string out;
    for (std::size_t i = 0; i < path.size(); ++i) {
        if (i)
            out += '/';
        if (const auto* n = std::get_if<int64_t>(&path[i])) {
            out += std::to_string(*n);
        } else {
            const auto& s = std::get<std::string>(path[i]);
            out += s.empty() || s.find('/') != std::string::npos ? "'" + s + "'" : s;
        }
    }
    return out;
}

KeyPart keyPartOf(const ValueGraph& graph, NodeId key)
{
    const Node& k = graph[key];
    if (k.kind == Kind::String)
        return k.text;
    if (k.kind == Kind::Int)
        return k.i;
    return reprOf(graph, key);
}

std::string reprOf(const ValueGraph& graph, NodeId id, std::size_t maxLength)
{
    if (!graph.valid(id))
        return "?";
    const Node& n = graph[id];
    switch (n.kind) {
    case Kind::None: return "None";
    case Kind::Bool: return n.flag ? "True" : "False";
    case Kind::Int: return std::to_string(n.i);
    case Kind::BigInt: return n.text;
    case Kind::Float: return formatDouble(n.f);
    case Kind::Complex: return "(" + formatDouble(n.f) + (n.f2 < 0 ? "" : "+") + formatDouble(n.f2) + "j)";
    case Kind::String: return quoteString(n.text, maxLength);
    case Kind::Bytes:
    case Kind::ByteArray: {
        std::string out = n.kind == Kind::Bytes ? "b'" : "bytearray(b'";
        for (unsigned char c : n.text) {
            if (out.size() > maxLength) {
                out += "...";
                break;
            }
            if (c >= 0x20 && c < 0x7F && c != '\'' && c != '\\') {
                out += static_cast<char>(c);
            } else {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\x%02x", c);
                out += buf;
            }
        }
        return out + (n.kind == Kind::Bytes ? "'" : "')");
    }
    case Kind::Tuple: {
        std::string out = "(";
        for (std::size_t i = 0; i < n.items.size(); ++i) {
            if (out.size() > maxLength) {
                out += "...";
                break;
            }
            out += (i ? ", " : "") + reprOf(graph, n.items[i], maxLength / 2);
        }
        return out + (n.items.size() == 1 ? ",)" : ")");
    }
    case Kind::Dtype: return "torch." + n.text;
    case Kind::Device: return "device('" + n.text + "')";
    case Kind::Global: return n.text;
    default: return std::string("<") + kindName(n.kind) + (n.text.empty() ? "" : " " + n.text) + ">";
    }
}

bool walkObject(const ValueGraph& graph, NodeId root, const std::function<void(const WalkVisit&)>& visit,
                std::size_t budget)
{
    if (!graph.valid(root))
        return true;
    if (budget == 0)
        budget = std::max<std::size_t>(std::size_t(1) << 20, graph.size() * 16);
    std::unordered_set<NodeId> entered;
    std::unordered_set<NodeId> onPath;
    std::size_t visits = 0;
    bool complete = true;
    KeyPath path;

    // Explicit stack: graphs can be deep (the interpreter cuts at its depth limit, but walking
    // must not depend on that). Each frame lists the children still to visit; a child's key is made
    // when it is visited (one copy of a 90k-tensor dict's names, not two).
    struct Child {
        NodeId keyNode; // the dict key; kNoNode for a position
        int64_t index;  // the position in a list or tuple
        NodeId node;
    };
    struct Frame {
        std::vector<Child> children;
        std::size_t next = 0;
        NodeId node = kNoNode; // the container this frame walks (kNoNode for leaves)
    };
    std::vector<Frame> stack;

    auto childrenOf = [&](NodeId id) {
        std::vector<Child> out;
        const Node& n = graph[id];
        auto addDictItems = [&](const std::vector<NodeId>& items) {
            for (std::size_t i = 0; i + 1 < items.size(); i += 2)
                out.push_back({items[i], 0, items[i + 1]});
        };
        auto addAttributes = [&](NodeId state) {
            if (!graph.valid(state))
                return;
            const Node& s = graph[state];
            if (s.kind == Kind::Dict) {
                addDictItems(s.items);
            } else if (s.kind == Kind::Tuple && s.items.size() == 2) { // (__dict__, __slots__ dict)
                for (NodeId part : s.items) {
                    if (graph.valid(part) && graph[part].kind == Kind::Dict)
                        addDictItems(graph[part].items);
                }
            }
        };
        switch (n.kind) {
        case Kind::Dict:
            addDictItems(n.items);
            break;
        case Kind::List:
        case Kind::Tuple:
            for (std::size_t i = 0; i < n.items.size(); ++i)
                out.push_back({kNoNode, static_cast<int64_t>(i), n.items[i]});
            if (n.kind == Kind::List && !n.text.empty())
                addAttributes(n.state);
            break;
        case Kind::Object:
            if (graph.valid(n.state)) {
                addAttributes(n.state);
            } else if (graph.valid(n.a) && graph[n.a].kind == Kind::Tuple) { // namedtuple-like REDUCE(cls, args)
                const Node& args = graph[n.a];
                for (std::size_t i = 0; i < args.items.size(); ++i)
                    out.push_back({kNoNode, static_cast<int64_t>(i), args.items[i]});
            }
            break;
        default:
            break;
        }
        return out;
    };

    auto isContainer = [&](NodeId id) {
        const Kind k = graph[id].kind;
        return k == Kind::Dict || k == Kind::List || k == Kind::Tuple || k == Kind::Object;
    };

    auto enter = [&](NodeId id) {
        ++visits;
        const bool container = isContainer(id);
        bool repeat = false;
        if (container) {
            const bool seen = !entered.insert(id).second;
            repeat = onPath.contains(id) || (seen && visits > budget);
            if (seen && visits > budget && !onPath.contains(id))
                complete = false;
        }
        visit(WalkVisit{path, id, repeat});
        if (container && !repeat) {
            onPath.insert(id);
            stack.push_back(Frame{childrenOf(id), 0, id});
        } else {
            stack.push_back(Frame{});
        }
    };

    enter(root);
    while (!stack.empty()) {
        Frame& top = stack.back();
        if (top.next == top.children.size()) {
            if (top.node != kNoNode)
                onPath.erase(top.node);
            stack.pop_back();
            if (!path.empty() && !stack.empty())
                path.pop_back();
            continue;
        }
        const Child child = top.children[top.next++];
        if (child.keyNode == kNoNode)
            path.emplace_back(child.index);
        else
            path.push_back(keyPartOf(graph, child.keyNode));
        enter(child.node);
    }
    return complete;
}

std::vector<TensorEntry> listTensors(const Document& doc)
{
    std::vector<TensorEntry> out;
    std::unordered_set<uint32_t> seen;
    walkObject(doc.graph, doc.root, [&](const WalkVisit& v) {
        const Node& n = doc.graph[v.node];
        if (n.kind != Kind::Tensor)
            return;
        const bool alias = !seen.insert(n.ref).second;
        out.push_back(TensorEntry{v.path, n.ref, alias});
    });
    return out;
}

} // namespace ckpt
