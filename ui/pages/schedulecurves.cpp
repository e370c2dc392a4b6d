// SPDX-License-Identifier: MIT
#include "ui/pages/schedulecurves.h"

#include "ckpt/frameworks/framework_registry.h"
#include "ckpt/state/run_history.h"
#include "ckpt/state/training_state.h"
#include "ui/textformat.h"

#include <QCoreApplication>

#include <algorithm>

namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("ScheduleCurves", text);
}

} // namespace

ScheduleCurves buildScheduleCurves(const ckpt::TrainingState& state, const ckpt::RunHistory* run, std::size_t maxPoints)
{
    ScheduleCurves out;
    const std::size_t buckets = std::max<std::size_t>(maxPoints / 3, 1);
    const int64_t lastStep = PlotMath::lastStepOf(run, state.globalStep);

    if (state.scheduler) {
        const ckpt::LrSchedule& schedule = state.scheduler->schedule;
        const PlotMath::LrCurves lr = PlotMath::reconstructLr(schedule, state.globalStep, lastStep);
        for (std::size_t g = 0; g < lr.groups.size(); ++g) {
            const QString name = lr.groups.size() == 1 ? tr("LR from scheduler state")
                                                       : tr("LR from scheduler state, group %1").arg(g);
            out.lrGroups.push_back({name, PlotMath::decimate(lr.groups[g], buckets)});
        }
        out.schedulerText = tr("%1, position %2").arg(fromUtf8(schedule.kind)).arg(schedule.lastEpoch);
        out.lrStepwise = lr.stepsPerPosition > 1;
        if (lr.stepsPerPosition != 1)
            out.schedulerText += tr(", %1 steps per position").arg(lr.stepsPerPosition);
        if (!lr.note.isEmpty())
            out.notes.append(lr.note);
    } else {
        out.notes.append(tr("This checkpoint has no LR scheduler state."));
    }

    if (run) {
        const std::string lrName = PlotMath::pickSeries(run->series, {"learning_rate", "lr", "train/lr", "train/learning_rate"}, "lr");
        if (!lrName.empty())
            out.loggedLr = {tr("logged %1").arg(fromUtf8(lrName)), PlotMath::decimate(PlotMath::toCurve(run->series.at(lrName)), buckets)};
        const std::string lossName = PlotMath::pickSeries(run->series, ckpt::lossMetricNames(), "loss", {"eval", "val", "test", "scale"});
        if (!lossName.empty())
            out.loss = {tr("logged %1").arg(fromUtf8(lossName)), PlotMath::decimate(PlotMath::toCurve(run->series.at(lossName)), buckets)};
        if (lrName.empty() && lossName.empty())
            out.notes.append(tr("The run logs neither a learning rate nor a loss."));
        for (const ckpt::RunCheckpoint& c : run->checkpoints) {
            if (!c.step)
                continue;
            if (state.globalStep && *c.step == *state.globalStep)
                out.currentMarker = static_cast<int>(out.markers.size());
            out.markers.push_back(static_cast<double>(*c.step));
            out.markerLabels.append(tr("step %1").arg(*c.step));
        }
    }
    if (out.currentMarker < 0 && state.globalStep) {
        // Opened on its own (or not found in the run): mark this checkpoint anyway.
        const auto step = static_cast<double>(*state.globalStep);
        const auto at = std::lower_bound(out.markers.begin(), out.markers.end(), step) - out.markers.begin();
        out.markers.insert(out.markers.begin() + at, step);
        out.markerLabels.insert(at, tr("step %1").arg(*state.globalStep));
        out.currentMarker = static_cast<int>(at);
    }
    return out;
}
