// SPDX-License-Identifier: MIT
// Checkpoint labels along a plot's step axis that never overlap: the timeline's top row and
// CurvePlot's markers keep their labels here and lay them out after every layout of the plot
// (PlotMath::layoutMarkerLabels decides; this applies it to the QCustomPlot text items).
#pragma once

#include <QString>

#include <vector>

class QCPAxis;
class QCPItemText;

struct MarkerText {
    QCPItemText* item = nullptr;
    QString full, brief; // "300 latest best" or the checkpoint's name; the step alone
    double step = 0;
    bool important = false; // the current checkpoint, latest, best
};

/// Shows each label in full, as its step alone, or not at all, at the axis's current pixels between
/// `left` and `right`, so that no two overlap.
void layOutMarkerTexts(const std::vector<MarkerText>& texts, const QCPAxis& x, double left, double right);
