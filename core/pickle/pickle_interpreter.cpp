// SPDX-License-Identifier: MIT
// interpretPickle and the Interpreter's walk over the raw graph: values copied, dicts merged as
// Python merges them, globals turned into dtypes, and calls into the values they build or into
// opaque objects that keep their class path, arguments and state.
#include "ckpt/pickle/pickle_interpreter.h"
#include "pickle_interpreter_impl.h"

#include "ckpt/pickle/codec_names.h"

#include "ckpt/io/errors.h"

#include <bit>
#include <cmath>
#include <unordered_map>

namespace ckpt {
namespace detail {
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

} // namespace

Interpreter::Interpreter(const ValueGraph& raw, Document& doc, const StorageResolver& resolver, const InterpretOptions& options)
    : m_raw(raw)
    , m_doc(doc)
    , m_out(doc.graph)
    , m_resolver(resolver)
    , m_options(options)
    , m_map(raw.size(), kNoNode)
{
    // About one node out per raw node: room for them up front, as in PickleMachine::run.
    m_out.reserve(m_out.size() + raw.size());
}

NodeId Interpreter::convert(NodeId id, std::size_t depth)
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

NodeId Interpreter::reserve(NodeId rawId, Node node)
{
    const NodeId out = m_out.add(std::move(node));
    m_map[rawId] = out;
    return out;
}

NodeId Interpreter::invalid(std::string why) { return m_out.add(Node{.kind = Kind::Invalid, .text = std::move(why)}); }

std::vector<NodeId> Interpreter::convertAll(const std::vector<NodeId>& ids, std::size_t depth)
{
    std::vector<NodeId> out;
    out.reserve(ids.size());
    for (NodeId id : ids)
        out.push_back(convert(id, depth));
    return out;
}

// ---- dicts

std::string Interpreter::canonicalKey(NodeId outKey) const
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
void Interpreter::addDictItems(NodeId out, const std::vector<NodeId>& rawKv, std::size_t depth)
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

Node Interpreter::globalValue(const std::string& path)
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

// ---- calls and objects

Node Interpreter::call(const std::string& path, NodeId rawCallee, NodeId args, const Node& rawCall, std::size_t depth)
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
        // _codecs.encode(obj, encoding='utf-8'): the encoding may be left out.
        const std::string enc = argItems(args).size() == 1 ? std::string("utf-8") : rawString(arg(args, 1));
        if (m_raw.valid(arg(args, 0)) && m_raw[arg(args, 0)].kind == Kind::String) {
            if (isLatin1Codec(enc))
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

Node Interpreter::dictCall(const std::string& path, NodeId args, const Node& rawCall, std::size_t depth)
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
Node Interpreter::attributeOf(NodeId args, std::size_t depth)
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

Node Interpreter::reconstructor(NodeId args, const Node& rawCall, std::size_t depth)
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

Node Interpreter::genericObject(const std::string& path, NodeId rawCallee, NodeId args, const Node& rawCall, std::size_t depth)
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

Node Interpreter::newObject(const Node& n, std::size_t depth)
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

} // namespace detail

NodeId interpretPickle(const ValueGraph& raw, NodeId rawRoot, Document& doc, const StorageResolver& resolver,
                       const InterpretOptions& options)
{
    detail::Interpreter interpreter(raw, doc, resolver, options);
    return interpreter.convert(rawRoot, 0);
}

} // namespace ckpt
