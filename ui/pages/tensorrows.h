// SPDX-License-Identifier: MIT
// The tensors of a whole checkpoint (every file of it, or every chunk of a DCP folder) as plain
// rows, gathered off the GUI thread. The opened files stay alive with the rows, so statistics
// can later be computed on the same mapping without reopening anything.
#pragma once

#include <QString>
#include <QStringList>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace ckpt {
class CheckpointFile;
struct DcpCheckpoint;
struct StatsOptions;
struct TensorStats;
struct TrainingState;
}

/// One saved piece of a logical tensor (a DCP chunk, a ZeRO rank's partition) or one rank's
/// copy of a replicated tensor (DDP): where it sits in the global tensor.
struct TensorShard {
    int rank = -1;
    std::vector<int64_t> offsets; // per dimension (a partition: its flat offset)
    std::vector<int64_t> sizes;   // per dimension
    QString file;
    QString note;                 // what the map writes beside it: its statistics, a replica's status
};

/// Statistics of one tensor as the page shows them; filled once computed in the background.
struct TensorStatsView {
    double min = 0, max = 0, mean = 0, std = 0, l2 = 0, absMax = 0;
    uint64_t nan = 0, posInf = 0, negInf = 0, zeros = 0;
    double histLo = 0, histHi = 0;
    std::vector<uint64_t> histCounts;    // linear bins over [histLo, histHi]
    double logHistLo = 0, logHistHi = 0; // log10 |x| of the finite non-zero elements
    std::vector<uint64_t> logHistCounts;
    uint64_t histUncertain = 0, logHistUncertain = 0; // elements that may be one bin off (binned from the value sketch)
    QString problem; // why there are no statistics (no bytes, unsupported dtype); empty when there are
    // A sharded or replicated tensor: each shard's own statistics (in TensorRow::shards order) and,
    // for replicas, each copy's status against the first rank's ("identical", "differs: ...").
    std::vector<TensorStatsView> shardStats;
    QStringList shardNotes;
    QString shardSummary; // replicas that disagree: how many ranks differ; empty when all agree
};

TensorStatsView toStatsView(const ckpt::TensorStats& stats);

struct TensorRow {
    QString name;  // key path inside its file, or the DCP fully qualified name
    QString dtype;
    std::vector<int64_t> shape;
    int64_t numel = 0;
    uint64_t bytes = 0;
    QString file;    // file name relative to the checkpoint; several for a sharded tensor
    QString problem; // why its bytes cannot be read, when they cannot
    int fileIndex = -1;   // into CheckpointTensors::files, -1 when the tensor spans several files
    uint32_t tensor = 0;  // index into that file's tensors()
    int dcpEntry = -1;    // index into CheckpointTensors::dcp->entries for a DCP tensor
    std::vector<TensorShard> shards; // empty unless the tensor is saved in pieces or per rank
    /// How the pieces relate: empty, "DCP chunks", "ZeRO partitions" (merged here) or "replicas"
    /// (DDP: the same tensor saved by each rank).
    QString shardKind;
    bool replicated = false;  // the members are copies (compared), not pieces (merged)
    std::vector<int> members; // a partition or replica row: the rows of the per-rank tensors
    int group = -1;           // a per-rank tensor: the row that merges it with the other ranks'
    /// Null until computed. Held by pointer: inline, a view made every row 520 bytes, and a frontier
    /// model's 90k rows (kept twice: the model's and the statistics job's) faulted in 94 MiB.
    std::shared_ptr<const TensorStatsView> stats;
};

struct CheckpointTensors {
    std::vector<TensorRow> rows;
    std::vector<std::shared_ptr<const ckpt::CheckpointFile>> files;
    std::shared_ptr<const ckpt::DcpCheckpoint> dcp; // a DCP folder's index, when that is the layout
    QStringList errors; // "<file>: <reason>" for each file that could not be opened
};

/// Opens every tensor-holding file of `state` (never JSON, markers or metadata) and lists its
/// tensors, aliases left out. `progress(done, total)` returning false cancels: what was read so
/// far comes back. Never throws: files that cannot be read become errors.
CheckpointTensors collectTensors(const ckpt::TrainingState& state,
                                 const std::function<bool(int done, int total)>& progress = {});

/// Statistics of one row, read from the files `tensors` keeps open (a DCP tensor or ZeRO
/// partitions: merged exactly over their pieces, each piece's own in shardStats; replicas: the
/// first rank's, each other rank compared with it in shardNotes). Bad bytes give
/// TensorStatsView::problem; throws ckpt::CancelledError when
/// `options.progress` cancels.
TensorStatsView computeRowStats(const CheckpointTensors& tensors, const TensorRow& row, const ckpt::StatsOptions& options);
