// SPDX-License-Identifier: MIT
// The one way from a tensor's provenance (ParameterEntry::from, MomentInfo::from: a file and a
// key path) to its bytes, for statistics, the two-checkpoint diff, the rules and the GUI pages.
// A provenance names either a tensor inside a file (torch.save, safetensors, a ZeRO file...) or
// a torch.distributed.checkpoint entry by its metadata file (`.metadata`, or `__<rank>.metadata`
// of a save made without a process group) and key path; the latter resolves to its chunks.
#pragma once

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/state/training_state.h"
#include "ckpt/stats/tensor_compare.h"
#include "ckpt/stats/tensor_stats.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ckpt {

/// One stored piece of a logical tensor: the whole tensor of a file, or one DCP chunk.
struct TensorPiece {
    const CheckpointFile* file = nullptr; // owned by the TensorSource that resolved it
    TensorInfo tensor;                    // the piece (its shape is the piece's sizes)
    std::vector<int64_t> offsets;         // where it starts in the logical tensor, per dimension
};

/// A logical tensor and the pieces that hold its bytes, tiling it.
struct ResolvedTensor {
    std::string dtype;                    // PyTorch's name, "float32"
    std::vector<int64_t> shape;           // the logical (global) shape
    std::vector<TensorPiece> pieces;
    /// More than one piece, or one that does not start at the origin (a whole tensor saved as a
    /// single DCP chunk at offsets 0 is not sharded).
    bool sharded() const
    {
        if (pieces.size() != 1)
            return true;
        for (int64_t o : pieces.front().offsets)
            if (o != 0)
                return true;
        return pieces.front().tensor.shape != shape;
    }
};

/// The element-wise pairs that compare two resolved tensors of equal shape: piece for piece
/// when both are tiled alike, and when one side is a whole tensor, each of the other side's
/// pieces against the matching region (a strided view) of it. Throws FormatError when the two
/// tilings cannot be matched (two different shardings of the same tensor).
std::vector<std::pair<TensorPiece, TensorPiece>> pairPieces(const ResolvedTensor& a, const ResolvedTensor& b);

/// Opens the files a TrainingState refers to on demand and keeps them open, so callers (the
/// rules engine, the diff, the GUI) can reach any tensor by its provenance. Not thread-safe:
/// use one per thread, or guard it.
class TensorSource {
public:
    TensorSource();
    ~TensorSource();
    TensorSource(const TensorSource&) = delete;
    TensorSource& operator=(const TensorSource&) = delete;

    /// The open file at `path` (opened on first use). Throws OpenError.
    const CheckpointFile& file(const std::string& path);
    /// Uses a file already parsed (the state reader's: TrainingState::files) for its path instead of
    /// opening it again on first use.
    void adopt(std::shared_ptr<const CheckpointFile> file);
    /// The tensor at `key` in that file, or nullptr.
    const TensorInfo* find(const std::string& path, const KeyPath& key);

    /// The pieces of the tensor `from` names. Throws OpenError or FormatError naming the file
    /// and the reason (no such key, a chunk without storage, unreadable metadata).
    ResolvedTensor resolve(const Provenance& from);

    /// Statistics of the tensor a Provenance names. A DCP provenance gives the merged statistics
    /// over the tensor's chunks. A tensor that cannot be reached gives TensorStats::problem.
    /// Throws CancelledError.
    TensorStats stats(const Provenance& from, const StatsOptions& options = {});
    TensorStats stats(const std::string& path, const TensorInfo& tensor, const StatsOptions& options = {});

    /// Compares the tensors two provenances name (any layouts, DCP against a file included).
    /// Unreachable sides give DiffStatus::Unreadable with the reason. Throws CancelledError.
    TensorDiff compare(const Provenance& a, const Provenance& b, const StatsOptions& options = {});

private:
    const DcpCheckpoint& dcp(const std::string& metadataFile);

    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace ckpt
