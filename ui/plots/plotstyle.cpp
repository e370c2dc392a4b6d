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
    if (!plot->legend) // a plot that rebuilt its layout (the timeline's stacked rows) has none
        return;
    plot->legend->setBrush(palette.brush(QPalette::Base));
    plot->legend->setTextColor(text);
    plot->legend->setBorderPen(QPen(markerColor(palette)));
}

namespace {

// Replots its plot once, the next time the plot is shown.
class ReplotOnShow final : public QObject {
public:
    explicit ReplotOnShow(QCustomPlot* plot)
        : QObject(plot)
        , m_plot(plot)
    {
        setObjectName(name());
        plot->installEventFilter(this);
    }
    static QString name() { return QStringLiteral("ckptReplotOnShow"); }
    bool pending = false;

protected:
    bool eventFilter(QObject*, QEvent* event) override
    {
        if (event->type() == QEvent::Show && pending) {
            pending = false;
            m_plot->replot(QCustomPlot::rpQueuedReplot);
        }
        return false;
    }

private:
    QCustomPlot* m_plot;
};

} // namespace

void requestReplot(QCustomPlot* plot)
{
    if (plot->isVisible()) {
        plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    auto* watcher = static_cast<ReplotOnShow*>(plot->findChild<QObject*>(ReplotOnShow::name(), Qt::FindDirectChildrenOnly));
    if (!watcher)
        watcher = new ReplotOnShow(plot);
    watcher->pending = true;
}
