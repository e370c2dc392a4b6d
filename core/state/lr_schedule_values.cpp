// SPDX-License-Identifier: MIT
// Reading a scheduler's pickled state, apart from recognising the scheduler: numbers, lists and
// attributes out of the value graph, and values shown as Python-like text.
#include "lr_schedule_values.h"

#include "ckpt/formats/key_path.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace ckpt::detail {

bool isDict(const ValueGraph& g, NodeId id) { return g.valid(id) && g[id].kind == Kind::Dict; }

std::optional<double> numberOf(const ValueGraph& g, NodeId id)
{
    if (!g.valid(id))
        return std::nullopt;
    const Node& n = g[id];
    switch (n.kind) {
    case Kind::Float: return n.f;
    case Kind::Int: return static_cast<double>(n.i);
    case Kind::Bool: return n.flag ? 1.0 : 0.0;
    default: return std::nullopt;
    }
}

std::optional<int64_t> integerOf(const ValueGraph& g, NodeId id)
{
    if (!g.valid(id))
        return std::nullopt;
    const Node& n = g[id];
    if (n.kind == Kind::Int)
        return n.i;
    if (n.kind == Kind::Float && std::isfinite(n.f) && n.f == std::floor(n.f) && std::fabs(n.f) < 9.0e15)
        return static_cast<int64_t>(n.f);
    return std::nullopt;
}

bool isSequence(const ValueGraph& g, NodeId id)
{
    return g.valid(id) && (g[id].kind == Kind::List || g[id].kind == Kind::Tuple);
}

// A list of numbers; nullopt when it is not one. `tensors` is set when some items are tensors
// (torch's tensor learning rates), whose values are not in the pickle.
std::optional<std::vector<double>> numbersOf(const ValueGraph& g, NodeId id, bool* tensors)
{
    if (!isSequence(g, id))
        return std::nullopt;
    std::vector<double> out;
    for (NodeId item : g[id].items) {
        const auto v = numberOf(g, item);
        if (!v) {
            if (tensors && g.valid(item) && g[item].kind == Kind::Tensor)
                *tensors = true;
            return std::nullopt;
        }
        out.push_back(*v);
    }
    return out;
}

// An attribute of a pickled object (its BUILD state) or an entry of a dict.
NodeId attributeOf(const ValueGraph& g, NodeId obj, std::string_view name)
{
    if (!g.valid(obj))
        return kNoNode;
    const Node& n = g[obj];
    if (n.kind == Kind::Dict) {
        const NodeId v = g.get(obj, name);
        if (v != kNoNode)
            return v;
    }
    if (n.kind != Kind::Dict && n.kind != Kind::Object)
        return kNoNode;
    if (!g.valid(n.state))
        return n.kind == Kind::Object ? g.get(obj, name) : kNoNode;
    const Node& s = g[n.state];
    if (s.kind == Kind::Dict)
        return g.get(n.state, name);
    if (s.kind == Kind::Tuple) { // (__dict__, slots)
        for (NodeId part : s.items) {
            const NodeId v = isDict(g, part) ? g.get(part, name) : kNoNode;
            if (v != kNoNode)
                return v;
        }
    }
    return kNoNode;
}

std::string formatNumber(double v)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    std::string s(buf, r.ptr);
    if (s.find_first_of(".e") == std::string::npos)
        s += ".0";
    return s;
}

std::string formatNumbers(const std::vector<double>& v)
{
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
        out += (i ? ", " : "") + formatNumber(v[i]);
    return out + "]";
}

// A short Python-like rendering of a hyperparameter value.
std::string display(const ValueGraph& g, NodeId id, int depth)
{
    if (!g.valid(id))
        return "?";
    const Node& n = g[id];
    switch (n.kind) {
    case Kind::Float: return formatNumber(n.f);
    case Kind::List:
    case Kind::Tuple: {
        const bool list = n.kind == Kind::List;
        std::string out = list ? "[" : "(";
        for (std::size_t i = 0; i < n.items.size(); ++i) {
            if (out.size() > 200 || depth > 3) {
                out += "...";
                break;
            }
            out += (i ? ", " : "") + display(g, n.items[i], depth + 1);
        }
        return out + (!list && n.items.size() == 1 ? ",)" : list ? "]" : ")");
    }
    case Kind::Dict: {
        std::string out = "{";
        for (std::size_t i = 0; i + 1 < n.items.size(); i += 2) {
            if (out.size() > 200 || depth > 3) {
                out += "...";
                break;
            }
            out += (i ? ", " : "") + display(g, n.items[i], depth + 1) + ": " + display(g, n.items[i + 1], depth + 1);
        }
        return out + "}";
    }
    default: return reprOf(g, id);
    }
}

bool closeTo(double a, double b, double rel)
{
    if (a == b)
        return true;
    const double scale = std::max(std::fabs(a), std::fabs(b));
    return std::fabs(a - b) <= rel * scale;
}

} // namespace ckpt::detail
