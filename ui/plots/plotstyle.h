// SPDX-License-Identifier: MIT
// Palette colours applied to a QCustomPlot's background, axes, grid and title, so every plot
// follows the system's light or dark theme the same way.
#pragma once

class QCustomPlot;
class QPalette;

void applyPlotPalette(QCustomPlot* plot, const QPalette& palette);
