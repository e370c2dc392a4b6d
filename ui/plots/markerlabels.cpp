// SPDX-License-Identifier: MIT
#include "ui/plots/markerlabels.h"

#include "ui/plots/plotmath.h"
#include "ui/plots/qcustomplotfence.h"

#include <QFontMetricsF>

void layOutMarkerTexts(const std::vector<MarkerText>& texts, const QCPAxis& x, double left, double right)
{
    if (texts.empty())
        return;
    std::vector<PlotMath::MarkerLabel> labels;
    labels.reserve(texts.size());
    for (const MarkerText& t : texts) {
        const QFontMetricsF metrics(t.item->font());
        const double padding = t.item->padding().left() + t.item->padding().right();
        labels.push_back({x.coordToPixel(t.step), metrics.horizontalAdvance(t.full) + padding, metrics.horizontalAdvance(t.brief) + padding,
                          t.important});
    }
    const auto placed = PlotMath::layoutMarkerLabels(labels, left, right);
    for (std::size_t i = 0; i < texts.size(); ++i) {
        QCPItemText* item = texts[i].item;
        item->setVisible(placed[i].form != PlotMath::LabelForm::Hidden);
        item->setText(placed[i].form == PlotMath::LabelForm::Short ? texts[i].brief : texts[i].full);
        const Qt::Alignment h = placed[i].align == PlotMath::LabelAlign::Left    ? Qt::AlignLeft
                              : placed[i].align == PlotMath::LabelAlign::Right ? Qt::AlignRight
                                                                               : Qt::AlignHCenter;
        item->setPositionAlignment((item->positionAlignment() & Qt::AlignVertical_Mask) | h);
    }
}
