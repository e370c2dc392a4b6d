// SPDX-License-Identifier: MIT
#include "ckpt/report/stats_json.h"

#include "ckpt/report/json_export.h"

#include <cmath>

namespace ckpt {
namespace {

using nlohmann::json;

json histogramToJson(const Histogram& h)
{
    if (h.counts.empty())
        return nullptr;
    return {{"lo", jsonNumber(h.lo)}, {"hi", jsonNumber(h.hi)}, {"counts", h.counts}};
}

json shardInfoToJson(const ShardInfo& s, bool withStats)
{
    json j = {{"rank", s.rank < 0 ? json(nullptr) : json(s.rank)}, {"file", s.file}, {"offsets", s.offsets}, {"sizes", s.sizes}};
    if (s.byteLength)
        j["byte_range"] = {s.byteOffset, s.byteLength};
    if (withStats)
        j["stats"] = tensorStatsToJson(s.stats);
    return j;
}

} // namespace

json tensorStatsToJson(const TensorStats& s)
{
    if (!s.ok())
        return {{"problem", s.problem}, {"numel", s.numel}};
    json j = {
        {"numel", s.numel},
        {"min", jsonNumber(s.min)},
        {"max", jsonNumber(s.max)},
        {"mean", jsonNumber(s.mean)},
        {"std", jsonNumber(s.std)},
        {"l2", jsonNumber(s.l2)},
        {"absmax", jsonNumber(s.absmax)},
        {"nan", s.nan},
        {"posinf", s.posinf},
        {"neginf", s.neginf},
        {"zeros", s.zeros},
        {"hist", histogramToJson(s.hist)},
        {"log10_abs_hist", histogramToJson(s.logHist)},
        {"exact_hist", s.exactHistograms},
        {"exact_log_hist", s.exactLogHistogram},
        {"hist_uncertain", s.histUncertain},
        {"log_hist_uncertain", s.logHistUncertain},
    };
    if (s.complexMagnitude)
        j["of"] = "magnitude";
    return j;
}

json shardedStatsToJson(const ShardedTensorStats& s)
{
    json shards = json::array();
    for (const auto& shard : s.shards)
        shards.push_back(shardInfoToJson(shard, true));
    json j = {{"key", s.key}, {"kind", s.kind}, {"dtype", s.dtype}, {"shape", s.shape}, {"shards", shards},
              {"merged", tensorStatsToJson(s.merged)}};
    if (!s.problem.empty())
        j["problem"] = s.problem;
    return j;
}

json replicaGroupToJson(const ReplicaGroup& g)
{
    json others = json::array();
    for (const auto& d : g.vsFirst)
        others.push_back(tensorDiffToJson(d));
    return {{"key", g.key}, {"ranks", g.ranks}, {"files", g.files}, {"identical", g.identical}, {"vs_first", others}};
}

json tensorDiffToJson(const TensorDiff& d)
{
    json j = {
        {"key", d.key},
        {"component", d.component},
        {"status", diffStatusName(d.status)},
    };
    const bool compared = d.status == DiffStatus::Equal || d.status == DiffStatus::Changed;
    j["max_abs_diff"] = compared ? jsonNumber(d.maxAbsDiff) : json(nullptr);
    j["rel_l2"] = compared ? jsonNumber(d.relL2) : json(nullptr);
    j["cosine"] = compared ? jsonNumber(d.cosine) : json(nullptr);
    j["n_diff"] = compared ? json(d.nDiff) : json(nullptr);
    if (compared) {
        j["numel"] = d.numel;
        j["first_diff"] = d.firstDiff < 0 ? json(nullptr) : json(d.firstDiff);
        j["norm_a"] = jsonNumber(d.normA);
        j["norm_b"] = jsonNumber(d.normB);
        if (d.nonFinitePairs)
            j["non_finite_pairs"] = d.nonFinitePairs;
    }
    j["dtype"] = {{"a", d.dtypeA.empty() ? json(nullptr) : json(d.dtypeA)}, {"b", d.dtypeB.empty() ? json(nullptr) : json(d.dtypeB)}};
    j["shape"] = {{"a", d.status == DiffStatus::OnlyB ? json(nullptr) : json(d.shapeA)},
                  {"b", d.status == DiffStatus::OnlyA ? json(nullptr) : json(d.shapeB)}};
    j["source"] = {{"a", d.fileA.empty() ? json(nullptr) : json({{"file", d.fileA}, {"key", keyPathToJson(d.keyA)}})},
                   {"b", d.fileB.empty() ? json(nullptr) : json({{"file", d.fileB}, {"key", keyPathToJson(d.keyB)}})}};
    if (!d.problem.empty())
        j["problem"] = d.problem;
    return j;
}

json checkpointDiffToJson(const CheckpointDiff& d)
{
    json tensors = json::array();
    for (const auto& t : d.tensors)
        tensors.push_back(tensorDiffToJson(t));
    json states = json::object();
    for (const char* c : {"optimizer", "scheduler", "scaler", "rng", "data", "progress", "environment"})
        states[c] = json::array();
    for (const auto& s : d.states) {
        states[s.component].push_back({{"name", s.name},
                                       {"a", s.status == "only_b" ? json(nullptr) : json(s.a)},
                                       {"b", s.status == "only_a" ? json(nullptr) : json(s.b)},
                                       {"status", s.status},
                                       {"where", {{"a", s.whereA}, {"b", s.whereB}}}});
    }
    const DiffCounts& c = d.counts;
    return {
        {"a", d.pathA},
        {"b", d.pathB},
        {"prefix_stripped", {{"a", d.prefixA}, {"b", d.prefixB}}},
        {"tensors", tensors},
        {"states", states},
        {"counts", {{"equal", c.equal}, {"changed", c.changed}, {"only_a", c.onlyA}, {"only_b", c.onlyB},
                    {"shape_changed", c.shapeChanged}, {"dtype_changed", c.dtypeChanged}, {"unreadable", c.unreadable}}},
        {"cancelled", d.cancelled},
        {"warnings", d.warnings},
    };
}

} // namespace ckpt
