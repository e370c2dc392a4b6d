// SPDX-License-Identifier: MIT
// The pickle interpreter's reads of the raw (unconverted) graph: call arguments, global paths,
// and ints, numbers, strings and shapes taken as they were pickled, without converting them.
#include "pickle_interpreter_impl.h"

namespace ckpt::detail {

std::string Interpreter::globalPath(NodeId id) const
{
    return m_raw.valid(id) && m_raw[id].kind == Kind::Global ? m_raw[id].text : std::string();
}

const std::vector<NodeId>& Interpreter::argItems(NodeId args) const
{
    static const std::vector<NodeId> kEmpty;
    if (!m_raw.valid(args))
        return kEmpty;
    const Node& a = m_raw[args];
    return (a.kind == Kind::Tuple || a.kind == Kind::List) ? a.items : kEmpty;
}

NodeId Interpreter::arg(NodeId args, std::size_t i) const
{
    const auto& items = argItems(args);
    return i < items.size() ? items[i] : kNoNode;
}

std::optional<int64_t> Interpreter::rawInt(NodeId id) const
{
    if (!m_raw.valid(id))
        return std::nullopt;
    const Node& n = m_raw[id];
    if (n.kind == Kind::Int)
        return n.i;
    if (n.kind == Kind::Bool)
        return n.flag ? 1 : 0;
    return std::nullopt;
}

std::optional<double> Interpreter::rawNumber(NodeId id) const
{
    if (!m_raw.valid(id))
        return std::nullopt;
    const Node& n = m_raw[id];
    if (n.kind == Kind::Float)
        return n.f;
    if (auto i = rawInt(id))
        return static_cast<double>(*i);
    return std::nullopt;
}

std::string Interpreter::rawString(NodeId id) const
{
    return m_raw.valid(id) && m_raw[id].kind == Kind::String ? m_raw[id].text : std::string();
}

bool Interpreter::rawTruthy(NodeId id) const
{
    auto v = rawInt(id);
    return v && *v != 0;
}

// Tuples of ints, or torch.Size((...)) calls.
std::optional<std::vector<int64_t>> Interpreter::rawInts(NodeId id) const
{
    if (!m_raw.valid(id))
        return std::nullopt;
    const Node& n = m_raw[id];
    if (n.kind == Kind::Call && globalPath(n.a) == "torch.Size")
        return rawInts(arg(n.b, 0));
    if (n.kind != Kind::Tuple && n.kind != Kind::List)
        return std::nullopt;
    std::vector<int64_t> out;
    out.reserve(n.items.size());
    for (NodeId item : n.items) {
        auto v = rawInt(item);
        if (!v)
            return std::nullopt;
        out.push_back(*v);
    }
    return out;
}

} // namespace ckpt::detail
