// SPDX-License-Identifier: MIT
// Colours the palette has no role for, derived from the palette so they read in light and dark themes.
#pragma once

#include <QColor>
#include <QIcon>

class QPalette;

/// Text colour for dangerous imports and failed files: a red as readable on Base as the Text colour.
QColor warningColor(const QPalette& palette);

/// The application palette's warning colour (needs a QGuiApplication).
QColor warningColor();

/// Colour of a finding's severity (ckpt::Severity as int: 0 info, 1 warning, 2 error), readable in
/// both themes: error is warningColor(), warning an amber, info a blue.
QColor severityColor(int severity, const QPalette& palette);
QColor severityColor(int severity);

/// A filled dot in the severity's colour, for badges in item views.
QIcon severityIcon(int severity);
