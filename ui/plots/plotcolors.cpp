// SPDX-License-Identifier: MIT
#include "ui/plots/plotcolors.h"

#include <QPalette>

#include <array>

QColor seriesColor(const QPalette& palette, int i)
{
    // Okabe–Ito: tells apart under the common colour-vision deficiencies.
    static constexpr std::array<QRgb, 7> colors{0x0072b2, 0xd55e00, 0x009e73, 0xcc79a7, 0xe69f00, 0x56b4e9, 0xf0e442};
    QColor c = QColor::fromRgb(colors[static_cast<std::size_t>(i) % colors.size()]);
    const bool darkBase = palette.color(QPalette::Base).lightnessF() < 0.5;
    return darkBase ? c.lighter(125) : c.darker(110);
}

QColor markerColor(const QPalette& palette)
{
    QColor c = palette.color(QPalette::Text);
    c.setAlphaF(0.45f);
    return c;
}
