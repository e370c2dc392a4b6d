// SPDX-License-Identifier: MIT
// TensorContentSource over TensorSource (core/stats/include/ckpt/stats/tensor_source.h), the one
// resolver from a provenance to bytes: the rules see DCP chunks, ZeRO files and sharded
// safetensors exactly as `ckpt tensors --stats` and `ckpt diff` do.
#include "ckpt/rules/tensor_content.h"
#include "ckpt/stats/tensor_source.h"

#include <mutex>

namespace ckpt {
namespace {

class StatsContentSource : public TensorContentSource {
public:
    explicit StatsContentSource(const std::vector<std::shared_ptr<const CheckpointFile>>& parsed)
    {
        for (const auto& f : parsed)
            m_source.adopt(f);
    }

    std::optional<TensorSummary> summary(const Provenance& where, std::string* problem) override
    {
        std::lock_guard lock(m_mutex);
        const TensorStats s = m_source.stats(where, options());
        if (!s.ok()) {
            if (problem)
                *problem = s.problem;
            return std::nullopt;
        }
        return TensorSummary{s.numel, s.nan, s.posinf + s.neginf, s.zeros, s.min, s.l2};
    }

    std::optional<bool> sameBits(const Provenance& a, const Provenance& b) override
    {
        std::lock_guard lock(m_mutex);
        const TensorDiff d = m_source.compare(a, b, options());
        if (d.status == DiffStatus::Unreadable)
            return std::nullopt;
        return d.status == DiffStatus::Equal;
    }

private:
    static StatsOptions options()
    {
        StatsOptions o;
        o.threads = 1; // many small tensors: parallelism inside one tensor does not pay
        return o;
    }

    std::mutex m_mutex;
    TensorSource m_source;
};

} // namespace

std::shared_ptr<TensorContentSource> makeStatsContentSource(const std::vector<std::shared_ptr<const CheckpointFile>>& parsed)
{
    return std::make_shared<StatsContentSource>(parsed);
}

} // namespace ckpt
