// SPDX-License-Identifier: MIT
#include "ui/palettecolors.h"

#include <QGuiApplication>
#include <QIcon>
#include <QPainter>
#include <QPalette>
#include <QPixmap>

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

QColor severityColor(int severity, const QPalette& palette)
{
    const bool darkText = palette.color(QPalette::Active, QPalette::Text).lightnessF() < 0.5;
    switch (severity) {
    case 2:
        return warningColor(palette);
    case 1:
        return darkText ? QColor(0xa0, 0x5a, 0x00) : QColor(0xf0, 0xb4, 0x4a);
    default:
        return darkText ? QColor(0x1f, 0x5f, 0xa8) : QColor(0x79, 0xb8, 0xff);
    }
}

QColor severityColor(int severity)
{
    return severityColor(severity, QGuiApplication::palette());
}

QIcon severityIcon(int severity)
{
    QPixmap pixmap(12, 12);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(Qt::NoPen);
    painter.setBrush(severityColor(severity));
    painter.drawEllipse(1, 1, 10, 10);
    return QIcon(pixmap);
}
