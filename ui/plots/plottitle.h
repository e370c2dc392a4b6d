// SPDX-License-Identifier: MIT
// The title line(s) above a plot, elided to the plot's width.
#pragma once

class QCustomPlot;
class QString;

/// Shows `title` in the plot's title element (the text element in the first layout row), each
/// line elided in the middle to the plot's width, again whenever the plot is resized. Key
/// paths are long and plots beside a table are narrow: without this the text runs off both
/// sides. The whole title is the plot's tooltip.
void setPlotTitle(QCustomPlot* plot, const QString& title);
