// SPDX-License-Identifier: MIT
#include "ui/plots/shardmapplot.h"

#include "ui/plots/plotcolors.h"
#include "ui/plots/plotstyle.h"
#include "ui/plots/plottitle.h"
#include "ui/plots/qcustomplotfence.h"

#include <QEvent>
#include <QVBoxLayout>

ShardMapPlot::ShardMapPlot(QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, new QCPTextElement(m_plot, QString()));
    m_plot->yAxis->setTicks(false);
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->yAxis->setRangeReversed(true); // the first shard on top
    // element indices: ticks on whole numbers only
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_plot->xAxis->setTicker(ticker);
    applyPalette();
}

ShardMapPlot::~ShardMapPlot() = default;

void ShardMapPlot::setShardMap(const PlotMath::ShardMap& map, const QString& title)
{
    m_plot->clearItems();
    for (const PlotMath::ShardBar& bar : map.bars) {
        auto* rect = new QCPItemRect(m_plot);
        rect->topLeft->setCoords(bar.start, bar.lane + 0.1);
        rect->bottomRight->setCoords(bar.end, bar.lane + 0.9);
        rect->setProperty("colorIndex", bar.rank >= 0 ? bar.rank : bar.lane);
        auto* label = new QCPItemText(m_plot);
        label->position->setCoords((bar.start + bar.end) / 2, bar.lane + 0.5);
        const QString extent = bar.rank >= 0 ? tr("rank %1: [%2, %3)").arg(bar.rank).arg(bar.start).arg(bar.end)
                                             : tr("[%1, %2)").arg(bar.start).arg(bar.end);
        // Two short lines rather than one long one: a bar near the edge keeps its label readable.
        label->setText(bar.note.isEmpty() ? extent : extent + QLatin1Char('\n') + bar.note);
        label->setClipToAxisRect(false);
    }
    m_barCount = static_cast<int>(map.bars.size());
    m_plot->xAxis->setLabel(tr("dimension %1 (size %2)").arg(map.dimension).arg(map.extent));
    m_plot->xAxis->setRange(0, map.extent > 0 ? map.extent : 1);
    m_plot->yAxis->setRange(0, map.bars.empty() ? 1 : static_cast<double>(map.bars.size()));
    setPlotTitle(m_plot, map.covers || map.bars.empty() ? title : title + tr(" — the shards leave a gap"));
    applyPalette();
}

void ShardMapPlot::clear()
{
    m_plot->clearItems();
    m_barCount = 0;
    requestReplot(m_plot);
}

void ShardMapPlot::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyPalette();
}

void ShardMapPlot::applyPalette()
{
    const QPalette& pal = palette();
    const QColor text = pal.color(QPalette::Text);
    applyPlotPalette(m_plot, pal);
    for (int i = 0; i < m_plot->itemCount(); ++i) {
        QCPAbstractItem* item = m_plot->item(i);
        if (auto* rect = qobject_cast<QCPItemRect*>(item)) {
            const QColor c = seriesColor(pal, rect->property("colorIndex").toInt());
            rect->setPen(QPen(c.darker(130)));
            rect->setBrush(QColor(c.red(), c.green(), c.blue(), 150));
        } else if (auto* label = qobject_cast<QCPItemText*>(item)) {
            label->setColor(text);
        }
    }
    requestReplot(m_plot);
}
