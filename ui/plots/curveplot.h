// SPDX-License-Identifier: MIT
// Line plot over training steps: curves on a left and an optional right axis, checkpoints as
// vertical lines, drag to pan, wheel to zoom, double-click to fit, export to PNG/PDF.
#pragma once

#include "ui/plots/markerlabels.h"
#include "ui/plots/plotmath.h"

#include <QStringList>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPGraph;

class CurvePlot final : public QWidget {
    Q_OBJECT
public:
    enum class Axis { Left, Right };
    enum class Style { Line, Steps, Points };

    explicit CurvePlot(QWidget* parent = nullptr);
    ~CurvePlot() override;

    void clear();
    void setAxisLabels(const QString& x, const QString& left, const QString& right = {});
    void setLeftLogarithmic(bool log);
    /// The legend, under the axes (widget coordinates after the last replot).
    QRect legendRect() const;
    /// Each legend entry (widget coordinates after the last replot): they wrap into rows so that
    /// every name is shown whole when the plot is narrow.
    QList<QRect> legendEntryRects() const;
    /// The area inside the axes, where curves, checkpoint lines and their labels are drawn.
    QRect plotAreaRect() const;
    /// Adds a curve (x ascending); colour `colorIndex` of seriesColor(). Returns its index.
    int addCurve(const QString& name, const PlotMath::Curve& curve, Axis axis, int colorIndex, Style style = Style::Line);
    /// Vertical lines at `steps`, labelled; the one at `current` (if any) drawn solid.
    void setMarkers(const std::vector<double>& steps, const QStringList& labels, int current = -1);
    /// Fits every axis to its curves and markers (what a double-click does).
    void fit();
    void setMessage(const QString& text); // shown in the plot's title row; empty hides it

    bool savePng(const QString& path, int width = 0, int height = 0);
    bool savePdf(const QString& path, int width = 0, int height = 0);

    int curveCount() const;
    QString curveName(int curve) const;
    int curvePointCount(int curve) const;
    Axis curveAxis(int curve) const;
    int markerCount() const { return static_cast<int>(m_markers.size()); }
    PlotMath::Range xRange() const;
    PlotMath::Range leftRange() const;
    PlotMath::Range rightRange() const;
    bool rightAxisVisible() const;
    QString message() const { return m_messageText; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void applyPalette();
    void placeMarkerLabels();
    void wrapLegend();

    struct CurveInfo {
        QCPGraph* graph;
        int colorIndex;
        Axis axis;
    };
    QCustomPlot* m_plot;
    std::vector<CurveInfo> m_curves;
    std::vector<double> m_markers;
    std::vector<MarkerText> m_tags; // the checkpoints' names, laid out after every layout
    QString m_messageText;
};
