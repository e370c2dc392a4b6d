// SPDX-License-Identifier: MIT
#include "ui/plots/histogramplot.h"

#include "ui/plots/plotcolors.h"
#include "ui/plots/plotstyle.h"
#include "ui/plots/plottitle.h"
#include "ui/plots/qcustomplotfence.h"

#include <QEvent>
#include <QVBoxLayout>

#include <algorithm>

HistogramPlot::HistogramPlot(QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, new QCPTextElement(m_plot, QString()));
    m_bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_bars->setWidthType(QCPBars::wtPlotCoords);
    m_plot->xAxis->setLabel(tr("value"));
    m_plot->yAxis->setLabel(tr("elements"));
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    applyPalette();
}

HistogramPlot::~HistogramPlot() = default;

void HistogramPlot::setHistogram(const PlotMath::Bars& bars, const QString& title, const QString& xLabel)
{
    m_plot->xAxis->setLabel(xLabel);
    m_bars->setWidth(bars.width);
    m_bars->setData(QVector<double>(bars.centers.begin(), bars.centers.end()),
                    QVector<double>(bars.heights.begin(), bars.heights.end()), /*alreadySorted=*/true);
    std::vector<double> edges;
    for (const double c : bars.centers) {
        edges.push_back(c - bars.width / 2);
        edges.push_back(c + bars.width / 2);
    }
    const PlotMath::Range x = PlotMath::paddedRange(edges, 0.02);
    m_plot->xAxis->setRange(x.lower, x.upper);
    m_plot->axisRect()->setVisible(true);
    const double top = bars.heights.empty() ? 1 : *std::max_element(bars.heights.begin(), bars.heights.end());
    m_plot->yAxis->setRange(0, std::max(1.0, top * 1.05));
    setTitle(title);
}

void HistogramPlot::clear(const QString& message)
{
    m_bars->data()->clear();
    // empty axes would read as "every count is zero": show only the message
    m_plot->axisRect()->setVisible(false);
    setTitle(message);
}

QString HistogramPlot::xLabel() const
{
    return m_plot->xAxis->label();
}

int HistogramPlot::barCount() const
{
    return m_bars->dataCount();
}

PlotMath::Range HistogramPlot::xRange() const
{
    return {m_plot->xAxis->range().lower, m_plot->xAxis->range().upper};
}

void HistogramPlot::setTitle(const QString& title)
{
    m_title = title;
    setPlotTitle(m_plot, title);
}

void HistogramPlot::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyPalette();
}

void HistogramPlot::applyPalette()
{
    const QPalette& pal = palette();
    applyPlotPalette(m_plot, pal);
    const QColor fill = seriesColor(pal, 0);
    m_bars->setPen(QPen(fill.darker(120)));
    m_bars->setBrush(fill);
    requestReplot(m_plot);
}
