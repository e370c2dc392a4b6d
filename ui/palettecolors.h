// SPDX-License-Identifier: MIT
// Colours the palette has no role for, derived from the palette so they read in light and dark themes.
#pragma once

#include <QColor>

class QPalette;

/// Text colour for dangerous imports and failed files: a red as readable on Base as the Text colour.
QColor warningColor(const QPalette& palette);

/// The application palette's warning colour (needs a QGuiApplication).
QColor warningColor();
