// SPDX-License-Identifier: MIT
#include "core/chunked_scan.h"

#include "core/errors.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace ckpt {
namespace {

constexpr uint64_t kChunkBytes = 8u << 20;

uint64_t chunkElements(const ChunkPlanItem& item)
{
    return std::max<uint64_t>(1, kChunkBytes / std::max<std::size_t>(1, item.bytesPerElement));
}

} // namespace

std::size_t chunkCount(const ChunkPlanItem& item)
{
    const uint64_t per = chunkElements(item);
    return static_cast<std::size_t>((item.numel + per - 1) / per);
}

unsigned scanThreads(const StatsOptions& options, const std::vector<ChunkPlanItem>& plan)
{
    std::size_t chunks = 0;
    for (const auto& item : plan)
        chunks += chunkCount(item);
    unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    return static_cast<unsigned>(std::clamp<std::size_t>(chunks, 1, threads));
}

void runChunkedScan(const std::vector<ChunkPlanItem>& plan, const StatsOptions& options,
                    const std::function<void(const ChunkWork&, unsigned)>& work,
                    const std::function<void(std::size_t)>& itemDone)
{
    std::vector<ChunkWork> tasks;
    std::vector<std::size_t> left(plan.size(), 0);
    StatsProgress progress;
    progress.tensorsTotal = plan.size();
    for (std::size_t i = 0; i < plan.size(); ++i) {
        const uint64_t per = chunkElements(plan[i]);
        left[i] = chunkCount(plan[i]);
        progress.bytesTotal += plan[i].numel * plan[i].bytesPerElement;
        for (std::size_t c = 0; c < left[i]; ++c) {
            const uint64_t begin = c * per;
            tasks.push_back({i, c, begin, static_cast<std::size_t>(std::min(per, plan[i].numel - begin))});
        }
    }

    std::mutex mutex; // guards left, progress, itemDone and the progress callback
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    bool cancelled = false;
    std::exception_ptr failure;

    auto report = [&]() {
        if (options.progress && !options.progress(progress)) {
            cancelled = true;
            stop = true;
        }
    };
    auto finishItem = [&](std::size_t item) {
        itemDone(item);
        ++progress.tensorsDone;
    };
    {
        std::lock_guard lock(mutex);
        for (std::size_t i = 0; i < plan.size(); ++i) {
            if (left[i] == 0)
                finishItem(i);
        }
        report();
    }

    auto worker = [&](unsigned index) {
        while (!stop) {
            const std::size_t t = next++;
            if (t >= tasks.size())
                return;
            const ChunkWork& w = tasks[t];
            try {
                work(w, index);
                std::lock_guard lock(mutex);
                progress.bytesDone += w.count * plan[w.item].bytesPerElement;
                if (--left[w.item] == 0)
                    finishItem(w.item);
                report();
            } catch (...) {
                std::lock_guard lock(mutex);
                if (!failure)
                    failure = std::current_exception();
                stop = true;
            }
        }
    };
    const unsigned threads = scanThreads(options, plan);
    std::vector<std::thread> pool;
    for (unsigned i = 1; i < threads; ++i)
        pool.emplace_back(worker, i);
    worker(0);
    for (auto& t : pool)
        t.join();
    if (failure)
        std::rethrow_exception(failure);
    if (cancelled)
        throw CancelledError();
}

} // namespace ckpt
