// SPDX-License-Identifier: MIT
// What the Schedule page draws, computed without a widget: the LR rebuilt from the scheduler's
// state for each param group, the LR and loss the run logged, and the run's checkpoints.
#pragma once

#include "ui/plots/plotmath.h"

#include <QStringList>

namespace ckpt {
struct RunHistory;
struct TrainingState;
}

struct ScheduleCurves {
    struct Named {
        QString name;
        PlotMath::Curve curve;
    };
    std::vector<Named> lrGroups; // reconstructed, one per param group
    bool lrStepwise = false;     // stepped less often than every training step: draw as steps
    Named loggedLr;              // empty curve when the run logs none
    Named loss;                  // on the second axis
    std::vector<double> markers; // checkpoint steps
    QStringList markerLabels;
    int currentMarker = -1;      // this checkpoint among the markers
    QString schedulerText;       // "CosineAnnealingLR, position 300, 1 step per position"
    QStringList notes;           // what could not be drawn, and why
};

/// At most `maxPoints` points per curve (min/max decimation keeps steps and spikes).
ScheduleCurves buildScheduleCurves(const ckpt::TrainingState& state, const ckpt::RunHistory* run,
                                   std::size_t maxPoints = 4000);
