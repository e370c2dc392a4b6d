// SPDX-License-Identifier: MIT
#include "ckpt/stats/tensor_compare.h"

#include "chunked_scan.h"
#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/tensor_view_reader.h"
#include "ckpt/io/errors.h"
#include "stats_state.h"

#include <cmath>
#include <map>
#include <optional>

namespace ckpt {

const char* diffStatusName(DiffStatus status)
{
    switch (status) {
    case DiffStatus::Equal: return "equal";
    case DiffStatus::Changed: return "changed";
    case DiffStatus::OnlyA: return "only_a";
    case DiffStatus::OnlyB: return "only_b";
    case DiffStatus::ShapeChanged: return "shape_changed";
    case DiffStatus::DtypeChanged: return "dtype_changed";
    case DiffStatus::Unreadable: return "unreadable";
    }
    return "?";
}

namespace detail {

void compareViews(const std::vector<std::pair<const TensorViewReader*, const TensorViewReader*>>& pairs,
                  const StatsOptions& options, const std::function<void(std::size_t, const kernels::PairMoments&)>& done)
{
    std::vector<ChunkPlanItem> plan;
    for (const auto& [a, b] : pairs)
        plan.push_back({a->numel(), a->elementSize() * 2});
    std::vector<std::vector<kernels::PairMoments>> chunks(pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i)
        chunks[i].resize(chunkCount(plan[i]));
    const unsigned threads = scanThreads(options, plan);
    std::vector<std::vector<std::byte>> bufA(threads), bufB(threads);
    runChunkedScan(
        plan, options,
        [&](const ChunkWork& w, unsigned worker) {
            const auto& [a, b] = pairs[w.item];
            const std::byte* pa = a->read(w.begin, w.count, bufA[worker]);
            const std::byte* pb = b->read(w.begin, w.count, bufB[worker]);
            kernels::comparePair(kernels::kindOf(a->dtype()), pa, pb, w.count, w.begin, chunks[w.item][w.chunk]);
        },
        [&](std::size_t item, int) {
            kernels::PairMoments total;
            for (const auto& m : chunks[item])
                total.merge(m);
            chunks[item] = {};
            done(item, total);
            return false;
        });
}

void applyPairMoments(TensorDiff& d, const kernels::PairMoments& m)
{
    d.numel = m.n;
    d.nDiff = m.nDiff;
    d.firstDiff = m.firstDiff;
    d.status = m.nDiff == 0 ? DiffStatus::Equal : DiffStatus::Changed;
    d.maxAbsDiff = m.maxAbs;
    d.normA = std::sqrt(m.sumSqA);
    d.normB = std::sqrt(m.sumSqB);
    const double diff = std::sqrt(m.sumSqDiff);
    d.relL2 = d.normA > 0 ? diff / d.normA : (diff > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    d.cosine = d.normA > 0 && d.normB > 0 ? m.dot / (d.normA * d.normB) : std::numeric_limits<double>::quiet_NaN();
    d.nonFinitePairs = m.nonFinite;
}

} // namespace detail

bool compareViewPairs(const std::vector<ViewPairJob>& jobs, std::vector<TensorDiff>& diffs, const StatsOptions& options)
{
    std::vector<std::pair<const TensorViewReader*, const TensorViewReader*>> pairs;
    pairs.reserve(jobs.size());
    for (const auto& j : jobs)
        pairs.push_back({j.a, j.b});
    std::map<std::size_t, kernels::PairMoments> merged;
    std::map<std::size_t, std::size_t> parts;
    bool finished = true;
    try {
        detail::compareViews(pairs, options, [&](std::size_t i, const kernels::PairMoments& m) {
            const std::size_t diff = jobs[i].diff;
            ++parts[diff];
            merged[diff].merge(m);
        });
    } catch (const CancelledError&) {
        finished = false;
    }
    for (auto& [diff, m] : merged) {
        if (parts[diff] > 1)
            m.firstDiff = -1; // a chunk-local index, not the tensor's
        detail::applyPairMoments(diffs[diff], m);
    }
    return finished;
}

namespace {

void describe(TensorDiff& d, const TensorInfo& ta, const TensorInfo& tb)
{
    d.dtypeA = ta.dtypeName;
    d.dtypeB = tb.dtypeName;
    d.shapeA = ta.shape;
    d.shapeB = tb.shape;
}

} // namespace

TensorDiff compareTensors(const CheckpointFile& a, const TensorInfo& ta, const CheckpointFile& b, const TensorInfo& tb,
                          const StatsOptions& options)
{
    TensorDiff d;
    describe(d, ta, tb);
    if (ta.shape != tb.shape) {
        d.status = DiffStatus::ShapeChanged;
        return d;
    }
    if (ta.dtype != tb.dtype || ta.dtypeName != tb.dtypeName) {
        d.status = DiffStatus::DtypeChanged;
        return d;
    }
    if (kernels::kindOf(ta.dtype) == kernels::Kind::Unsupported) {
        d.status = DiffStatus::Unreadable;
        d.problem = "cannot compare elements of type " + ta.dtypeName;
        return d;
    }
    std::optional<TensorViewReader> va, vb;
    try {
        va.emplace(a, ta);
    } catch (const std::exception& e) {
        d.status = DiffStatus::Unreadable;
        d.problem = "A: " + std::string(e.what());
        return d;
    }
    try {
        vb.emplace(b, tb);
    } catch (const std::exception& e) {
        d.status = DiffStatus::Unreadable;
        d.problem = "B: " + std::string(e.what());
        return d;
    }
    detail::compareViews({{&*va, &*vb}}, options, [&](std::size_t, const kernels::PairMoments& m) { detail::applyPairMoments(d, m); });
    return d;
}

} // namespace ckpt
