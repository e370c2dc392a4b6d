// SPDX-License-Identifier: MIT
// A tensor's value histogram as bars (QCustomPlot), or a line saying why there is none.
#pragma once

#include "ui/plots/plotmath.h"

#include <QWidget>

class QCustomPlot;
class QCPBars;

class HistogramPlot final : public QWidget {
    Q_OBJECT
public:
    explicit HistogramPlot(QWidget* parent = nullptr);
    ~HistogramPlot() override;

    /// `xLabel`: what the bins are of ("value", "log10 |x|"). The title may have several
    /// lines (see setPlotTitle).
    void setHistogram(const PlotMath::Bars& bars, const QString& title, const QString& xLabel);
    /// No histogram: the plot shows `message` instead.
    void clear(const QString& message);

    int barCount() const;
    QString title() const { return m_title; }
    QString xLabel() const;
    PlotMath::Range xRange() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    void applyPalette();
    void setTitle(const QString& title);

    QCustomPlot* m_plot;
    QCPBars* m_bars;
    QString m_title;
};
