// SPDX-License-Identifier: MIT
#include "manifest_auditor.h"

#include "ckpt/io/errors.h"
#include "ckpt/io/sha256.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace ckpt::audit {

using nlohmann::json;

void Auditor::hashAll()
{
    if (m_hashJobs.empty())
        return;
    // Largest first, so the last file to finish is a small one and the threads end together.
    std::vector<std::size_t> order = m_hashJobs;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return m_checks[a].sizeOnDisk > m_checks[b].sizeOnDisk; });

    AuditProgress totals;
    totals.filesTotal = order.size();
    for (std::size_t i : order)
        totals.bytesTotal += m_checks[i].sizeOnDisk;

    std::atomic<uint64_t> bytesDone{0};
    std::atomic<std::size_t> filesDone{0}, next{0};
    std::atomic<bool> cancel{false};
    std::mutex progressMutex;
    std::exception_ptr callbackError;

    auto report = [&]() -> bool {
        if (!m_options.progress)
            return !cancel.load(std::memory_order_relaxed);
        std::lock_guard lock(progressMutex);
        if (cancel.load())
            return false;
        AuditProgress p = totals;
        p.bytesDone = bytesDone.load();
        p.filesDone = filesDone.load();
        bool keepGoing = false;
        try {
            keepGoing = m_options.progress(p);
        } catch (...) {
            callbackError = std::current_exception();
        }
        if (!keepGoing)
            cancel = true;
        return keepGoing;
    };

    auto worker = [&]() {
        Sha256 hasher;
        while (!cancel.load(std::memory_order_relaxed)) {
            const std::size_t k = next.fetch_add(1);
            if (k >= order.size())
                break;
            FileCheck& f = m_checks[order[k]];
            try {
                const auto r = sha256File(
                    f.fsPath,
                    [&](uint64_t n) {
                        bytesDone.fetch_add(n);
                        return report();
                    },
                    &hasher);
                f.actualSha = r.hex();
            } catch (const CancelledError&) {
                break;
            } catch (const std::exception& e) {
                f.readError = e.what();
            }
            filesDone.fetch_add(1);
            if (!report())
                break;
        }
    };

    if (!report()) {
        m_result.cancelled = true;
    } else {
        unsigned threads = m_options.threads ? m_options.threads : std::max(1u, std::thread::hardware_concurrency());
        threads = static_cast<unsigned>(std::min<std::size_t>(threads, order.size()));
        std::vector<std::thread> pool;
        for (unsigned t = 1; t < threads; ++t)
            pool.emplace_back(worker);
        worker(); // the calling thread is one of the workers
        for (auto& t : pool)
            t.join();
        if (cancel.load())
            m_result.cancelled = true;
        else
            report(); // the final 100%
    }
    if (callbackError)
        std::rethrow_exception(callbackError);
    m_result.bytesHashed = bytesDone.load();
}

} // namespace ckpt::audit
