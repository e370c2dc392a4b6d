// SPDX-License-Identifier: MIT
// What a checkpoint says about its tensors and storages, before any tensor byte is read.
#pragma once

#include "ckpt/dtypes/dtype.h"
#include "ckpt/pickle/value_graph.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ckpt {

// 128-bit arithmetic for overflow-free size checks on untrusted shapes and counts.
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

/// One block of tensor bytes: a `data/<key>` zip record, a legacy storage record, a
/// safetensors data range.
struct StorageInfo {
    std::string key;
    std::string location;          // "cpu", "cuda:0" ("" when the format has no device)
    DType dtype = DType::Unknown;  // the element type it was saved as (uint8 for untyped storages)
    uint64_t numel = 0;            // in elements of dtype
    uint32_t fileIndex = 0;        // 0: the opened file; i > 0: its (i-1)th shard (sharded safetensors)
    uint64_t fileOffset = 0;       // absolute offset of the first byte (stored data)
    uint64_t byteSize = 0;         // bytes present in the file
    bool available = false;        // the bytes exist and are at least numel * element size
    bool compressed = false;       // a DEFLATE zip record: read through entryBytes()
    int32_t zipEntry = -1;
    std::string problem;           // why the bytes are unusable, when they are

    uint64_t nbytes() const { return numel * dtypeSize(dtype); }
};

enum class TensorLayout : uint8_t {
    Strided,
    SparseCoo,
    SparseCsr,
    SparseCsc,
    SparseBsr,
    SparseBsc,
    Quantized,
    Meta,
    NoStorage, // wrapper subclasses, device tensors rebuilt from numpy: no bytes in the file
};

const char* layoutName(TensorLayout layout);

/// Reverses the byte order of every element in place (complex numbers: each half), turning
/// a big-endian storage's bytes into the little-endian order PyTorch computes with.
void swapElementBytes(std::span<std::byte> data, DType dtype);

struct QuantizerInfo {
    std::string scheme;  // "per_tensor_affine", "per_channel_affine"...
    double scale = 0;
    int64_t zeroPoint = 0;
    int64_t axis = -1;
    NodeId scales = kNoNode, zeroPoints = kNoNode; // per-channel parameters (Tensor nodes)
};

struct TensorInfo {
    DType dtype = DType::Unknown;
    std::string dtypeName;           // also set when dtype is Unknown
    std::vector<int64_t> shape;
    std::vector<int64_t> stride;     // in elements
    int64_t storageOffset = 0;       // in elements
    int32_t storage = -1;            // index into the storage table, -1 when there is none
    TensorLayout layout = TensorLayout::Strided;
    bool requiresGrad = false;
    bool isParameter = false;
    std::string device;
    std::string subclass;            // a tensor subclass' class path (_rebuild_from_type_v2)
    std::string flags;               // conj / neg bits from the metadata argument
    QuantizerInfo quantizer;
    std::vector<NodeId> components;  // sparse: indices and values tensors (and the like)
    std::string problem;             // why the view does not fit its storage; empty when it does

    int64_t numel() const;           // product of shape (1 for a scalar); saturates, never overflows
    uint64_t nbytes() const;         // numel * element size
    bool hasData() const { return storage >= 0 && problem.empty(); }
};

struct NdArrayInfo {
    std::string dtype;               // numpy name: "uint32", "float64", "object"
    char byteOrder = '|';            // '<', '>', '|' (not applicable), '='
    std::size_t itemSize = 0;
    std::vector<int64_t> shape;
    bool fortranOrder = false;
    NodeId data = kNoNode;           // Bytes node (or a List for object arrays)
    std::string problem;
};

/// The interpreted content of one file: the object graph and the tables its nodes refer to.
struct Document {
    ValueGraph graph;
    NodeId root = kNoNode;
    /// Other objects a file holds beside its root (a TorchScript archive's constants.pkl).
    std::vector<std::pair<std::string, NodeId>> extraRoots;
    std::vector<TensorInfo> tensors;
    std::vector<StorageInfo> storages;
    std::vector<NdArrayInfo> arrays;
    std::vector<std::string> warnings;
};

} // namespace ckpt
