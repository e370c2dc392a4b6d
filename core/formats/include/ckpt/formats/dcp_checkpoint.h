// SPDX-License-Identifier: MIT
// torch.distributed.checkpoint folders (formats.md §5): `.metadata` (a pickle of dataclasses)
// indexes every logical tensor's chunks, each a slice of a `__<rank>_<n>.distcp` file holding a
// complete torch.save archive. Read without torch: the metadata through the safe pickle
// machine, the chunk archives with CheckpointFile::openSlice.
#pragma once

#include "ckpt/formats/checkpoint_file.h"

#include <memory>
#include <string>
#include <vector>

namespace ckpt {

struct DcpChunk {
    std::vector<int64_t> offsets; // start of the chunk in the global tensor, per dimension
    std::vector<int64_t> sizes;   // the chunk's shape
    std::string file;             // relative path of the .distcp file ("" when storage_data lacks it)
    int rank = -1;                // from the file name __<rank>_<n>.distcp
    uint64_t offset = 0, length = 0;
};

struct DcpEntry {
    std::string fqn;              // flattened key, e.g. "model.0.weight", "optim.state.0.exp_avg"
    KeyPath path;                 // from planner_data when present, else the fqn split on '.'
    bool isBytes = false;         // a BYTE_IO item (a pickled non-tensor value)
    std::string dtype;
    std::vector<int64_t> size;    // the global shape
    std::vector<DcpChunk> chunks; // tensors: one per saved shard; bytes: one item
    std::string problem;          // chunks that do not tile the tensor, or items missing from storage_data
    /// Megatron-core's "N-D flattened" tensors (the fully_sharded_model_space optimizer state): each
    /// tensor-parallel shard of the tensor stored flat, the global shape the shard counts per
    /// dimension plus the flat length. The shape they stand for, from MCoreMetadata.mcore_data
    /// (nd_reformulated_orig_global_shape); empty for ordinary tensors.
    std::vector<int64_t> originalShape;
};

struct DcpCheckpoint {
    std::string dir;
    std::vector<DcpEntry> entries;
    std::string version;          // Metadata.version when written (≈2.5+)
    /// ".metadata", or the per-rank "__0.metadata", "__1.metadata"... of a save made without a
    /// process group (merged: each lists only its rank's items; replicas count once).
    std::vector<std::string> metadataFiles;
    std::vector<std::string> warnings;
    ImportsReport imports;        // of the .metadata pickle

    /// Opens one chunk's embedded archive (a tensor, or the pickled value of a bytes item).
    std::unique_ptr<CheckpointFile> openChunk(const DcpChunk& chunk) const;
};

/// Whether `path` names a DCP metadata file: `.metadata`, or `__<rank>.metadata` of a save made
/// without a process group. A tensor's provenance in a DCP checkpoint names one of these.
bool isDcpMetadataFile(const std::string& path);

/// Reads `.metadata`, or when it is absent every `__<rank>.metadata`. Throws OpenError naming the
/// metadata file when it is missing or unreadable.
DcpCheckpoint readDcpCheckpoint(const std::string& dir);

} // namespace ckpt
