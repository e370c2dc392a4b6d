// SPDX-License-Identifier: MIT
// Where each shard of a sharded tensor lies: one bar per shard over the split dimension.
#pragma once

#include "ui/plots/plotmath.h"

#include <QWidget>

class QCustomPlot;

class ShardMapPlot final : public QWidget {
    Q_OBJECT
public:
    explicit ShardMapPlot(QWidget* parent = nullptr);
    ~ShardMapPlot() override;

    void setShardMap(const PlotMath::ShardMap& map, const QString& title);
    void clear();

    int barCount() const { return m_barCount; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void applyPalette();

    QCustomPlot* m_plot;
    int m_barCount = 0;
};
