// SPDX-License-Identifier: MIT
// Palette colours applied to a QCustomPlot's background, axes, grid and title, so every plot
// follows the system's light or dark theme the same way; and replots that wait until the plot
// is on screen.
#pragma once

class QCustomPlot;
class QPalette;

void applyPlotPalette(QCustomPlot* plot, const QPalette& palette);

/// Queues a replot when `plot` is visible; otherwise the replot waits until it is shown. The
/// pages of hidden tabs are updated as data arrives, and drawing them then would only cost the
/// UI thread time while the user looks elsewhere.
void requestReplot(QCustomPlot* plot);
