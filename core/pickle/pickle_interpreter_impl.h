// SPDX-License-Identifier: MIT
// The pickle interpreter's class, internal to core (only interpretPickle in pickle_interpreter.h
// is API). One Interpreter converts one raw pickle graph into Document::graph; its members are
// spread over files named for what they hold: pickle_interpreter.cpp (the walk, dicts, globals,
// calls and objects), pickle_raw_graph.cpp (reading arguments out of the raw graph),
// pickle_tensors.cpp (storages, tensors and torch's rebuild calls) and pickle_numpy.cpp (numpy
// arrays and scalars, latin-1 bytes).
#pragma once

#include "ckpt/pickle/pickle_interpreter.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt::detail {

class Interpreter {
public:
    Interpreter(const ValueGraph& raw, Document& doc, const StorageResolver& resolver, const InterpretOptions& options);
    NodeId convert(NodeId id, std::size_t depth);

private:
    NodeId reserve(NodeId rawId, Node node);
    NodeId invalid(std::string why);
    std::vector<NodeId> convertAll(const std::vector<NodeId>& ids, std::size_t depth);

    // ---- raw-graph accessors (pickle_raw_graph.cpp)
    std::string globalPath(NodeId id) const;
    const std::vector<NodeId>& argItems(NodeId args) const;
    NodeId arg(NodeId args, std::size_t i) const;
    std::optional<int64_t> rawInt(NodeId id) const;
    std::optional<double> rawNumber(NodeId id) const;
    std::string rawString(NodeId id) const;
    bool rawTruthy(NodeId id) const;
    std::optional<std::vector<int64_t>> rawInts(NodeId id) const;

    // ---- dicts (pickle_interpreter.cpp)
    std::string canonicalKey(NodeId outKey) const;
    void addDictItems(NodeId out, const std::vector<NodeId>& rawKv, std::size_t depth);

    // ---- globals as values (pickle_interpreter.cpp)
    Node globalValue(const std::string& path);

    // ---- storages (pickle_tensors.cpp)
    Node persistent(const Node& n, std::size_t depth);

    // ---- tensors (pickle_tensors.cpp)
    int32_t storageOf(NodeId rawStorageArg, std::size_t depth, std::string& problem);
    void checkView(TensorInfo& t);
    NodeId addTensor(TensorInfo t);
    Node tensorNode(TensorInfo t);
    std::string dtypeArg(NodeId raw, std::size_t depth);
    void setDtype(TensorInfo& t, std::string name);
    void readMetadataArg(TensorInfo& t, NodeId raw);
    TensorInfo denseTensor(NodeId args, std::size_t depth, bool v3);
    std::optional<TensorInfo> tensorOf(NodeId raw, std::size_t depth);
    Node rebuildCall(std::string_view fn, NodeId args, std::size_t depth);

    // ---- numpy (pickle_numpy.cpp)
    Node numpyDtype(NodeId args, const Node& rawCall, std::size_t depth);
    Node ndarray(NdArrayInfo a);
    void applyDtype(NdArrayInfo& a, NodeId convertedDtype);
    Node numpyReconstruct(const Node& rawCall, std::size_t depth);
    Node numpyScalar(NodeId args, std::size_t depth);

    // ---- bytes (pickle_numpy.cpp)
    NodeId latin1Bytes(const std::string& utf8, Kind kind);
    Node nodeCopy(NodeId id) const;

    // ---- calls and objects (pickle_interpreter.cpp)
    Node call(const std::string& path, NodeId rawCallee, NodeId args, const Node& rawCall, std::size_t depth);
    Node dictCall(const std::string& path, NodeId args, const Node& rawCall, std::size_t depth);
    Node attributeOf(NodeId args, std::size_t depth);
    Node reconstructor(NodeId args, const Node& rawCall, std::size_t depth);
    Node genericObject(const std::string& path, NodeId rawCallee, NodeId args, const Node& rawCall, std::size_t depth);
    Node newObject(const Node& n, std::size_t depth);

    const ValueGraph& m_raw;
    Document& m_doc;
    ValueGraph& m_out;
    const StorageResolver& m_resolver;
    InterpretOptions m_options;
    std::vector<NodeId> m_map;
    bool m_depthWarned = false;
};

} // namespace ckpt::detail
