// SPDX-License-Identifier: MIT
#include "ui/plots/curveplot.h"

#include "ui/plots/markerlabels.h"
#include "ui/plots/plotcolors.h"
#include "ui/plots/plotstyle.h"
#include "ui/plots/plottitle.h"
#include "ui/plots/qcustomplotfence.h"

#include <QEvent>
#include <QVBoxLayout>

#include <cmath>

namespace {

QVector<double> toVector(const std::vector<double>& v)
{
    return QVector<double>(v.begin(), v.end());
}

PlotMath::Range rangeOf(const QCPRange& r)
{
    return {r.lower, r.upper};
}

} // namespace

CurvePlot::CurvePlot(QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
    m_plot->legend->setVisible(true);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, new QCPTextElement(m_plot, QString()));
    // The legend sits in a row of its own under the axes: inside them it covered the checkpoint
    // labels at the top and, wherever it went, some of the curves.
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(2, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(2, 0.001);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setMargins(QMargins(4, 1, 4, 1));
    m_plot->legend->setRowSpacing(0);
    m_plot->legend->setColumnSpacing(12);
    m_plot->legend->setMaximumSize(QWIDGETSIZE_MAX, m_plot->legend->maximumSize().height());
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] { fit(); });
    // Before each layout pass: the plot's width is known there, and the legend follows it.
    connect(m_plot, &QCustomPlot::beforeReplot, this, &CurvePlot::wrapLegend);
    connect(m_plot, &QCustomPlot::afterLayout, this, &CurvePlot::placeMarkerLabels);
    applyPalette();
}

CurvePlot::~CurvePlot() = default;

void CurvePlot::clear()
{
    m_plot->clearGraphs();
    m_plot->clearItems();
    m_curves.clear();
    m_markers.clear();
    m_tags.clear();
    m_plot->yAxis2->setVisible(false);
    setMessage({});
    requestReplot(m_plot);
}

void CurvePlot::setAxisLabels(const QString& x, const QString& left, const QString& right)
{
    m_plot->xAxis->setLabel(x);
    m_plot->yAxis->setLabel(left);
    m_plot->yAxis2->setLabel(right);
}

void CurvePlot::setLeftLogarithmic(bool log)
{
    m_plot->yAxis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    m_plot->yAxis->setTicker(log ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog)
                                 : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
}

QRect CurvePlot::legendRect() const
{
    return m_plot->legend->outerRect();
}

QList<QRect> CurvePlot::legendEntryRects() const
{
    QList<QRect> rects;
    for (int i = 0; i < m_plot->legend->itemCount(); ++i) {
        if (const QCPAbstractLegendItem* entry = m_plot->legend->item(i))
            rects.append(entry->outerRect());
    }
    return rects;
}

void CurvePlot::wrapLegend()
{
    QCPLegend* legend = m_plot->legend;
    std::vector<int> widths;
    for (int i = 0; i < legend->itemCount(); ++i) {
        if (const QCPAbstractLegendItem* entry = legend->item(i)) // a removed curve leaves an empty cell
            widths.push_back(entry->minimumOuterSizeHint().width());
    }
    const QMargins outer = legend->margins(), inner = legend->minimumMargins();
    const int available = m_plot->viewport().width() - outer.left() - outer.right() - inner.left() - inner.right()
        - m_plot->plotLayout()->margins().left() - m_plot->plotLayout()->margins().right();
    const int columns = PlotMath::legendColumns(widths, legend->columnSpacing(), available);
    legend->setWrap(columns);
    // Rearranged each time: curves come and go between replots, and this also closes their gaps.
    legend->setFillOrder(QCPLegend::foColumnsFirst, /*rearrange=*/true);
}

QRect CurvePlot::plotAreaRect() const
{
    return m_plot->axisRect()->rect();
}

int CurvePlot::addCurve(const QString& name, const PlotMath::Curve& curve, Axis axis, int colorIndex, Style style)
{
    QCPAxis* valueAxis = axis == Axis::Left ? m_plot->yAxis : m_plot->yAxis2;
    valueAxis->setVisible(true);
    QCPGraph* graph = m_plot->addGraph(m_plot->xAxis, valueAxis);
    graph->setName(name);
    graph->setData(toVector(curve.x), toVector(curve.y), /*alreadySorted=*/true);
    switch (style) {
    case Style::Line:
        break;
    case Style::Steps:
        graph->setLineStyle(QCPGraph::lsStepLeft);
        break;
    case Style::Points:
        graph->setLineStyle(QCPGraph::lsNone);
        // many logged points would bury the curve they are compared with
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, curve.x.size() > 60 ? 3 : 6));
        break;
    }
    m_curves.push_back({graph, colorIndex, axis});
    applyPalette();
    return static_cast<int>(m_curves.size()) - 1;
}

void CurvePlot::setMarkers(const std::vector<double>& steps, const QStringList& labels, int current)
{
    m_plot->clearItems();
    m_tags.clear();
    m_markers = steps;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        auto* line = new QCPItemStraightLine(m_plot);
        line->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
        line->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
        line->point1->setCoords(steps[i], 0);
        line->point2->setCoords(steps[i], 1);
        line->setProperty("current", static_cast<int>(i) == current);
        if (i < static_cast<std::size_t>(labels.size())) {
            auto* text = new QCPItemText(m_plot);
            text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
            text->position->setCoords(steps[i], 0);
            text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
            text->setPadding(QMargins(3, 2, 3, 2));
            text->setText(labels[static_cast<qsizetype>(i)]);
            m_tags.push_back({text, labels[static_cast<qsizetype>(i)], QString::number(steps[i], 'g', 12), steps[i], static_cast<int>(i) == current});
        }
    }
    applyPalette();
}

void CurvePlot::fit()
{
    std::vector<double> xs = m_markers, left, right;
    const bool log = m_plot->yAxis->scaleType() == QCPAxis::stLogarithmic;
    for (const CurveInfo& c : m_curves) {
        for (const QCPGraphData& d : *c.graph->data()) {
            xs.push_back(d.key);
            if (c.axis == Axis::Right)
                right.push_back(d.value);
            else if (!log || d.value > 0)
                left.push_back(log ? std::log10(d.value) : d.value);
        }
    }
    const PlotMath::Range x = PlotMath::paddedRange(xs, 0.02);
    m_plot->xAxis->setRange(x.lower, x.upper);
    PlotMath::Range y = PlotMath::paddedRange(left);
    if (log)
        y = {std::pow(10.0, y.lower), std::pow(10.0, y.upper)};
    m_plot->yAxis->setRange(y.lower, y.upper);
    const PlotMath::Range y2 = PlotMath::paddedRange(right);
    m_plot->yAxis2->setRange(y2.lower, y2.upper);
    requestReplot(m_plot);
}

void CurvePlot::placeMarkerLabels()
{
    const QCPAxisRect* rect = m_plot->axisRect();
    layOutMarkerTexts(m_tags, *m_plot->xAxis, rect->left(), rect->right());
}

void CurvePlot::setMessage(const QString& text)
{
    m_messageText = text;
    setPlotTitle(m_plot, text);
}

bool CurvePlot::savePng(const QString& path, int width, int height)
{
    return m_plot->savePng(path, width, height);
}

bool CurvePlot::savePdf(const QString& path, int width, int height)
{
    return m_plot->savePdf(path, width, height);
}

int CurvePlot::curveCount() const
{
    return static_cast<int>(m_curves.size());
}

QString CurvePlot::curveName(int curve) const
{
    return m_curves.at(static_cast<std::size_t>(curve)).graph->name();
}

int CurvePlot::curvePointCount(int curve) const
{
    return m_curves.at(static_cast<std::size_t>(curve)).graph->dataCount();
}

CurvePlot::Axis CurvePlot::curveAxis(int curve) const
{
    return m_curves.at(static_cast<std::size_t>(curve)).axis;
}

PlotMath::Range CurvePlot::xRange() const
{
    return rangeOf(m_plot->xAxis->range());
}

PlotMath::Range CurvePlot::leftRange() const
{
    return rangeOf(m_plot->yAxis->range());
}

PlotMath::Range CurvePlot::rightRange() const
{
    return rangeOf(m_plot->yAxis2->range());
}

bool CurvePlot::rightAxisVisible() const
{
    return m_plot->yAxis2->visible();
}

void CurvePlot::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyPalette();
}

void CurvePlot::applyPalette()
{
    const QPalette& pal = palette();
    const QColor text = pal.color(QPalette::Text);
    applyPlotPalette(m_plot, pal);
    QColor legendFill = pal.color(QPalette::Base);
    legendFill.setAlphaF(0.8f);
    m_plot->legend->setBrush(legendFill);
    for (const CurveInfo& c : m_curves)
        c.graph->setPen(QPen(seriesColor(pal, c.colorIndex), c.graph->lineStyle() == QCPGraph::lsNone ? 1 : 2));
    for (int i = 0; i < m_plot->itemCount(); ++i) {
        QCPAbstractItem* item = m_plot->item(i);
        if (auto* line = qobject_cast<QCPItemStraightLine*>(item))
            line->setPen(QPen(markerColor(pal), 1, line->property("current").toBool() ? Qt::SolidLine : Qt::DashLine));
        else if (auto* label = qobject_cast<QCPItemText*>(item))
            label->setColor(text);
    }
    requestReplot(m_plot);
}
