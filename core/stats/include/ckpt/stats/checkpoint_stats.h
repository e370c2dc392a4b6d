// SPDX-License-Identifier: MIT
// Statistics for a whole checkpoint (a file, or a directory of any layout), per file and per
// tensor, plus what only several files together show: DCP tensors per chunk and merged,
// DeepSpeed ZeRO partitions per rank and merged, and whether per-rank replicas (DDP) agree.
#pragma once

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/state/training_state.h"
#include "ckpt/stats/tensor_compare.h"
#include "ckpt/stats/tensor_source.h"
#include "ckpt/stats/tensor_stats.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ckpt {

struct TensorStatsEntry {
    KeyPath key;
    uint32_t tensor = 0;          // index into the file's Document::tensors
    bool alias = false;           // same tensor as an earlier entry (same statistics)
    TensorStats stats;
};

struct FileStats {
    std::string path;
    std::string role;             // the layout's role for it: model, optimizer, state, rng...
    int rank = -1;
    std::vector<TensorStatsEntry> tensors; // in CheckpointFile::tensorEntries() order
};

/// One piece of a logical tensor: a DCP chunk or one rank's partition. What a UI draws as the
/// shard map: the region [offsets, offsets + sizes) of the global tensor held by `rank`.
struct ShardInfo {
    int rank = -1;
    std::string file;             // the file holding it
    std::vector<int64_t> offsets; // start in the global tensor per dimension (partitions: flat offset)
    std::vector<int64_t> sizes;
    uint64_t byteOffset = 0, byteLength = 0; // DCP: the item's slice of the .distcp file
    TensorStats stats;            // of this piece alone
};

struct ShardedTensorStats {
    std::string key;              // DCP fqn ("model.layers.0.weight") or "<key path>" for partitions
    std::string kind;             // "dcp_chunks" or "rank_partitions"
    std::string dtype;
    std::vector<int64_t> shape;   // the global shape (partitions: the total flat length)
    std::vector<ShardInfo> shards;
    TensorStats merged;           // of the whole logical tensor, merged exactly from the shards
    std::string problem;          // chunks that do not tile it, unreadable pieces
};

/// The same key held by several ranks' files with the same dtype and shape (DDP replicas).
struct ReplicaGroup {
    std::string key;                     // formatted key path
    std::vector<int> ranks;
    std::vector<std::string> files;
    bool identical = true;               // all bit-for-bit equal to the first rank's
    std::vector<TensorDiff> vsFirst;     // ranks[1..] compared with ranks[0]
};

struct CheckpointStats {
    std::string path;
    std::string layout;                  // layoutName()
    std::vector<FileStats> files;
    std::vector<ShardedTensorStats> sharded;
    std::vector<ReplicaGroup> replicas;
    bool cancelled = false;              // when true, results are partial
    std::vector<std::string> warnings;   // files that could not be opened or read
};

/// Every tensor of one open file; aliases copy the first entry's statistics. Throws
/// CancelledError when cancelled.
FileStats computeFileStats(const CheckpointFile& file, const StatsOptions& options = {});

/// A file or a checkpoint directory of any layout (DCP included). Unreadable files become
/// warnings; cancellation returns what was done with cancelled = true.
CheckpointStats computeCheckpointStats(const std::string& path, const StatsOptions& options = {});

/// Receives a file's tensor entries in CheckpointFile::tensorEntries() order, `index` being the
/// position, each as soon as its statistics and every earlier entry's are known. Called from the
/// scanning threads, one call at a time.
using EntryStatsSink = std::function<void(std::size_t index, TensorStatsEntry&& entry)>;

/// The figures of one open file, streamed (FileStats::tensors is never filled).
void streamFileStats(const CheckpointFile& file, const StatsOptions& options, const EntryStatsSink& entries);

/// Where a streamed checkpoint's statistics go, file by file.
struct StatsStream {
    /// A file's statistics begin: `header` holds its path, role and rank, no tensors.
    std::function<void(const CheckpointFile& file, const FileStats& header)> beginFile;
    EntryStatsSink entry;
    std::function<void(const CheckpointFile& file)> endFile;
};
/// The same, handing every file's statistics to `stream` instead of keeping them in
/// CheckpointStats::files (left empty): a caller writing them out holds the figures of the
/// tensors that wait for an earlier one, not a frontier model's ~90k histograms at once (117 MiB).
CheckpointStats computeCheckpointStats(const std::string& path, const StatsOptions& options, const StatsStream& stream);

/// Statistics of a DCP logical tensor, per chunk and merged. Throws CancelledError.
ShardedTensorStats computeDcpTensorStats(const DcpCheckpoint& dcp, const DcpEntry& entry, const StatsOptions& options = {});

/// The chunk map of every DCP tensor (no statistics computed; ShardInfo::stats left empty).
std::vector<ShardedTensorStats> dcpShardMaps(const DcpCheckpoint& dcp);

} // namespace ckpt
