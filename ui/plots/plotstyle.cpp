// SPDX-License-Identifier: MIT
#include "ui/plots/plotstyle.h"

#include "ui/plots/plotcolors.h"
#include "ui/plots/qcustomplotfence.h"

void applyPlotPalette(QCustomPlot* plot, const QPalette& palette)
{
    const QColor text = palette.color(QPalette::Text);
    plot->setBackground(palette.brush(QPalette::Base));
    for (QCPAxisRect* rect : plot->axisRects()) {
        for (QCPAxis* axis : rect->axes()) {
            axis->setBasePen(QPen(text));
            axis->setTickPen(QPen(text));
            axis->setSubTickPen(QPen(text));
            axis->setTickLabelColor(text);
            axis->setLabelColor(text);
            axis->grid()->setPen(QPen(markerColor(palette), 0, Qt::DotLine));
        }
    }
    for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
        if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i)))
            title->setTextColor(text);
    }
    plot->legend->setBrush(palette.brush(QPalette::Base));
    plot->legend->setTextColor(text);
    plot->legend->setBorderPen(QPen(markerColor(palette)));
}
