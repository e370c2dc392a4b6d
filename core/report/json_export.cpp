// SPDX-License-Identifier: MIT
#include "ckpt/report/json_export.h"

#include <ostream>

#include <cmath>
#include <unordered_map>

namespace ckpt {
namespace {

using nlohmann::json;

std::string hexOf(const std::string& bytes, std::size_t max)
{
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < bytes.size() && i < max; ++i) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

json tensorFields(const CheckpointFile& file, const TensorInfo& t)
{
    json j;
    j["dtype"] = t.dtypeName.empty() ? std::string(dtypeName(t.dtype)) : t.dtypeName;
    j["shape"] = t.shape;
    j["stride"] = t.stride;
    j["storage_offset"] = t.storageOffset;
    j["nbytes"] = t.nbytes();
    j["layout"] = layoutName(t.layout);
    j["device"] = t.device;
    j["requires_grad"] = t.requiresGrad;
    j["is_parameter"] = t.isParameter;
    if (t.storage >= 0)
        j["storage"] = file.storages()[static_cast<std::size_t>(t.storage)].key;
    if (!t.subclass.empty())
        j["subclass"] = t.subclass;
    if (!t.flags.empty())
        j["flags"] = t.flags;
    if (t.layout == TensorLayout::Quantized) {
        j["qscheme"] = t.quantizer.scheme;
        if (t.quantizer.scheme.starts_with("per_tensor")) {
            j["scale"] = jsonNumber(t.quantizer.scale);
            j["zero_point"] = t.quantizer.zeroPoint;
        } else {
            j["axis"] = t.quantizer.axis;
        }
    }
    if (!t.problem.empty())
        j["problem"] = t.problem;
    return j;
}

class TreeBuilder {
public:
    explicit TreeBuilder(const CheckpointFile& file) : m_file(file), m_graph(file.graph()) {}

    json build(NodeId id, KeyPath& path)
    {
        if (!m_graph.valid(id))
            return json{{"type", "missing"}};
        const Node& n = m_graph[id];
        const bool container = n.kind == Kind::Dict || n.kind == Kind::List || n.kind == Kind::Tuple
                            || n.kind == Kind::Set || n.kind == Kind::FrozenSet || n.kind == Kind::Object;
        if (container) {
            if (const auto it = m_seen.find(id); it != m_seen.end())
                return json{{"type", "ref"}, {"path", keyPathToJson(it->second)}};
            m_seen.emplace(id, path);
        }
        json j;
        j["type"] = kindName(n.kind);
        switch (n.kind) {
        case Kind::None: break;
        case Kind::Bool: j["value"] = n.flag; break;
        case Kind::Int: j["value"] = n.i; break;
        case Kind::BigInt: j["value"] = n.text; break;
        case Kind::Float: j["value"] = jsonNumber(n.f); break;
        case Kind::Complex: j["value"] = json::array({jsonNumber(n.f), jsonNumber(n.f2)}); break;
        case Kind::String: j["value"] = n.text; break;
        case Kind::Bytes:
        case Kind::ByteArray:
            j["size"] = n.text.size();
            j["hex"] = hexOf(n.text, 64);
            break;
        case Kind::Dict: {
            if (!n.text.empty())
                j["class"] = n.text;
            json items = json::array();
            for (std::size_t i = 0; i + 1 < n.items.size(); i += 2) {
                const KeyPart key = keyPartOf(m_graph, n.items[i]);
                path.push_back(key);
                json item;
                item["key"] = std::holds_alternative<int64_t>(key) ? json(std::get<int64_t>(key)) : json(std::get<std::string>(key));
                item["value"] = build(n.items[i + 1], path);
                path.pop_back();
                items.push_back(std::move(item));
            }
            j["items"] = std::move(items);
            if (m_graph.valid(n.state)) {
                path.push_back(std::string("(attributes)"));
                j["attributes"] = build(n.state, path);
                path.pop_back();
            }
            break;
        }
        case Kind::List:
        case Kind::Tuple:
        case Kind::Set:
        case Kind::FrozenSet:
        case Kind::Size:
        case Kind::Slice: {
            if (!n.text.empty())
                j["class"] = n.text;
            json items = json::array();
            for (std::size_t i = 0; i < n.items.size(); ++i) {
                path.push_back(static_cast<int64_t>(i));
                items.push_back(build(n.items[i], path));
                path.pop_back();
            }
            j["items"] = std::move(items);
            break;
        }
        case Kind::Object:
            j["class"] = n.text;
            if (m_graph.valid(n.a)) {
                path.push_back(std::string("(args)"));
                j["args"] = build(n.a, path);
                path.pop_back();
            }
            if (m_graph.valid(n.b)) {
                path.push_back(std::string("(callable)"));
                j["callable"] = build(n.b, path);
                path.pop_back();
            }
            if (m_graph.valid(n.state)) {
                path.push_back(std::string("(state)"));
                j["state"] = build(n.state, path);
                path.pop_back();
            }
            break;
        case Kind::Tensor:
            j.update(tensorFields(m_file, m_file.tensors()[n.ref]));
            break;
        case Kind::Storage: {
            const StorageInfo& s = m_file.storages()[n.ref];
            j["key"] = s.key;
            j["dtype"] = dtypeName(s.dtype);
            j["numel"] = s.numel;
            j["location"] = s.location;
            break;
        }
        case Kind::NdArray: {
            const NdArrayInfo& a = m_file.document().arrays[n.ref];
            j["dtype"] = a.dtype;
            j["shape"] = a.shape;
            if (a.fortranOrder)
                j["fortran_order"] = true;
            if (!a.problem.empty())
                j["problem"] = a.problem;
            break;
        }
        case Kind::Dtype:
        case Kind::Device:
        case Kind::NpDtype:
        case Kind::Layout:
        case Kind::Global:
        case Kind::Invalid:
            j["value"] = n.text;
            break;
        case Kind::Call:
        case Kind::NewObj:
        case Kind::PersistentId:
            break; // raw kinds never survive interpretation
        }
        return j;
    }

private:
    const CheckpointFile& m_file;
    const ValueGraph& m_graph;
    std::unordered_map<NodeId, KeyPath> m_seen;
};

json propertiesToJson(const CheckpointFile& file)
{
    json j = json::object();
    for (const auto& [k, v] : file.properties())
        j[k] = v;
    return j;
}

} // namespace

json keyPathToJson(const KeyPath& path)
{
    json j = json::array();
    for (const auto& part : path) {
        if (const auto* i = std::get_if<int64_t>(&part))
            j.push_back(*i);
        else
            j.push_back(std::get<std::string>(part));
    }
    return j;
}

json tensorEntryToJson(const CheckpointFile& file, const TensorEntry& entry)
{
    json j;
    j["key"] = keyPathToJson(entry.key);
    j.update(tensorFields(file, file.tensors()[entry.tensor]));
    if (entry.alias)
        j["alias"] = true;
    return j;
}

json treeReportToJson(const CheckpointFile& file)
{
    json j;
    j["file"] = file.path();
    j["format"] = formatName(file.format());
    j["properties"] = propertiesToJson(file);
    TreeBuilder builder(file);
    KeyPath path;
    j["root"] = builder.build(file.root(), path);
    j["warnings"] = file.warnings();
    return j;
}

json importsReportToJson(const std::string& path, const ImportsReport& report)
{
    json j;
    j["file"] = path;
    j["dangerous"] = report.anyDangerous();
    j["fully_analysed"] = !report.malformed;
    j["strict"] = report.strict;
    j["counts"] = {{"safe", report.count(ImportSafety::Safe)},
                   {"unknown", report.count(ImportSafety::Unknown)},
                   {"dangerous", report.count(ImportSafety::Dangerous)}};
    json globals = json::array();
    for (const auto& e : report.entries) {
        globals.push_back({{"global", e.path()}, {"module", e.module}, {"name", e.name}, {"record", e.record}, {"count", e.count},
                           {"safety", safetyName(e.safety)}, {"reason", e.reason}});
    }
    j["globals"] = std::move(globals);
    j["notes"] = report.notes;
    return j;
}

nlohmann::json jsonNumber(double v)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    return v;
}

std::string dumpJson(const nlohmann::json& json, int indent)
{
    return json.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace ckpt
