// SPDX-License-Identifier: MIT
// Colours of the data pages that the palette has no role for, derived from it so they read in
// light and dark themes.
#pragma once

#include <QColor>

class QPalette;

/// Background of a table row whose values disagree: the Highlight colour, faded into Base.
QColor differenceBackground(const QPalette& palette);
