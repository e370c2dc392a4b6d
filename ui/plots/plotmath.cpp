// SPDX-License-Identifier: MIT
#include "ui/plots/plotmath.h"

#include "ckpt/state/lr_schedule.h"
#include "ckpt/state/run_history.h"
#include "ui/pages/tensorrows.h"
#include "ui/textformat.h"

#include <QObject>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace PlotMath {

Range paddedRange(const std::vector<double>& values, double pad)
{
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    for (const double v : values) {
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    if (lo > hi)
        return {0, 1};
    if (lo == hi) {
        const double half = lo == 0 ? 0.5 : std::abs(lo) * 0.1;
        return {lo - half, hi + half};
    }
    const double margin = (hi - lo) * pad;
    return {lo - margin, hi + margin};
}

Bars histogramBars(double lo, double hi, const std::vector<uint64_t>& counts)
{
    Bars bars;
    if (counts.empty())
        return bars;
    const bool flat = !(hi > lo);
    bars.width = flat ? 1.0 : (hi - lo) / static_cast<double>(counts.size());
    for (std::size_t i = 0; i < counts.size(); ++i) {
        bars.centers.push_back(flat ? lo : lo + (static_cast<double>(i) + 0.5) * bars.width);
        bars.heights.push_back(static_cast<double>(counts[i]));
        if (flat) // every element equals lo: the counts can only be in one bin
            bars.heights.back() = 0;
    }
    if (flat) {
        uint64_t total = 0;
        for (const uint64_t c : counts)
            total += c;
        bars.centers.resize(1);
        bars.heights.assign(1, static_cast<double>(total));
    }
    return bars;
}

ShardMap shardMap(const std::vector<int64_t>& shape, const std::vector<TensorShard>& shards)
{
    ShardMap map;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        const bool split = std::any_of(shards.begin(), shards.end(), [&](const TensorShard& s) {
            return d < s.sizes.size() && s.sizes[d] < shape[d];
        });
        if (split) {
            map.dimension = static_cast<int>(d);
            break;
        }
    }
    const auto dim = static_cast<std::size_t>(map.dimension);
    map.extent = dim < shape.size() ? static_cast<double>(shape[dim]) : 1;
    for (const TensorShard& s : shards) {
        ShardBar bar;
        bar.start = dim < s.offsets.size() ? static_cast<double>(s.offsets[dim]) : 0;
        bar.end = bar.start + (dim < s.sizes.size() ? static_cast<double>(s.sizes[dim]) : map.extent);
        bar.rank = s.rank;
        bar.file = s.file;
        bar.note = s.note;
        map.bars.push_back(bar);
    }
    std::stable_sort(map.bars.begin(), map.bars.end(),
                     [](const ShardBar& a, const ShardBar& b) { return a.start < b.start; });
    double covered = 0;
    for (std::size_t i = 0; i < map.bars.size(); ++i) {
        map.bars[i].lane = static_cast<int>(i);
        if (map.bars[i].start <= covered)
            covered = std::max(covered, map.bars[i].end);
    }
    map.covers = !map.bars.empty() && covered >= map.extent;
    return map;
}

std::vector<double> checkpointSteps(const ckpt::RunHistory& run)
{
    std::vector<double> steps;
    for (const auto& c : run.checkpoints) {
        if (c.step)
            steps.push_back(static_cast<double>(*c.step));
    }
    std::sort(steps.begin(), steps.end());
    return steps;
}

LrCurves reconstructLr(const ckpt::LrSchedule& schedule, std::optional<int64_t> globalStep, int64_t lastStep)
{
    LrCurves out;
    if (globalStep && schedule.lastEpoch > 0 && *globalStep > schedule.lastEpoch)
        out.stepsPerPosition = static_cast<double>(*globalStep) / static_cast<double>(schedule.lastEpoch);
    // Megatron's scheduler counts samples (num_steps += global batch size per update): drawn per
    // iteration, at the batch size its position and the iteration imply.
    const bool samples = schedule.kind == "Megatron OptimizerParamScheduler";
    if (samples && globalStep && *globalStep > 0 && schedule.lastEpoch > *globalStep)
        out.stepsPerPosition = static_cast<double>(*globalStep) / static_cast<double>(schedule.lastEpoch);
    const double here = static_cast<double>(std::max<int64_t>(schedule.lastEpoch, 0)) * out.stepsPerPosition;
    if (!schedule.recomputable) {
        out.note = QObject::tr("%1 cannot be recomputed (%2): only the recorded LR at this checkpoint is shown")
                       .arg(fromUtf8(schedule.kind), fromUtf8(schedule.why));
        for (const double lr : schedule.lastLr)
            out.groups.push_back({{here}, {lr}});
        return out;
    }
    int64_t last = std::max<int64_t>(
        schedule.lastEpoch, static_cast<int64_t>(std::ceil(static_cast<double>(lastStep) / out.stepsPerPosition)));
    std::vector<std::vector<double>> series;
    try {
        series = schedule.lrSeries(0, last);
    } catch (const std::out_of_range&) {
        // OneCycleLR refuses positions past total_steps: draw up to where the schedule is.
        last = std::max<int64_t>(schedule.lastEpoch, 0);
        series = schedule.lrSeries(0, last);
        out.note = QObject::tr("the schedule ends at position %1").arg(last);
    }
    for (std::size_t p = 0; p < series.size(); ++p) {
        if (out.groups.size() < series[p].size())
            out.groups.resize(series[p].size());
        for (std::size_t g = 0; g < series[p].size(); ++g) {
            out.groups[g].x.push_back(static_cast<double>(p) * out.stepsPerPosition);
            out.groups[g].y.push_back(series[p][g]);
        }
    }
    if (!schedule.warning.empty())
        out.note = fromUtf8(schedule.warning);
    else if (samples && out.stepsPerPosition < 1)
        out.note = QObject::tr("positions count samples: drawn per iteration at %1 samples each").arg(1.0 / out.stepsPerPosition);
    return out;
}

Curve decimate(const Curve& curve, std::size_t buckets)
{
    const std::size_t n = std::min(curve.x.size(), curve.y.size());
    if (buckets == 0 || n <= 3 * buckets)
        return curve;
    Curve out;
    for (std::size_t b = 0; b < buckets; ++b) {
        const std::size_t first = b * n / buckets;
        const std::size_t end = (b + 1) * n / buckets;
        std::size_t lo = first, hi = first;
        for (std::size_t i = first; i < end; ++i) {
            if (curve.y[i] < curve.y[lo])
                lo = i;
            if (curve.y[i] > curve.y[hi])
                hi = i;
        }
        const std::size_t picks[] = {first, std::min(lo, hi), std::max(lo, hi)};
        for (std::size_t k = 0; k < 3; ++k) {
            if (k > 0 && picks[k] == picks[k - 1])
                continue;
            out.x.push_back(curve.x[picks[k]]);
            out.y.push_back(curve.y[picks[k]]);
        }
    }
    if (out.x.back() != curve.x[n - 1]) { // the curve still ends where it ends
        out.x.push_back(curve.x[n - 1]);
        out.y.push_back(curve.y[n - 1]);
    }
    return out;
}

std::string pickSeries(const std::map<std::string, std::vector<std::pair<int64_t, double>>>& series,
                       const std::vector<std::string>& candidates, const std::string& needle,
                       const std::vector<std::string>& excluded)
{
    for (const std::string& c : candidates) {
        if (series.contains(c))
            return c;
    }
    std::string best;
    for (const auto& [name, points] : series) {
        if (name.find(needle) == std::string::npos)
            continue;
        const bool skip = std::any_of(excluded.begin(), excluded.end(),
                                      [&](const std::string& e) { return name.find(e) != std::string::npos; });
        if (!skip && (best.empty() || name.size() < best.size()))
            best = name;
    }
    return best;
}

Curve toCurve(const std::vector<std::pair<int64_t, double>>& points)
{
    Curve c;
    for (const auto& [step, value] : points) {
        c.x.push_back(static_cast<double>(step));
        c.y.push_back(value);
    }
    return c;
}

int64_t lastStepOf(const ckpt::RunHistory* run, std::optional<int64_t> globalStep)
{
    int64_t last = globalStep.value_or(0);
    if (!run)
        return last;
    for (const auto& c : run->checkpoints)
        last = std::max(last, c.step.value_or(0));
    for (const auto& [name, points] : run->series) {
        if (!points.empty())
            last = std::max(last, points.back().first);
    }
    return last;
}

int legendColumns(const std::vector<int>& entryWidths, int spacing, int available)
{
    for (int columns = static_cast<int>(entryWidths.size()); columns > 1; --columns) {
        std::vector<int> widths(static_cast<std::size_t>(columns), 0);
        for (std::size_t i = 0; i < entryWidths.size(); ++i)
            widths[i % static_cast<std::size_t>(columns)] = std::max(widths[i % static_cast<std::size_t>(columns)], entryWidths[i]);
        int total = spacing * (columns - 1);
        for (const int width : widths)
            total += width;
        if (total <= available)
            return columns;
    }
    return 1;
}

namespace {

// 0, n-1, then the middle, the quarters, the eighths...: a spread that stays even however many fit.
std::vector<std::size_t> halvingOrder(std::size_t n)
{
    std::vector<std::size_t> order;
    if (n == 0)
        return order;
    std::vector<char> taken(n, 0);
    auto take = [&](std::size_t i) {
        if (!taken[i]) {
            taken[i] = 1;
            order.push_back(i);
        }
    };
    take(0);
    take(n - 1);
    for (std::size_t step = n; step > 1; step = (step + 1) / 2) {
        for (std::size_t i = step / 2; i < n; i += step)
            take(i);
        if (step == 2)
            break;
    }
    for (std::size_t i = 0; i < n; ++i)
        take(i);
    return order;
}

} // namespace

std::vector<LabelPlacement> layoutMarkerLabels(const std::vector<MarkerLabel>& labels, double left, double right, double gap)
{
    std::vector<LabelPlacement> out(labels.size());
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (labels[i].important)
            order.push_back(i);
    }
    for (std::size_t i : halvingOrder(labels.size())) {
        if (!labels[i].important)
            order.push_back(i);
    }
    // The extents shown so far, kept sorted by their left edge.
    std::vector<std::pair<double, double>> shown;
    auto fits = [&](double l, double r) {
        if (l < left || r > right)
            return false;
        auto it = std::lower_bound(shown.begin(), shown.end(), std::make_pair(l, r));
        if (it != shown.end() && it->first < r + gap)
            return false;
        return it == shown.begin() || std::prev(it)->second + gap <= l;
    };
    auto place = [&](double x, double width, LabelPlacement& p) {
        // centred on its line; pushed to one side of it at the plot's edges
        for (LabelAlign a : {LabelAlign::Center, LabelAlign::Left, LabelAlign::Right}) {
            const double l = a == LabelAlign::Center ? x - width / 2 : a == LabelAlign::Left ? x : x - width;
            if (fits(l, l + width)) {
                p.align = a;
                p.left = l;
                p.right = l + width;
                shown.insert(std::lower_bound(shown.begin(), shown.end(), std::make_pair(l, l + width)), {l, l + width});
                return true;
            }
        }
        return false;
    };
    for (std::size_t i : order) {
        const MarkerLabel& m = labels[i];
        if (m.x < left || m.x > right)
            continue;
        if (place(m.x, m.fullWidth, out[i]))
            out[i].form = LabelForm::Full;
        else if (m.shortWidth < m.fullWidth && place(m.x, m.shortWidth, out[i]))
            out[i].form = LabelForm::Short;
    }
    return out;
}

} // namespace PlotMath
