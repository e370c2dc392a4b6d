// SPDX-License-Identifier: MIT
// The interpretation layer: turns the pickle machine's inert graph into what a checkpoint
// means (tensors, OrderedDicts, torch.Size, devices, numpy arrays, bytes...). Unknown calls
// and classes stay opaque Object nodes with their class path, arguments and state: they never
// make a file fail to open. Shared nodes stay shared; cycles are kept as cycles.
#pragma once

#include "ckpt/pickle/tensor_info.h"

#include <functional>
#include <optional>

namespace ckpt {

/// A `('storage', type, key, location, numel)` persistent id, decoded.
struct StorageRequest {
    std::string typeName;  // "torch.FloatStorage", "torch.storage.UntypedStorage"
    DType dtype = DType::Unknown;
    bool untyped = false;
    std::string key;
    std::string location;
    uint64_t numel = 0;
};

/// Maps a storage persistent id to an index in Document::storages (adding it on first use).
/// Returns -1 and sets `problem` when the container has no such record.
using StorageResolver = std::function<int32_t(const StorageRequest&, std::string& problem)>;

struct InterpretOptions {
    std::size_t maxDepth = 1000; // real checkpoints nest a few dozen levels
};

/// Converts `rawRoot` of `raw` into `doc.graph`, returning the new node. May be called
/// several times on one document (legacy files hold several pickles).
NodeId interpretPickle(const ValueGraph& raw, NodeId rawRoot, Document& doc, const StorageResolver& resolver,
                       const InterpretOptions& options = {});

} // namespace ckpt
