// SPDX-License-Identifier: MIT
#include "ui/pages/optimizerrows.h"

#include "ckpt/io/errors.h"
#include "ckpt/state/run_history.h"
#include "ckpt/stats/checkpoint_stats.h"
#include "ui/textformat.h"

#include <cmath>
#include <limits>

using namespace ckpt;

namespace {

QString stepText(const std::optional<double>& step)
{
    return step ? QString::number(*step, 'g', 17) : QString();
}

QString parameterLabel(const ParamState& p)
{
    return p.name.empty() ? QStringLiteral("#") + fromUtf8(p.index) : fromUtf8(p.name);
}

PlotMath::Curve curveOf(const std::vector<double>& steps, const std::vector<double>& values)
{
    PlotMath::Curve c;
    for (std::size_t i = 0; i < steps.size() && i < values.size(); ++i) {
        if (std::isfinite(values[i])) {
            c.x.push_back(steps[i]);
            c.y.push_back(values[i]);
        }
    }
    return c;
}

} // namespace

std::vector<MomentRow> momentRows(const OptimizerPart& optimizer)
{
    std::vector<MomentRow> rows;
    for (const ParamState& p : optimizer.paramState) {
        MomentRow base;
        base.parameter = parameterLabel(p);
        base.index = fromUtf8(p.index);
        base.group = p.group;
        base.step = stepText(p.step);
        if (p.moments.empty()) {
            rows.push_back(base);
            continue;
        }
        for (const MomentInfo& m : p.moments) {
            MomentRow row = base;
            row.moment = fromUtf8(m.name);
            row.dtype = fromUtf8(m.dtype);
            row.shape = m.shape;
            row.from = m.from;
            rows.push_back(std::move(row));
        }
    }
    return rows;
}

PlotMath::Curve MomentHistory::total(const QString& moment) const
{
    const auto it = totalNorm.find(moment);
    return it == totalNorm.end() ? PlotMath::Curve() : curveOf(steps, it->second);
}

PlotMath::Curve MomentHistory::of(const QString& parameter, const QString& moment) const
{
    const auto p = byParameter.find(parameter);
    if (p == byParameter.end())
        return {};
    const auto m = p->second.find(moment);
    return m == p->second.end() ? PlotMath::Curve() : curveOf(steps, m->second);
}

MomentHistory momentHistory(const RunHistory& run, const std::function<bool(int, int)>& progress)
{
    MomentHistory out;
    const int total = static_cast<int>(run.checkpoints.size());
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int i = 0; i < total; ++i) {
        if (progress && !progress(i, total))
            return out;
        StatsOptions options;
        if (progress)
            options.progress = [&progress, i, total](const StatsProgress&) { return progress(i, total); };
        const RunCheckpoint& c = run.checkpoints[static_cast<std::size_t>(i)];
        if (!c.step)
            continue;
        try {
            const TrainingState state = readTrainingState(c.path);
            if (!state.optimizer)
                continue;
            const std::size_t column = out.steps.size();
            out.steps.push_back(static_cast<double>(*c.step));
            // every series gets a value (NaN where missing) at every step read
            for (auto& [name, values] : out.totalNorm)
                values.resize(column + 1, nan);
            for (auto& [param, moments] : out.byParameter) {
                for (auto& [name, values] : moments)
                    values.resize(column + 1, nan);
            }
            std::map<QString, double> sumSquares;
            TensorSource source;
            for (const ParamState& p : state.optimizer->paramState) {
                for (const MomentInfo& m : p.moments) {
                    const TensorStats stats = source.stats(m.from, options);
                    if (!stats.ok())
                        continue;
                    const QString moment = fromUtf8(m.name);
                    sumSquares[moment] += stats.l2 * stats.l2;
                    auto& values = out.byParameter[parameterLabel(p)][moment];
                    values.resize(column + 1, nan);
                    values[column] = stats.l2;
                }
            }
            for (const auto& [moment, sum] : sumSquares) {
                auto& values = out.totalNorm[moment];
                values.resize(column + 1, nan);
                values[column] = std::sqrt(sum);
            }
        } catch (const CancelledError&) {
            return out;
        } catch (const std::exception& e) {
            out.errors.append(fromUtf8(e.what()));
        }
    }
    if (progress)
        progress(total, total);
    return out;
}
