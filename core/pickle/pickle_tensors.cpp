// SPDX-License-Identifier: MIT
// The pickle interpreter's storages and tensors: persistent ids resolved to storage records,
// the view checks every tensor gets, and torch._utils' rebuild calls (dense, quantized, sparse,
// meta, device and wrapper-subclass tensors) turned into TensorInfo entries.
#include "pickle_interpreter_impl.h"

namespace ckpt::detail {

// ---- storages

Node Interpreter::persistent(const Node& n, std::size_t depth)
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

int32_t Interpreter::storageOf(NodeId rawStorageArg, std::size_t depth, std::string& problem)
{
    const NodeId s = convert(rawStorageArg, depth + 1);
    const Node& node = m_out[s];
    if (node.kind == Kind::Storage)
        return static_cast<int32_t>(node.ref);
    problem = node.kind == Kind::Invalid ? node.text : "its storage argument is not a storage";
    return -1;
}

void Interpreter::checkView(TensorInfo& t)
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

NodeId Interpreter::addTensor(TensorInfo t)
{
    m_doc.tensors.push_back(std::move(t));
    return static_cast<NodeId>(m_doc.tensors.size() - 1);
}

Node Interpreter::tensorNode(TensorInfo t) { return Node{.kind = Kind::Tensor, .ref = addTensor(std::move(t))}; }

std::string Interpreter::dtypeArg(NodeId raw, std::size_t depth)
{
    const NodeId d = convert(raw, depth + 1);
    return m_out[d].kind == Kind::Dtype ? m_out[d].text : std::string("unknown");
}

void Interpreter::setDtype(TensorInfo& t, std::string name)
{
    t.dtype = dtypeFromTorchName(name);
    t.dtypeName = std::move(name);
}

void Interpreter::readMetadataArg(TensorInfo& t, NodeId raw)
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
TensorInfo Interpreter::denseTensor(NodeId args, std::size_t depth, bool v3)
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

std::optional<TensorInfo> Interpreter::tensorOf(NodeId raw, std::size_t depth)
{
    const NodeId n = convert(raw, depth + 1);
    if (m_out[n].kind != Kind::Tensor)
        return std::nullopt;
    return m_doc.tensors[m_out[n].ref];
}

Node Interpreter::rebuildCall(std::string_view fn, NodeId args, std::size_t depth)
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

} // namespace ckpt::detail
