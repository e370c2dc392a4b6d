// SPDX-License-Identifier: MIT
// TensorContentSource over the statistics and comparisons of issue 4 (core/stats/include/ckpt/stats/tensor_stats.h,
// core/stats/include/ckpt/stats/tensor_compare.h). Files are opened once and their tensors indexed by key path text.
#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/rules/tensor_content.h"
#include "ckpt/stats/tensor_compare.h"
#include "ckpt/stats/tensor_stats.h"

#include <map>
#include <mutex>

namespace ckpt {
namespace {

class StatsContentSource : public TensorContentSource {
public:
    std::optional<TensorSummary> summary(const Provenance& where) override
    {
        std::lock_guard lock(m_mutex);
        const auto [file, tensor] = locate(where);
        if (!file)
            return std::nullopt;
        try {
            const TensorStats s = computeTensorStats(*file, *tensor, options());
            if (!s.ok())
                return std::nullopt;
            return TensorSummary{s.numel, s.nan, s.posinf + s.neginf, s.zeros, s.min, s.l2};
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }

    std::optional<bool> sameBits(const Provenance& a, const Provenance& b) override
    {
        std::lock_guard lock(m_mutex);
        const auto [fa, ta] = locate(a);
        const auto [fb, tb] = locate(b);
        if (!fa || !fb)
            return std::nullopt;
        try {
            const TensorDiff d = compareTensors(*fa, *ta, *fb, *tb, options());
            if (d.status == DiffStatus::Unreadable)
                return std::nullopt;
            return d.status == DiffStatus::Equal;
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }

private:
    struct Opened {
        std::unique_ptr<CheckpointFile> file;  // null when the file cannot be opened
        std::map<std::string, uint32_t> byKey; // formatKeyPath -> tensor index
    };

    static StatsOptions options()
    {
        StatsOptions o;
        o.threads = 1; // many small tensors: parallelism inside one tensor does not pay
        return o;
    }

    std::pair<const CheckpointFile*, const TensorInfo*> locate(const Provenance& where)
    {
        auto it = m_files.find(where.file);
        if (it == m_files.end()) {
            Opened opened;
            try {
                opened.file = CheckpointFile::open(where.file);
                // Key paths compare as text: the state model keeps optimizer indices as strings
                // ("0"), the file's own walk as integers (0).
                for (const auto& e : opened.file->tensorEntries())
                    opened.byKey.emplace(formatKeyPath(e.key), e.tensor);
            } catch (const std::exception&) {
                opened.file.reset();
            }
            it = m_files.emplace(where.file, std::move(opened)).first;
        }
        const Opened& o = it->second;
        if (!o.file)
            return {nullptr, nullptr};
        const auto t = o.byKey.find(formatKeyPath(where.key));
        if (t == o.byKey.end())
            return {nullptr, nullptr};
        return {o.file.get(), &o.file->tensors()[t->second]};
    }

    std::mutex m_mutex;
    std::map<std::string, Opened> m_files;
};

} // namespace

std::shared_ptr<TensorContentSource> makeStatsContentSource() { return std::make_shared<StatsContentSource>(); }

} // namespace ckpt
