// SPDX-License-Identifier: MIT
// The optimizer's per-parameter state as rows (one per parameter and moment), and the norms of
// its moments across a run's checkpoints, computed without a widget.
#pragma once

#include "ckpt/state/training_state.h"
#include "ui/pages/tensorrows.h"
#include "ui/plots/plotmath.h"

#include <functional>
#include <map>

namespace ckpt {
struct RunHistory;
}

struct MomentRow {
    QString parameter; // its name, or "#<index>" when the optimizer's index cannot be mapped
    QString index;     // the optimizer's key
    int group = -1;
    QString step;      // per-parameter step ("" for optimizers without one)
    QString moment;    // exp_avg, exp_avg_sq, momentum_buffer... ("" when the state has none)
    QString dtype;
    std::vector<int64_t> shape;
    ckpt::Provenance from;
    std::optional<TensorStatsView> stats;
};

/// One row per moment of each parameter with state, in the optimizer's order.
std::vector<MomentRow> momentRows(const ckpt::OptimizerPart& optimizer);

struct MomentHistory {
    std::vector<double> steps;                                  // of the checkpoints read
    std::map<QString, std::vector<double>> totalNorm;           // moment -> sqrt(sum of squared norms) over parameters
    std::map<QString, std::map<QString, std::vector<double>>> byParameter; // parameter -> moment -> norm
    QStringList errors;

    /// `moment`'s norm over checkpoints as a curve (NaN points dropped).
    PlotMath::Curve total(const QString& moment) const;
    PlotMath::Curve of(const QString& parameter, const QString& moment) const;
};

/// Reads every checkpoint of `run` that has a step and the L2 norm of every optimizer moment.
/// `progress(done, total)` returning false cancels (what was read stays). Never throws.
MomentHistory momentHistory(const ckpt::RunHistory& run, const std::function<bool(int done, int total)>& progress = {});
