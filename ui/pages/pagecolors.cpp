// SPDX-License-Identifier: MIT
#include "ui/pages/pagecolors.h"

#include <QPalette>

QColor differenceBackground(const QPalette& palette)
{
    // Mixed rather than translucent, so alternating row colours do not show through unevenly.
    const QColor base = palette.color(QPalette::Base);
    const QColor warm = base.lightnessF() < 0.5 ? QColor(0xb0, 0x7a, 0x10) : QColor(0xff, 0xc8, 0x57);
    const double t = 0.35;
    return QColor::fromRgbF(static_cast<float>(base.redF() * (1 - t) + warm.redF() * t),
                            static_cast<float>(base.greenF() * (1 - t) + warm.greenF() * t),
                            static_cast<float>(base.blueF() * (1 - t) + warm.blueF() * t));
}
