// SPDX-License-Identifier: MIT
// Splits the elements of many tensors (or tensor pairs) into chunks of about 8 MiB and runs
// them on a pool of threads, in file order, with progress and cancellation. Internal to core:
// the statistics and comparison drivers are built on it.
#pragma once

#include "ckpt/stats/tensor_stats.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace ckpt {

struct ChunkPlanItem {
    uint64_t numel = 0;
    std::size_t bytesPerElement = 0; // bytes read per element (pairs: both sides)
};

struct ChunkWork {
    std::size_t item = 0;  // index into the plan
    std::size_t chunk = 0; // index of the chunk within the item (0-based, in element order)
    uint64_t begin = 0;    // first element
    std::size_t count = 0;
    int pass = 0;          // 0: the scan; 1: a second look asked for by itemDone (see below)
};

/// Chunks per item under the default chunk size.
std::size_t chunkCount(const ChunkPlanItem& item);

/// Worker threads run() will use for this plan (for per-worker scratch).
unsigned scanThreads(const StatsOptions& options, const std::vector<ChunkPlanItem>& plan);

/// Runs `work` on every chunk (from scanThreads() threads; `worker` < that count) and
/// `itemDone` once all of an item's chunks of a pass are done (serialized; also for empty
/// items). When itemDone returns true for pass 0, the item's chunks run again as pass 1,
/// ahead of every chunk not yet started (while its pages are still in the page cache), and
/// itemDone is called again with pass 1. Progress counts pass-0 bytes and finished items.
/// Throws CancelledError when cancelled and rethrows the first exception a callback threw,
/// after every thread has stopped.
void runChunkedScan(const std::vector<ChunkPlanItem>& plan, const StatsOptions& options,
                    const std::function<void(const ChunkWork& work, unsigned worker)>& work,
                    const std::function<bool(std::size_t item, int pass)>& itemDone);

} // namespace ckpt
