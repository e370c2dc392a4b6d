// SPDX-License-Identifier: MIT
// GCC 12 reports nlohmann::json temporaries as maybe-uninitialized (a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "app/validate/comparison.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace ckpt::validate {

const char* verdictName(Verdict v)
{
    switch (v) {
    case Verdict::Exact: return "exact";
    case Verdict::WithinTolerance: return "within tolerance";
    case Verdict::Differs: return "differs";
    case Verdict::NotCompared: return "not compared";
    }
    return "?";
}

Verdict Component::verdict() const
{
    Verdict worst = Verdict::NotCompared;
    for (const auto& c : checks) {
        if (c.verdict == Verdict::NotCompared)
            continue;
        if (worst == Verdict::NotCompared || static_cast<int>(c.verdict) > static_cast<int>(worst))
            worst = c.verdict;
    }
    return worst;
}

Check notCompared(const std::string& name, const std::string& why)
{
    Check c{name, Verdict::NotCompared, why};
    c.gap = true;
    return c;
}

Check compareNumber(const std::string& name, double replay, double probe, double rtol)
{
    Check c{name};
    const double diff = std::abs(replay - probe);
    const double scale = std::max(std::abs(replay), std::abs(probe));
    c.measured = {{"replay", replay}, {"probe", probe}, {"abs_diff", diff}, {"rel_diff", scale > 0 ? diff / scale : 0.0}};
    if (std::bit_cast<uint64_t>(replay) == std::bit_cast<uint64_t>(probe) || replay == probe)
        c.verdict = Verdict::Exact;
    else if (std::isfinite(diff) && diff <= rtol * scale)
        c.verdict = Verdict::WithinTolerance;
    else
        c.verdict = Verdict::Differs;
    return c;
}

Check compareEqual(const std::string& name, const nlohmann::json& checkpoint, const nlohmann::json& probe,
                   const std::string& whatDiffers)
{
    Check c{name};
    c.measured = {{"checkpoint", checkpoint}, {"probe", probe}};
    const bool numbers = checkpoint.is_number() && probe.is_number();
    const bool equal = numbers ? checkpoint.get<double>() == probe.get<double>() : checkpoint == probe;
    c.verdict = equal ? Verdict::Exact : Verdict::Differs;
    if (!equal)
        c.detail = whatDiffers.empty() ? "checkpoint " + checkpoint.dump() + ", probe " + probe.dump() : whatDiffers;
    return c;
}

Check compareDigests(const std::string& name, const std::map<std::string, TensorDigest>& replay,
                     const std::map<std::string, nlohmann::json>& probe, double rtol)
{
    Check c{name};
    struct Row {
        std::string tensor;
        Verdict verdict;
        double l2Rel, sumDiff;
        std::string why;
    };
    std::vector<Row> rows;
    for (const auto& [key, want] : probe) {
        const auto it = replay.find(key);
        if (it == replay.end()) {
            rows.push_back({key, Verdict::Differs, 0, 0, "recorded by the probe, absent from the replay"});
            continue;
        }
        const TensorDigest& got = it->second;
        if (got.sha256 == want.value("sha256", "")) {
            rows.push_back({key, Verdict::Exact, 0, 0, {}});
            continue;
        }
        const auto shape = want.value("shape", std::vector<int64_t>{});
        if (shape != got.shape || want.value("dtype", "") != got.dtype) {
            rows.push_back({key, Verdict::Differs, 0, 0, "dtype/shape: replay " + got.dtype + ", probe " + want.value("dtype", "")});
            continue;
        }
        const double l2 = std::max(want.value("l2", 0.0), got.l2);
        const double dl2 = std::abs(got.l2 - want.value("l2", 0.0));
        const double dsum = std::abs(got.sum - want.value("sum", 0.0));
        double numel = 1;
        for (auto d : shape)
            numel *= static_cast<double>(d);
        const bool within = std::isfinite(dl2) && std::isfinite(dsum) && dl2 <= rtol * l2 && dsum <= rtol * l2 * std::sqrt(numel);
        rows.push_back({key, within ? Verdict::WithinTolerance : Verdict::Differs, l2 > 0 ? dl2 / l2 : dl2, dsum, {}});
    }
    for (const auto& [key, _] : replay) {
        if (!probe.contains(key))
            rows.push_back({key, Verdict::Differs, 0, 0, "in the replay, not recorded by the probe"});
    }
    int counts[4] = {0, 0, 0, 0};
    Verdict worst = rows.empty() ? Verdict::NotCompared : Verdict::Exact;
    for (const auto& r : rows) {
        ++counts[static_cast<int>(r.verdict)];
        worst = static_cast<int>(r.verdict) > static_cast<int>(worst) ? r.verdict : worst;
    }
    c.verdict = worst;
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        return std::make_pair(static_cast<int>(a.verdict), a.l2Rel) > std::make_pair(static_cast<int>(b.verdict), b.l2Rel);
    });
    nlohmann::json worstRows = nlohmann::json::array();
    for (const auto& r : rows) {
        if (r.verdict == Verdict::Exact || worstRows.size() >= 5)
            break;
        nlohmann::json row = {{"tensor", r.tensor}, {"verdict", verdictName(r.verdict)}, {"l2_rel_diff", r.l2Rel},
                              {"sum_abs_diff", r.sumDiff}};
        if (!r.why.empty())
            row["why"] = r.why;
        worstRows.push_back(row);
    }
    c.measured = {{"tensors", rows.size()}, {"exact", counts[0]}, {"within_tolerance", counts[1]}, {"differs", counts[2]},
                  {"worst", worstRows}};
    if (worst == Verdict::Differs || worst == Verdict::WithinTolerance)
        c.detail = std::to_string(counts[2]) + " of " + std::to_string(rows.size()) + " differ, " + std::to_string(counts[1])
                 + " within tolerance; first: " + rows.front().tensor;
    return c;
}

nlohmann::json toJson(const Component& c)
{
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& ch : c.checks) {
        nlohmann::json j = {{"name", ch.name}, {"verdict", verdictName(ch.verdict)}, {"measured", ch.measured}};
        if (!ch.detail.empty())
            j["detail"] = ch.detail;
        if (ch.gap)
            j["gap"] = true;
        checks.push_back(j);
    }
    return {{"name", c.name}, {"title", c.title}, {"verdict", verdictName(c.verdict())}, {"checks", checks}};
}

} // namespace ckpt::validate
