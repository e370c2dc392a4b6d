// SPDX-License-Identifier: MIT
#include "chunked_scan.h"

#include "ckpt/io/errors.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
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

// glibc answers hardware_concurrency() by reading /sys/devices/system/cpu/online: asked once per
// process, not once per scan (the GUI's Tensors tab scans a frontier model's 90k tensors one by one,
// and those reads were a sixth of its statistics' time).
namespace {

unsigned cores()
{
    static const unsigned n = std::max(1u, std::thread::hardware_concurrency());
    return n;
}

} // namespace

unsigned scanThreads(const StatsOptions& options, const std::vector<ChunkPlanItem>& plan)
{
    std::size_t chunks = 0;
    for (const auto& item : plan)
        chunks += chunkCount(item);
    const unsigned threads = options.threads ? options.threads : cores();
    return static_cast<unsigned>(std::clamp<std::size_t>(chunks, 1, threads));
}

void runChunkedScan(const std::vector<ChunkPlanItem>& plan, const StatsOptions& options,
                    const std::function<void(const ChunkWork&, unsigned)>& work,
                    const std::function<bool(std::size_t, int)>& itemDone)
{
    std::vector<ChunkWork> tasks;
    std::vector<std::size_t> left(plan.size(), 0);
    StatsProgress progress;
    progress.tensorsTotal = plan.size();
    auto chunksOf = [&](std::size_t i, int pass, auto&& add) {
        const uint64_t per = chunkElements(plan[i]);
        for (std::size_t c = 0; c < chunkCount(plan[i]); ++c) {
            const uint64_t begin = c * per;
            add(ChunkWork{i, c, begin, static_cast<std::size_t>(std::min(per, plan[i].numel - begin)), pass});
        }
    };
    for (std::size_t i = 0; i < plan.size(); ++i) {
        left[i] = chunkCount(plan[i]);
        progress.bytesTotal += plan[i].numel * plan[i].bytesPerElement;
        chunksOf(i, 0, [&](const ChunkWork& w) { tasks.push_back(w); });
    }

    // Guards everything below, itemDone and the progress callback. Chunks are ~8 MiB, so a
    // lock per chunk costs nothing measurable.
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<ChunkWork> again; // pass-1 chunks, run before the remaining pass-0 ones
    std::size_t next = 0, running = 0;
    bool stop = false, cancelled = false;
    std::exception_ptr failure;

    auto report = [&]() {
        if (options.progress && !options.progress(progress)) {
            cancelled = true;
            stop = true;
        }
    };
    auto finishPass = [&](std::size_t item, int pass) {
        if (pass == 0 && itemDone(item, 0)) {
            left[item] = chunkCount(plan[item]);
            if (left[item] != 0) {
                std::size_t at = 0;
                chunksOf(item, 1, [&](const ChunkWork& w) { again.insert(again.begin() + at++, w); });
                wake.notify_all();
                return;
            }
            itemDone(item, 1);
        } else if (pass == 1) {
            itemDone(item, 1);
        }
        ++progress.tensorsDone;
    };
    {
        std::lock_guard lock(mutex);
        for (std::size_t i = 0; i < plan.size(); ++i) {
            if (left[i] == 0)
                finishPass(i, 0);
        }
        report();
    }

    auto worker = [&](unsigned index) {
        std::unique_lock lock(mutex);
        for (;;) {
            // Pass-1 chunks can still appear while another worker finishes a pass-0 chunk.
            wake.wait(lock, [&] { return stop || !again.empty() || next < tasks.size() || running == 0; });
            if (stop || (again.empty() && next >= tasks.size()))
                break;
            ChunkWork w;
            if (!again.empty()) {
                w = again.front();
                again.pop_front();
            } else {
                w = tasks[next++];
            }
            ++running;
            lock.unlock();
            try {
                work(w, index);
            } catch (...) {
                lock.lock();
                --running;
                if (!failure)
                    failure = std::current_exception();
                stop = true;
                wake.notify_all();
                continue;
            }
            lock.lock();
            --running;
            try {
                if (w.pass == 0)
                    progress.bytesDone += w.count * plan[w.item].bytesPerElement;
                if (--left[w.item] == 0)
                    finishPass(w.item, w.pass);
                report();
            } catch (...) {
                if (!failure)
                    failure = std::current_exception();
                stop = true;
            }
            wake.notify_all();
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
