// SPDX-License-Identifier: MIT
#include "ckpt/state/state_values.h"

#include <cmath>
#include <cstring>

namespace ckpt {
namespace {

std::optional<double> tensorScalar(const CheckpointFile& file, const TensorInfo& t)
{
    if (t.numel() != 1 || !t.hasData())
        return std::nullopt;
    std::vector<std::byte> scratch;
    Bytes b;
    try {
        b = file.tensorRegion(t, scratch);
    } catch (const FormatError&) {
        return std::nullopt;
    }
    std::vector<std::byte> v(b.begin(), b.end());
    if (file.bigEndian())
        swapElementBytes(v, t.dtype);
    auto as = [&](auto zero) {
        decltype(zero) x;
        std::memcpy(&x, v.data(), sizeof x);
        return static_cast<double>(x);
    };
    switch (t.dtype) {
    case DType::Float32: return v.size() >= 4 ? std::optional(as(float{})) : std::nullopt;
    case DType::Float64: return v.size() >= 8 ? std::optional(as(double{})) : std::nullopt;
    case DType::Int64: return v.size() >= 8 ? std::optional(as(int64_t{})) : std::nullopt;
    case DType::Int32: return v.size() >= 4 ? std::optional(as(int32_t{})) : std::nullopt;
    default: return std::nullopt;
    }
}

} // namespace

std::string numberText(double v)
{
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
        return std::to_string(static_cast<int64_t>(v));
    char buf[32];
    for (int precision = 1; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, v);
        if (std::strtod(buf, nullptr) == v)
            break;
    }
    return buf;
}

// A one-element tensor's value (optimizer `step` is a 0-d tensor since torch 1.12).

std::optional<double> scalarOf(const CheckpointFile& file, NodeId id)
{
    const ValueGraph& g = file.graph();
    if (!g.valid(id))
        return std::nullopt;
    const Node& n = g[id];
    switch (n.kind) {
    case Kind::Int: return static_cast<double>(n.i);
    case Kind::Float: return n.f;
    case Kind::Bool: return n.flag ? 1.0 : 0.0;
    case Kind::Tensor: return tensorScalar(file, file.tensors()[n.ref]);
    default: return std::nullopt;
    }
}

// Text of a simple value, or empty when it is not simple.
namespace {

// A list may hold itself (pickle's memo makes cycles: l = []; l.append(l)), so nesting is bounded;
// a value nested deeper has no simple text.
constexpr int kMaxSimpleDepth = 8;

std::string simpleText(const CheckpointFile& file, NodeId id, int depth)
{
    const ValueGraph& g = file.graph();
    if (!g.valid(id) || depth > kMaxSimpleDepth)
        return {};
    const Node& n = g[id];
    switch (n.kind) {
    case Kind::String: return n.text;
    case Kind::BigInt: return n.text;
    case Kind::None: return "None";
    case Kind::Bool: return n.flag ? "True" : "False";
    case Kind::Tuple:
    case Kind::List: {
        std::string out = "[";
        for (std::size_t i = 0; i < n.items.size() && i < 16; ++i) {
            const std::string item = simpleText(file, n.items[i], depth + 1);
            if (item.empty())
                return {};
            out += (i ? ", " : "") + item;
        }
        return out + (n.items.size() > 16 ? ", ...]" : "]");
    }
    case Kind::Dtype:
    case Kind::Device:
        return n.text;
    default:
        if (auto v = scalarOf(file, id))
            return numberText(*v);
        return {};
    }
}

} // namespace

std::string simpleText(const CheckpointFile& file, NodeId id) { return simpleText(file, id, 0); }

bool isDict(const ValueGraph& g, NodeId id) { return g.valid(id) && g[id].kind == Kind::Dict; }

std::vector<std::pair<std::string, NodeId>> dictItems(const ValueGraph& g, NodeId id)
{
    std::vector<std::pair<std::string, NodeId>> out;
    if (!isDict(g, id))
        return out;
    const Node& d = g[id];
    out.reserve(d.items.size() / 2);
    for (std::size_t i = 0; i + 1 < d.items.size(); i += 2) {
        KeyPart k = keyPartOf(g, d.items[i]);
        out.emplace_back(std::holds_alternative<int64_t>(k) ? std::to_string(std::get<int64_t>(k))
                                                           : std::move(std::get<std::string>(k)),
                         d.items[i + 1]);
    }
    return out;
}

namespace {

nlohmann::json toPlain(const CheckpointFile& file, NodeId id, std::size_t& budget, int depth)
{
    const ValueGraph& g = file.graph();
    if (!g.valid(id) || budget == 0 || depth > 64)
        return nullptr;
    --budget;
    const Node& n = g[id];
    switch (n.kind) {
    case Kind::None: return nullptr;
    case Kind::Bool: return n.flag;
    case Kind::Int: return n.i;
    case Kind::Float: return n.f;
    case Kind::String: return n.text;
    case Kind::Dict: {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [k, v] : dictItems(g, id))
            out[k] = toPlain(file, v, budget, depth + 1);
        return out;
    }
    case Kind::List:
    case Kind::Tuple: {
        nlohmann::json out = nlohmann::json::array();
        for (const NodeId item : n.items)
            out.push_back(toPlain(file, item, budget, depth + 1));
        return out;
    }
    case Kind::Object:
        if (n.text == "omegaconf.dictconfig.DictConfig" || n.text == "omegaconf.listconfig.ListConfig")
            return toPlain(file, g.get(n.state, "_content"), budget, depth + 1);
        if (n.text.starts_with("omegaconf.nodes."))
            return toPlain(file, g.get(n.state, "_val"), budget, depth + 1);
        [[fallthrough]];
    default: {
        const std::string text = simpleText(file, id);
        return text.empty() ? nlohmann::json(reprOf(g, id)) : nlohmann::json(text);
    }
    }
}

} // namespace

nlohmann::json plainJson(const CheckpointFile& file, NodeId id, std::size_t maxValues)
{
    return toPlain(file, id, maxValues, 0);
}

std::vector<std::pair<std::string, NodeId>> fieldsOf(const ValueGraph& g, NodeId id)
{
    if (g.valid(id) && g[id].kind == Kind::Object)
        return dictItems(g, g[id].state);
    return dictItems(g, id);
}

} // namespace ckpt
