// SPDX-License-Identifier: MIT
// The arithmetic behind every plot, kept apart from QCustomPlot so it is tested without a
// window: axis ranges, histogram bars, shard bars, checkpoint markers, the LR curve rebuilt
// from a scheduler's state and the choice of logged series to draw beside it.
#pragma once

#include <QString>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckpt {
struct LrSchedule;
struct RunHistory;
}
struct TensorShard;

namespace PlotMath {

struct Range {
    double lower = 0;
    double upper = 1;
    bool operator==(const Range&) const = default;
};

/// [min, max] of the finite values widened by `pad` of its width on each side; a single value
/// gets a unit-wide (or ±10 %) range; no finite value gives [0, 1].
Range paddedRange(const std::vector<double>& values, double pad = 0.05);

struct Bars {
    std::vector<double> centers;
    std::vector<double> heights;
    double width = 1;
};

/// Histogram bins of equal width over [lo, hi] as bars (centre, count). A zero-width range (a
/// constant tensor) gives one bar of width 1 centred on lo.
Bars histogramBars(double lo, double hi, const std::vector<uint64_t>& counts);

struct ShardBar {
    int lane = 0;       // row of the map: one per shard, in order of start
    double start = 0;   // along `dimension` of the global tensor
    double end = 0;
    int rank = -1;
    QString file;
    QString note; // the shard's statistics or a replica's status, when known
};

struct ShardMap {
    int dimension = 0;  // the dimension the tensor is split along
    double extent = 0;  // its size
    std::vector<ShardBar> bars;
    bool covers = false; // the shards together cover [0, extent) with no gap
};

/// The shards of a tensor of global `shape` as bars over the dimension they split (the first
/// one where some shard is smaller than the tensor).
ShardMap shardMap(const std::vector<int64_t>& shape, const std::vector<TensorShard>& shards);

/// Steps of the run's checkpoints that have one, in order.
std::vector<double> checkpointSteps(const ckpt::RunHistory& run);

struct Curve {
    std::vector<double> x;
    std::vector<double> y;
};

struct LrCurves {
    std::vector<Curve> groups; // one per param group
    double stepsPerPosition = 1; // training steps per scheduler step (epoch-wise schedulers > 1)
    QString note;                // why the curve is shorter or missing, for the user
};

/// The LR of every param group from scheduler position 0 up to training step `lastStep`,
/// reconstructed with LrSchedule::lrSeries. The scheduler's position maps to training steps by
/// globalStep / lastEpoch (1 when either is unknown). Not recomputable: only the recorded
/// _last_lr at the current step, with the reason in `note`.
LrCurves reconstructLr(const ckpt::LrSchedule& schedule, std::optional<int64_t> globalStep, int64_t lastStep);

/// Keeps at most 3 * buckets + 1 points: the first, min and max of each bucket (in x order), so steps
/// and spikes survive. Curves shorter than that come back unchanged.
Curve decimate(const Curve& curve, std::size_t buckets);

/// The name of the run's series that best matches what is asked: an exact candidate first, then
/// the shortest name containing `needle` and none of `excluded`. Empty when none.
std::string pickSeries(const std::map<std::string, std::vector<std::pair<int64_t, double>>>& series,
                       const std::vector<std::string>& candidates, const std::string& needle,
                       const std::vector<std::string>& excluded = {});

Curve toCurve(const std::vector<std::pair<int64_t, double>>& points);

/// The step the plot should end at: the last of the checkpoints, the logged series and the
/// current checkpoint's own step.
int64_t lastStepOf(const ckpt::RunHistory* run, std::optional<int64_t> globalStep);

/// How many legend entries of these widths fit side by side in `available` pixels when they are
/// laid out row by row in columns (each column as wide as its widest entry): at least 1.
int legendColumns(const std::vector<int>& entryWidths, int spacing, int available);

/// A checkpoint's label along a plot's step axis, in pixels: where its line is, how wide its full
/// text ("300 latest best") and its short text (the step alone) are, and how much it matters.
struct MarkerLabel {
    double x = 0;
    double fullWidth = 0;
    double shortWidth = 0;
    bool important = false; // the current checkpoint, latest, best: shown first
};

enum class LabelForm { Hidden, Short, Full };
enum class LabelAlign { Left, Center, Right }; // the text's left edge, middle or right edge at x

struct LabelPlacement {
    LabelForm form = LabelForm::Hidden;
    LabelAlign align = LabelAlign::Center;
    double left = 0, right = 0; // the text's extent in pixels when shown
};

/// Which labels to draw, in which form, so that no two overlap (at least `gap` pixels apart) and
/// none leaves [left, right]: the important ones first, then the first and the last checkpoint,
/// then the rest in halving order (the middle, the quarters, ...) so that those shown are spread
/// evenly; each full where it fits, else short, else hidden (its line is still drawn). For
/// 2 to thousands of checkpoints at any width.
std::vector<LabelPlacement> layoutMarkerLabels(const std::vector<MarkerLabel>& labels, double left, double right, double gap = 6);

} // namespace PlotMath
