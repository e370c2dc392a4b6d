// SPDX-License-Identifier: MIT
#include "ui/palettecolors.h"

#include <QGuiApplication>
#include <QPalette>

QColor warningColor(const QPalette& palette)
{
    // QPalette has no "negative" role (KColorScheme does). Follow the text colour, which the
    // theme already made readable on Base: dark text gets a dark red, light text a light red.
    const bool darkText = palette.color(QPalette::Active, QPalette::Text).lightnessF() < 0.5;
    return darkText ? QColor(0x9c, 0x14, 0x1e) : QColor(0xff, 0x7b, 0x72);
}

QColor warningColor()
{
    return warningColor(QGuiApplication::palette());
}
