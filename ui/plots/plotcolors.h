// SPDX-License-Identifier: MIT
// Curve colours that read on the palette's Base colour, light or dark.
#pragma once

#include <QColor>

class QPalette;

/// The i-th of a set of distinguishable colours, lighter on a dark Base and darker on a light one.
QColor seriesColor(const QPalette& palette, int i);

/// Checkpoint markers and grid lines: the Text colour, faded.
QColor markerColor(const QPalette& palette);
