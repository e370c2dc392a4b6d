// SPDX-License-Identifier: MIT
#include "core/pickle_interpreter.h"

#include "core/errors.h"
#include "core/float_formats.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

namespace ckpt {
namespace {

constexpr std::string_view kUtils = "torch._utils.";

bool isOneOf(std::string_view path, std::initializer_list<std::string_view> names)
{
    for (auto n : names) {
        if (path == n)
            return true;
    }
    return false;
}

// Numpy's dtype string ('u4', 'f8', 'b1'...) to its printed name and item size.
std::pair<std::string, std::size_t> numpyDtypeName(std::string_view code)
{
    if (code.empty())
        return {"unknown", 0};
    const char kind = code[0];
    std::size_t size = 0;
    for (char c : code.substr(1)) {
        if (c < '0' || c > '9')
            return {std::string(code), 0};
        size = size * 10 + static_cast<std::size_t>(c - '0');
        if (size > (1u << 20))
            return {std::string(code), 0};
    }
    const std::string bits = std::to_string(size * 8);
    switch (kind) {
    case 'b': return {"bool", size};
    case 'i': return {"int" + bits, size};
    case 'u': return {"uint" + bits, size};
    case 'f': return {"float" + bits, size};
    case 'c': return {"complex" + bits, size};
    case 'O': return {"object", size};
    case 'S': return {"|S" + std::to_string(size), size};
    case 'U': return {"<U" + std::to_string(size), size * 4};
    case 'V': return {"|V" + std::to_string(size), size};
    case 'M': return {"datetime64", size};
    case 'm': return {"timedelta64", size};
    default: return {std::string(code), size};
    }
}

class Interpreter {
public:
    Interpreter(const ValueGraph& raw, Document& doc, const StorageResolver& resolver, const InterpretOptions& options)
        : m_raw(raw)
        , m_doc(doc)
        , m_out(doc.graph)
        , m_resolver(resolver)
        , m_options(options)
        , m_map(raw.size(), kNoNode)
    {
    }

    NodeId convert(NodeId id, std::size_t depth)
    {
        if (!m_raw.valid(id))
            return invalid("a reference to a value that does not exist");
        if (m_map[id] != kNoNode)
            return m_map[id];
        if (depth > m_options.maxDepth) {
            if (!m_depthWarned) {
                m_doc.warnings.push_back("the object nests deeper than " + std::to_string(m_options.maxDepth)
                                         + " levels; deeper parts are not shown (limit exceeded)");
                m_depthWarned = true;
            }
            return m_map[id] = invalid("nested deeper than " + std::to_string(m_options.maxDepth) + " levels");
        }
        const Node& n = m_raw[id];
        switch (n.kind) {
        case Kind::None:
        case Kind::Bool:
        case Kind::Int:
        case Kind::BigInt:
        case Kind::Float:
        case Kind::Complex:
        case Kind::String:
        case Kind::Bytes:
        case Kind::ByteArray:
            return reserve(id, Node{.kind = n.kind, .flag = n.flag, .i = n.i, .f = n.f, .f2 = n.f2, .text = n.text});
        case Kind::Tuple:
        case Kind::List:
        case Kind::Set:
        case Kind::FrozenSet: {
            const NodeId out = reserve(id, Node{.kind = n.kind, .text = n.text});
            auto items = convertAll(n.items, depth + 1);
            m_out[out].items = std::move(items);
            return out;
        }
        case Kind::Dict: {
            const NodeId out = reserve(id, Node{.kind = Kind::Dict});
            addDictItems(out, n.items, depth + 1);
            if (n.state != kNoNode) {
                const NodeId state = convert(n.state, depth + 1);
                m_out[out].state = state;
            }
            return out;
        }
        case Kind::Global:
            return reserve(id, globalValue(n.text));
        case Kind::PersistentId:
        case Kind::Call:
        case Kind::NewObj: {
            // Reserve first so a cycle back to this node finds it.
            const NodeId out = reserve(id, Node{.kind = Kind::Invalid, .text = "(under construction)"});
            Node result = n.kind == Kind::PersistentId ? persistent(n, depth)
                        : n.kind == Kind::Call         ? call(globalPath(n.a), n.a, n.b, n, depth)
                                                       : newObject(n, depth);
            m_out[out] = std::move(result);
            return out;
        }
        default:
            return reserve(id, Node{.kind = Kind::Invalid, .text = std::string("unexpected ") + kindName(n.kind)});
        }
    }

private:
    NodeId reserve(NodeId rawId, Node node)
    {
        const NodeId out = m_out.add(std::move(node));
        m_map[rawId] = out;
        return out;
    }

    NodeId invalid(std::string why) { return m_out.add(Node{.kind = Kind::Invalid, .text = std::move(why)}); }

    std::vector<NodeId> convertAll(const std::vector<NodeId>& ids, std::size_t depth)
    {
        std::vector<NodeId> out;
        out.reserve(ids.size());
        for (NodeId id : ids)
            out.push_back(convert(id, depth));
        return out;
    }

    // ---- raw-graph accessors
    std::string globalPath(NodeId id) const
    {
        return m_raw.valid(id) && m_raw[id].kind == Kind::Global ? m_raw[id].text : std::string();
    }

    const std::vector<NodeId>& argItems(NodeId args) const
    {
        static const std::vector<NodeId> kEmpty;
        if (!m_raw.valid(args))
            return kEmpty;
        const Node& a = m_raw[args];
        return (a.kind == Kind::Tuple || a.kind == Kind::List) ? a.items : kEmpty;
    }

    NodeId arg(NodeId args, std::size_t i) const
    {
        const auto& items = argItems(args);
        return i < items.size() ? items[i] : kNoNode;
    }

    std::optional<int64_t> rawInt(NodeId id) const
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

    std::optional<double> rawNumber(NodeId id) const
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

    std::string rawString(NodeId id) const
    {
        return m_raw.valid(id) && m_raw[id].kind == Kind::String ? m_raw[id].text : std::string();
    }

    bool rawTruthy(NodeId id) const
    {
        auto v = rawInt(id);
        return v && *v != 0;
    }

    // Tuples of ints, or torch.Size((...)) calls.
    std::optional<std::vector<int64_t>> rawInts(NodeId id) const
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

    // ---- dicts
    std::string canonicalKey(NodeId outKey) const
    {
        const Node& k = m_out[outKey];
        switch (k.kind) {
        case Kind::String: return "s:" + k.text;
        case Kind::Bytes: return "b:" + k.text;
        case Kind::Int: return "i:" + std::to_string(k.i);
        case Kind::Bool: return std::string("i:") + (k.flag ? "1" : "0");
        case Kind::BigInt: return "i:" + k.text;
        case Kind::None: return "n";
        case Kind::Float:
            if (std::isfinite(k.f) && k.f == std::floor(k.f) && std::fabs(k.f) < 9e18)
                return "i:" + std::to_string(static_cast<int64_t>(k.f));
            return "f:" + std::to_string(std::bit_cast<uint64_t>(k.f));
        default: return "#" + std::to_string(outKey);
        }
    }

    // Python dict semantics: a repeated key keeps its first position and takes the last value.
    void addDictItems(NodeId out, const std::vector<NodeId>& rawKv, std::size_t depth)
    {
        std::unordered_map<std::string, std::size_t> index;
        {
            const auto& existing = m_out[out].items;
            for (std::size_t i = 0; i + 1 < existing.size(); i += 2)
                index.emplace(canonicalKey(existing[i]), i);
        }
        for (std::size_t i = 0; i + 1 < rawKv.size(); i += 2) {
            const NodeId key = convert(rawKv[i], depth);
            const NodeId value = convert(rawKv[i + 1], depth);
            auto& items = m_out[out].items;
            auto [it, inserted] = index.emplace(canonicalKey(key), items.size());
            if (inserted) {
                items.push_back(key);
                items.push_back(value);
            } else {
                items[it->second + 1] = value;
            }
        }
    }

    // ---- globals as values
    Node globalValue(const std::string& path)
    {
        if (path.starts_with("torch.") && path.find('.', 6) == std::string::npos) {
            const DType dt = dtypeFromTorchName(std::string_view(path).substr(6));
            if (dt != DType::Unknown)
                return Node{.kind = Kind::Dtype, .text = std::string(dtypeName(dt))};
            static const std::initializer_list<std::string_view> kOtherDtypes = {
                "torch.uint1", "torch.uint2", "torch.uint3", "torch.uint4", "torch.uint5", "torch.uint6",
                "torch.uint7", "torch.int1", "torch.int2", "torch.int3", "torch.int4", "torch.int5",
                "torch.int6", "torch.int7"};
            if (isOneOf(path, kOtherDtypes))
                return Node{.kind = Kind::Dtype, .text = path.substr(6)};
        }
        return Node{.kind = Kind::Global, .text = path};
    }

    // ---- storages
    Node persistent(const Node& n, std::size_t depth)
    {
        (void)depth;
        const Node& pid = m_raw[n.a];
        if (pid.kind == Kind::Tuple && !pid.items.empty() && rawString(pid.items[0]) == "storage") {
            if (pid.items.size() < 5)
                return Node{.kind = Kind::Invalid, .text = "a storage persistent id with fewer than 5 fields"};
            StorageRequest req;
            req.typeName = globalPath(pid.items[1]);
            req.untyped = req.typeName.ends_with("UntypedStorage");
            req.dtype = req.untyped ? DType::UInt8 : dtypeFromStorageClass(req.typeName);
            const Node& key = m_raw[pid.items[2]];
            req.key = key.kind == Kind::Int ? std::to_string(key.i) : key.text;
            req.location = rawString(pid.items[3]);
            const auto numel = rawInt(pid.items[4]);
            if (!numel || *numel < 0)
                return Node{.kind = Kind::Invalid, .text = "storage '" + req.key + "' has no valid element count"};
            req.numel = static_cast<uint64_t>(*numel);
            if (pid.items.size() >= 6 && m_raw[pid.items[5]].kind != Kind::None)
                m_doc.warnings.push_back("storage '" + req.key
                                         + "' is a pre-1.0 storage view; its tensors are shown over the whole root storage");
            if (req.dtype == DType::Unknown)
                m_doc.warnings.push_back("storage '" + req.key + "' has an unknown storage type '" + req.typeName + "'");
            std::string problem;
            const int32_t index = m_resolver ? m_resolver(req, problem) : -1;
            if (index < 0)
                return Node{.kind = Kind::Invalid,
                            .text = problem.empty() ? "storage '" + req.key + "' cannot be resolved" : problem};
            return Node{.kind = Kind::Storage, .ref = static_cast<uint32_t>(index)};
        }
        if (pid.kind == Kind::Tuple && !pid.items.empty() && rawString(pid.items[0]) == "module") {
            const std::string cls = pid.items.size() > 1 ? globalPath(pid.items[1]) : std::string();
            return Node{.kind = Kind::Object, .text = cls.empty() ? "(pickled module class)" : cls};
        }
        return Node{.kind = Kind::Invalid, .text = "an unsupported persistent id"};
    }

    // ---- tensors
    int32_t storageOf(NodeId rawStorageArg, std::size_t depth, std::string& problem)
    {
        const NodeId s = convert(rawStorageArg, depth + 1);
        const Node& node = m_out[s];
        if (node.kind == Kind::Storage)
            return static_cast<int32_t>(node.ref);
        problem = node.kind == Kind::Invalid ? node.text : "its storage argument is not a storage";
        return -1;
    }

    void checkView(TensorInfo& t)
    {
        if (t.storage < 0) {
            if (t.problem.empty())
                t.problem = "no storage";
            return;
        }
        const StorageInfo& s = m_doc.storages[static_cast<std::size_t>(t.storage)];
        if (!s.problem.empty() && t.problem.empty())
            t.problem = s.problem;
        if (!t.problem.empty())
            return;
        if (t.shape.size() != t.stride.size()) {
            t.problem = "shape and stride have different ranks";
            return;
        }
        const std::size_t elem = dtypeSize(t.dtype);
        if (elem == 0) {
            t.problem = "unknown element type";
            return;
        }
        const Int128 storageElems = static_cast<Int128>(s.nbytes()) / static_cast<Int128>(elem);
        Int128 last = t.storageOffset;
        bool empty = false;
        for (std::size_t d = 0; d < t.shape.size(); ++d) {
            if (t.shape[d] < 0 || t.stride[d] < 0) {
                t.problem = "negative size or stride";
                return;
            }
            if (t.shape[d] == 0)
                empty = true;
            else
                last += static_cast<Int128>(t.shape[d] - 1) * t.stride[d];
            if (last > (static_cast<Int128>(1) << 100)) {
                t.problem = "the view's extent overflows";
                return;
            }
        }
        if (t.storageOffset < 0) {
            t.problem = "negative storage offset";
            return;
        }
        if (!empty && last >= storageElems) {
            t.problem = "the view (offset " + std::to_string(t.storageOffset) + ") reaches element "
                      + std::to_string(static_cast<int64_t>(last)) + " but its storage holds "
                      + std::to_string(static_cast<int64_t>(storageElems)) + " elements";
        }
    }

    NodeId addTensor(TensorInfo t)
    {
        m_doc.tensors.push_back(std::move(t));
        return static_cast<NodeId>(m_doc.tensors.size() - 1);
    }

    Node tensorNode(TensorInfo t) { return Node{.kind = Kind::Tensor, .ref = addTensor(std::move(t))}; }

    std::string dtypeArg(NodeId raw, std::size_t depth)
    {
        const NodeId d = convert(raw, depth + 1);
        return m_out[d].kind == Kind::Dtype ? m_out[d].text : std::string("unknown");
    }

    void setDtype(TensorInfo& t, std::string name)
    {
        t.dtype = dtypeFromTorchName(name);
        t.dtypeName = std::move(name);
    }

    void readMetadataArg(TensorInfo& t, NodeId raw)
    {
        if (!m_raw.valid(raw) || m_raw[raw].kind != Kind::Dict)
            return;
        const Node& d = m_raw[raw];
        for (std::size_t i = 0; i + 1 < d.items.size(); i += 2) {
            if (rawTruthy(d.items[i + 1])) {
                t.flags += (t.flags.empty() ? "" : ",") + rawString(d.items[i]);
            }
        }
    }

    // _rebuild_tensor / _v2 / _v3 / _rebuild_qtensor share (storage, offset, size, stride).
    TensorInfo denseTensor(NodeId args, std::size_t depth, bool v3)
    {
        TensorInfo t;
        std::string problem;
        t.storage = storageOf(arg(args, 0), depth, problem);
        t.problem = problem;
        if (t.storage >= 0) {
            const StorageInfo& s = m_doc.storages[static_cast<std::size_t>(t.storage)];
            t.device = s.location;
            if (!v3)
                setDtype(t, std::string(dtypeName(s.dtype)));
        }
        if (v3)
            setDtype(t, dtypeArg(arg(args, 6), depth));
        const auto offset = rawInt(arg(args, 1));
        const auto shape = rawInts(arg(args, 2));
        const auto stride = rawInts(arg(args, 3));
        if (!offset || !shape || !stride) {
            t.problem = "malformed tensor arguments (offset, size or stride is not a number list)";
            return t;
        }
        t.storageOffset = *offset;
        t.shape = *shape;
        t.stride = *stride;
        t.requiresGrad = rawTruthy(arg(args, 4));
        readMetadataArg(t, arg(args, v3 ? 7 : 6));
        checkView(t);
        return t;
    }

    std::optional<TensorInfo> tensorOf(NodeId raw, std::size_t depth)
    {
        const NodeId n = convert(raw, depth + 1);
        if (m_out[n].kind != Kind::Tensor)
            return std::nullopt;
        return m_doc.tensors[m_out[n].ref];
    }

    Node rebuildCall(std::string_view fn, NodeId args, std::size_t depth)
    {
        if (fn == "_rebuild_tensor_v2" || fn == "_rebuild_tensor")
            return tensorNode(denseTensor(args, depth, false));
        if (fn == "_rebuild_tensor_v3")
            return tensorNode(denseTensor(args, depth, true));
        if (fn == "_rebuild_parameter" || fn == "_rebuild_parameter_with_state") {
            auto t = tensorOf(arg(args, 0), depth);
            if (!t)
                return Node{.kind = Kind::Invalid, .text = "a Parameter whose data is not a tensor"};
            t->isParameter = true;
            t->requiresGrad = rawTruthy(arg(args, 1));
            return tensorNode(std::move(*t));
        }
        if (fn == "_rebuild_qtensor") {
            TensorInfo t = denseTensor(args, depth, false);
            t.layout = TensorLayout::Quantized;
            t.requiresGrad = rawTruthy(arg(args, 5));
            const NodeId q = arg(args, 4);
            std::string scheme = globalPath(arg(q, 0));
            if (scheme.starts_with("torch."))
                scheme = scheme.substr(6);
            t.quantizer.scheme = scheme;
            if (scheme.starts_with("per_tensor")) {
                t.quantizer.scale = rawNumber(arg(q, 1)).value_or(0);
                t.quantizer.zeroPoint = rawInt(arg(q, 2)).value_or(0);
            } else {
                t.quantizer.scales = convert(arg(q, 1), depth + 1);
                t.quantizer.zeroPoints = convert(arg(q, 2), depth + 1);
                t.quantizer.axis = rawInt(arg(q, 3)).value_or(-1);
            }
            return tensorNode(std::move(t));
        }
        if (fn == "_rebuild_sparse_tensor" || fn == "_rebuild_sparse_csr_tensor") {
            TensorInfo t;
            const NodeId layout = convert(arg(args, 0), depth + 1);
            const std::string layoutText = m_out[layout].kind == Kind::Layout ? m_out[layout].text : "";
            const NodeId data = arg(args, 1);
            const bool coo = layoutText == "torch.sparse_coo" || (layoutText.empty() && fn == "_rebuild_sparse_tensor");
            t.layout = coo                                  ? TensorLayout::SparseCoo
                     : layoutText == "torch.sparse_csc"     ? TensorLayout::SparseCsc
                     : layoutText == "torch.sparse_bsr"     ? TensorLayout::SparseBsr
                     : layoutText == "torch.sparse_bsc"     ? TensorLayout::SparseBsc
                                                            : TensorLayout::SparseCsr;
            const std::size_t valuesAt = coo ? 1 : 2;
            const std::size_t sizeAt = coo ? 2 : 3;
            for (std::size_t i = 0; i <= valuesAt; ++i)
                t.components.push_back(convert(arg(data, i), depth + 1));
            if (auto values = tensorOf(arg(data, valuesAt), depth)) {
                t.dtype = values->dtype;
                t.dtypeName = values->dtypeName;
                t.device = values->device;
            }
            t.shape = rawInts(arg(data, sizeAt)).value_or(std::vector<int64_t>{});
            return tensorNode(std::move(t));
        }
        if (fn == "_rebuild_meta_tensor_no_storage") {
            TensorInfo t;
            t.layout = TensorLayout::Meta;
            t.device = "meta";
            setDtype(t, dtypeArg(arg(args, 0), depth));
            t.shape = rawInts(arg(args, 1)).value_or(std::vector<int64_t>{});
            t.stride = rawInts(arg(args, 2)).value_or(std::vector<int64_t>{});
            t.requiresGrad = rawTruthy(arg(args, 3));
            return tensorNode(std::move(t));
        }
        if (fn == "_rebuild_device_tensor_from_cpu_tensor") {
            auto t = tensorOf(arg(args, 0), depth);
            if (!t)
                return Node{.kind = Kind::Invalid, .text = "a device tensor whose CPU copy is not a tensor"};
            t->device = rawString(arg(args, 2));
            t->requiresGrad = rawTruthy(arg(args, 3));
            return tensorNode(std::move(*t));
        }
        if (fn == "_rebuild_device_tensor_from_numpy" || fn == "_rebuild_xla_tensor" || fn == "_rebuild_wrapper_subclass"
            || fn == "_rebuild_nested_tensor") {
            TensorInfo t;
            t.layout = TensorLayout::NoStorage;
            if (fn == "_rebuild_wrapper_subclass") {
                t.subclass = globalPath(arg(args, 0));
                setDtype(t, dtypeArg(arg(args, 1), depth));
                t.shape = rawInts(arg(args, 2)).value_or(std::vector<int64_t>{});
                t.stride = rawInts(arg(args, 3)).value_or(std::vector<int64_t>{});
                t.storageOffset = rawInt(arg(args, 4)).value_or(0);
                t.device = m_out[convert(arg(args, 6), depth + 1)].text;
            } else if (fn == "_rebuild_nested_tensor") {
                t.subclass = "nested";
                for (std::size_t i = 0; i < 4; ++i)
                    t.components.push_back(convert(arg(args, i), depth + 1));
            } else {
                const NodeId array = convert(arg(args, 0), depth + 1);
                t.components.push_back(array);
                setDtype(t, dtypeArg(arg(args, 1), depth));
                t.device = rawString(arg(args, 2));
                if (m_out[array].kind == Kind::NdArray)
                    t.shape = m_doc.arrays[m_out[array].ref].shape;
            }
            t.problem = "the tensor's bytes are not stored as a storage record";
            return tensorNode(std::move(t));
        }
        return Node{.kind = Kind::Invalid, .text = std::string("unknown tensor rebuild function ") + std::string(fn)};
    }

    // ---- numpy
    Node numpyDtype(NodeId args, const Node& rawCall, std::size_t depth)
    {
        (void)depth;
        auto [name, size] = numpyDtypeName(rawString(arg(args, 0)));
        char order = '=';
        if (m_raw.valid(rawCall.state)) {
            const std::string o = rawString(arg(rawCall.state, 1));
            if (!o.empty())
                order = o[0];
        }
        if (order == '>' && size > 1)
            name = ">" + name; // numpy prints a non-native byte order explicitly
        return Node{.kind = Kind::NpDtype, .i = static_cast<int64_t>(size), .text = name, .ref = static_cast<uint8_t>(order)};
    }

    Node ndarray(NdArrayInfo a)
    {
        if (m_out.valid(a.data) && m_out[a.data].kind != Kind::List && a.dtype != "object") {
            Int128 need = static_cast<Int128>(a.itemSize);
            for (int64_t d : a.shape)
                need = d < 0 ? -1 : need * d;
            const std::size_t have = m_out[a.data].text.size();
            if (need != static_cast<Int128>(have))
                a.problem = "the array needs " + std::to_string(static_cast<int64_t>(need)) + " bytes but holds "
                          + std::to_string(have);
        }
        m_doc.arrays.push_back(std::move(a));
        return Node{.kind = Kind::NdArray, .ref = static_cast<uint32_t>(m_doc.arrays.size() - 1)};
    }

    void applyDtype(NdArrayInfo& a, NodeId convertedDtype)
    {
        if (!m_out.valid(convertedDtype) || m_out[convertedDtype].kind != Kind::NpDtype) {
            a.dtype = "unknown";
            return;
        }
        const Node& d = m_out[convertedDtype];
        a.dtype = d.text;
        a.itemSize = static_cast<std::size_t>(d.i);
        a.byteOrder = static_cast<char>(d.ref);
    }

    Node numpyReconstruct(const Node& rawCall, std::size_t depth)
    {
        NdArrayInfo a;
        const auto& st = argItems(rawCall.state);
        std::size_t base = st.size() == 5 ? 1 : 0;
        if (st.size() != 4 && st.size() != 5)
            return Node{.kind = Kind::Object, .text = "numpy.ndarray"};
        a.shape = rawInts(st[base]).value_or(std::vector<int64_t>{});
        applyDtype(a, convert(st[base + 1], depth + 1));
        a.fortranOrder = rawTruthy(st[base + 2]);
        a.data = convert(st[base + 3], depth + 1);
        if (m_out[a.data].kind == Kind::String) // Python 2 str data: latin-1 characters
            a.data = latin1Bytes(m_out[a.data].text, Kind::Bytes);
        return ndarray(std::move(a));
    }

    Node numpyScalar(NodeId args, std::size_t depth)
    {
        const NodeId dtype = convert(arg(args, 0), depth + 1);
        NodeId data = convert(arg(args, 1), depth + 1);
        if (m_out[dtype].kind != Kind::NpDtype || (m_out[data].kind != Kind::Bytes && m_out[data].kind != Kind::String))
            return Node{.kind = Kind::Object, .text = "numpy scalar"};
        if (m_out[data].kind == Kind::String)
            data = latin1Bytes(m_out[data].text, Kind::Bytes);
        const std::string name = m_out[dtype].text;
        const std::string& b = m_out[data].text;
        auto le = [&](std::size_t n) {
            uint64_t v = 0;
            for (std::size_t i = 0; i < n && i < b.size(); ++i)
                v |= static_cast<uint64_t>(static_cast<uint8_t>(b[i])) << (8 * i);
            return v;
        };
        const std::size_t size = static_cast<std::size_t>(m_out[dtype].i);
        if (b.size() != size)
            return Node{.kind = Kind::Object, .text = "numpy scalar"};
        if (name == "bool")
            return Node{.kind = Kind::Bool, .flag = le(1) != 0};
        if (name.starts_with("int") && size <= 8) {
            uint64_t v = le(size);
            if (size < 8 && (v >> (8 * size - 1)) & 1)
                v |= ~uint64_t(0) << (8 * size);
            return Node{.kind = Kind::Int, .i = static_cast<int64_t>(v)};
        }
        if (name.starts_with("uint") && size <= 8) {
            const uint64_t v = le(size);
            if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                return Node{.kind = Kind::BigInt, .text = std::to_string(v)};
            return Node{.kind = Kind::Int, .i = static_cast<int64_t>(v)};
        }
        if (name == "float64")
            return Node{.kind = Kind::Float, .f = std::bit_cast<double>(le(8))};
        if (name == "float32")
            return Node{.kind = Kind::Float, .f = std::bit_cast<float>(static_cast<uint32_t>(le(4)))};
        if (name == "float16")
            return Node{.kind = Kind::Float, .f = kernels::halfToFloat(static_cast<uint16_t>(le(2)))};
        if (name == "complex128") {
            uint64_t re = le(8), im = 0;
            for (std::size_t i = 0; i < 8; ++i)
                im |= static_cast<uint64_t>(static_cast<uint8_t>(b[8 + i])) << (8 * i);
            return Node{.kind = Kind::Complex, .f = std::bit_cast<double>(re), .f2 = std::bit_cast<double>(im)};
        }
        return Node{.kind = Kind::Object, .text = "numpy scalar " + name};
    }

    // ---- bytes
    NodeId latin1Bytes(const std::string& utf8, Kind kind)
    {
        std::string out;
        out.reserve(utf8.size());
        for (std::size_t i = 0; i < utf8.size();) {
            const auto c = static_cast<uint8_t>(utf8[i]);
            if (c < 0x80) {
                out += static_cast<char>(c);
                ++i;
            } else if ((c & 0xE0) == 0xC0 && i + 1 < utf8.size()) {
                const uint32_t cp = ((c & 0x1Fu) << 6) | (static_cast<uint8_t>(utf8[i + 1]) & 0x3Fu);
                if (cp > 0xFF)
                    return invalid("a latin-1 encoded bytes value holds a character above U+00FF");
                out += static_cast<char>(cp);
                i += 2;
            } else {
                return invalid("a latin-1 encoded bytes value holds a character above U+00FF");
            }
        }
        return m_out.add(Node{.kind = kind, .text = std::move(out)});
    }

    Node nodeCopy(NodeId id) const { return m_out[id]; }

    // ---- calls and objects
    Node call(const std::string& path, NodeId rawCallee, NodeId args, const Node& rawCall, std::size_t depth)
    {
        if (path.starts_with(kUtils))
            return rebuildCall(std::string_view(path).substr(kUtils.size()), args, depth);
        if (path == "torch._tensor._rebuild_from_type_v2") {
            const std::string func = globalPath(arg(args, 0));
            const std::string type = globalPath(arg(args, 1));
            Node inner = call(func, arg(args, 0), arg(args, 2), Node{}, depth);
            if (inner.kind == Kind::Tensor) {
                TensorInfo& t = m_doc.tensors[inner.ref];
                if (type == "torch.nn.parameter.Parameter")
                    t.isParameter = true;
                else if (type != "torch.Tensor")
                    t.subclass = type;
            }
            return inner;
        }
        if (path == "collections.OrderedDict" || path == "collections.defaultdict" || path == "collections.Counter")
            return dictCall(path, args, rawCall, depth);
        if (path == "builtins.set" || path == "builtins.frozenset") {
            Node s{.kind = path == "builtins.set" ? Kind::Set : Kind::FrozenSet};
            const NodeId items = convert(arg(args, 0), depth + 1);
            if (m_out.valid(items))
                s.items = m_out[items].items;
            return s;
        }
        if (path == "builtins.complex")
            return Node{.kind = Kind::Complex, .f = rawNumber(arg(args, 0)).value_or(0), .f2 = rawNumber(arg(args, 1)).value_or(0)};
        if (path == "_codecs.encode") {
            const std::string enc = rawString(arg(args, 1));
            if (m_raw.valid(arg(args, 0)) && m_raw[arg(args, 0)].kind == Kind::String) {
                if (enc == "latin1" || enc == "latin-1" || enc == "iso-8859-1" || enc == "iso8859-1")
                    return nodeCopy(latin1Bytes(rawString(arg(args, 0)), Kind::Bytes));
                if (enc == "utf-8" || enc == "utf8" || enc == "ascii")
                    return Node{.kind = Kind::Bytes, .text = rawString(arg(args, 0))};
            }
        }
        if (path == "builtins.bytes" || path == "builtins.bytearray") {
            const Kind kind = path == "builtins.bytes" ? Kind::Bytes : Kind::ByteArray;
            if (argItems(args).empty())
                return Node{.kind = kind};
            const NodeId v = convert(arg(args, 0), depth + 1);
            if (m_out[v].kind == Kind::Bytes || m_out[v].kind == Kind::ByteArray)
                return Node{.kind = kind, .text = m_out[v].text};
            if (m_out[v].kind == Kind::String)
                return Node{.kind = kind, .text = m_out[v].text};
        }
        if (path == "builtins.slice") {
            Node s{.kind = Kind::Slice};
            s.items = convertAll(argItems(args), depth + 1);
            return s;
        }
        if (path == "torch.Size") {
            Node s{.kind = Kind::Size};
            const NodeId dims = convert(arg(args, 0), depth + 1);
            if (m_out.valid(dims))
                s.items = m_out[dims].items;
            return s;
        }
        if (path == "torch.device") {
            std::string dev = rawString(arg(args, 0));
            if (auto index = rawInt(arg(args, 1)))
                dev += ":" + std::to_string(*index);
            return Node{.kind = Kind::Device, .text = dev};
        }
        if (path == "torch.torch_version.TorchVersion" && m_raw.valid(arg(args, 0)) && m_raw[arg(args, 0)].kind == Kind::String)
            return Node{.kind = Kind::String, .text = rawString(arg(args, 0))}; // a str subclass: torch.__version__
        if (path == "torch.serialization._get_layout")
            return Node{.kind = Kind::Layout, .text = rawString(arg(args, 0))};
        if (path == "numpy.core.multiarray._reconstruct" || path == "numpy._core.multiarray._reconstruct")
            return numpyReconstruct(rawCall, depth);
        if (path == "numpy.dtype")
            return numpyDtype(args, rawCall, depth);
        if (path == "numpy.core.multiarray.scalar" || path == "numpy._core.multiarray.scalar")
            return numpyScalar(args, depth);
        if (path == "numpy.core.numeric._frombuffer" || path == "numpy._core.numeric._frombuffer") {
            NdArrayInfo a;
            a.data = convert(arg(args, 0), depth + 1);
            applyDtype(a, convert(arg(args, 1), depth + 1));
            a.shape = rawInts(arg(args, 2)).value_or(std::vector<int64_t>{});
            a.fortranOrder = rawString(arg(args, 3)) == "F";
            return ndarray(std::move(a));
        }
        if (path == "copyreg._reconstructor")
            return reconstructor(args, rawCall, depth);
        if (path == "builtins.getattr" && m_raw.valid(arg(args, 1)) && m_raw[arg(args, 1)].kind == Kind::String)
            return attributeOf(args, depth);
        return genericObject(path, rawCallee, args, rawCall, depth);
    }

    Node dictCall(const std::string& path, NodeId args, const Node& rawCall, std::size_t depth)
    {
        const NodeId out = m_out.add(Node{.kind = Kind::Dict, .text = path});
        const NodeId first = arg(args, 0);
        if (path == "collections.defaultdict") {
            const NodeId factory = convert(first, depth + 1);
            m_out[out].a = factory;
        } else if (m_raw.valid(first)) {
            const Node& f = m_raw[first];
            if (f.kind == Kind::Dict) {
                addDictItems(out, f.items, depth + 1);
            } else if (f.kind == Kind::List || f.kind == Kind::Tuple) { // OrderedDict([(k, v), ...])
                std::vector<NodeId> kv;
                for (NodeId pair : f.items) {
                    const auto& p = argItems(pair);
                    if (p.size() == 2) {
                        kv.push_back(p[0]);
                        kv.push_back(p[1]);
                    }
                }
                addDictItems(out, kv, depth + 1);
            }
        }
        addDictItems(out, rawCall.items, depth + 1);
        if (rawCall.state != kNoNode) {
            const NodeId state = convert(rawCall.state, depth + 1);
            m_out[out].state = state;
        }
        return m_out[out]; // copied into the reserved node by the caller
    }

    // getattr(EnumClass, 'NAME') is an enum member; getattr(obj, 'method') a bound method.
    // Neither is walked into: torch.load would hand back a member or a method, not the object.
    Node attributeOf(NodeId args, std::size_t depth)
    {
        const std::string attribute = rawString(arg(args, 1));
        const NodeId target = convert(arg(args, 0), depth + 1);
        const Kind targetKind = m_out[target].kind;
        const std::string targetText = m_out[target].text; // copied: add() below may move the nodes
        Node out{.kind = Kind::Object};
        out.a = m_out.add(Node{.kind = Kind::String, .text = attribute});
        if (targetKind == Kind::Global) {
            out.text = targetText; // the enum class; the member name is in `a`
        } else {
            out.text = (targetText.empty() ? std::string("(object)") : targetText) + "." + attribute;
            out.b = target;
        }
        return out;
    }

    Node reconstructor(NodeId args, const Node& rawCall, std::size_t depth)
    {
        const std::string cls = globalPath(arg(args, 0));
        const std::string base = globalPath(arg(args, 1));
        Node out{.kind = Kind::Object, .text = cls.empty() ? "?" : cls};
        const NodeId baseState = arg(args, 2);
        if (base == "builtins.dict" && m_raw.valid(baseState) && m_raw[baseState].kind == Kind::Dict) {
            const NodeId d = m_out.add(Node{.kind = Kind::Dict, .text = out.text});
            addDictItems(d, m_raw[baseState].items, depth + 1);
            out = m_out[d];
        } else if (base == "builtins.list" && m_raw.valid(baseState) && m_raw[baseState].kind == Kind::List) {
            out.kind = Kind::List;
            out.items = convertAll(m_raw[baseState].items, depth + 1);
        }
        if (rawCall.state != kNoNode)
            out.state = convert(rawCall.state, depth + 1);
        return out;
    }

    Node genericObject(const std::string& path, NodeId rawCallee, NodeId args, const Node& rawCall, std::size_t depth)
    {
        Node out{.kind = Kind::Object, .text = path.empty() ? "(result of a call)" : path};
        if (path.empty() && rawCallee != kNoNode)
            out.b = convert(rawCallee, depth + 1);
        if (!argItems(args).empty() || (m_raw.valid(args) && m_raw[args].kind != Kind::Tuple))
            out.a = convert(args, depth + 1);
        if (rawCall.ref == kDictItems) {
            const NodeId d = m_out.add(Node{.kind = Kind::Dict, .text = out.text});
            addDictItems(d, rawCall.items, depth + 1);
            out.kind = Kind::Dict;
            out.items = m_out[d].items;
        } else if (rawCall.ref == kListItems) {
            out.kind = Kind::List;
            out.items = convertAll(rawCall.items, depth + 1);
        }
        if (rawCall.state != kNoNode)
            out.state = convert(rawCall.state, depth + 1);
        if (rawCall.c != kNoNode)
            out.c = convert(rawCall.c, depth + 1);
        return out;
    }

    Node newObject(const Node& n, std::size_t depth)
    {
        const std::string path = globalPath(n.a);
        if (path == "collections.OrderedDict" || path == "collections.Counter" || path == "collections.defaultdict")
            return dictCall(path, n.b, n, depth);
        // Pre-0.4 tensors: torch.FloatTensor() then BUILD (storage, offset, size, stride).
        if (path.starts_with("torch.") && path.ends_with("Tensor") && argItems(n.state).size() == 4) {
            std::string storageClass = path.substr(path.rfind('.') + 1);
            storageClass.replace(storageClass.size() - 6, 6, "Storage");
            TensorInfo t;
            std::string problem;
            t.storage = storageOf(arg(n.state, 0), depth, problem);
            t.problem = problem;
            setDtype(t, std::string(dtypeName(dtypeFromStorageClass(storageClass))));
            t.storageOffset = rawInt(arg(n.state, 1)).value_or(0);
            t.shape = rawInts(arg(n.state, 2)).value_or(std::vector<int64_t>{});
            t.stride = rawInts(arg(n.state, 3)).value_or(std::vector<int64_t>{});
            checkView(t);
            return tensorNode(std::move(t));
        }
        return genericObject(path.empty() ? "(object of a computed class)" : path, kNoNode, n.b, n, depth);
    }

    const ValueGraph& m_raw;
    Document& m_doc;
    ValueGraph& m_out;
    const StorageResolver& m_resolver;
    InterpretOptions m_options;
    std::vector<NodeId> m_map;
    bool m_depthWarned = false;
};

} // namespace

NodeId interpretPickle(const ValueGraph& raw, NodeId rawRoot, Document& doc, const StorageResolver& resolver,
                       const InterpretOptions& options)
{
    Interpreter interpreter(raw, doc, resolver, options);
    return interpreter.convert(rawRoot, 0);
}

} // namespace ckpt
