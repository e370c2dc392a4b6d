// SPDX-License-Identifier: MIT
#include "ui/plots/plottitle.h"

#include "ui/plots/plotstyle.h"
#include "ui/plots/qcustomplotfence.h"

#include <QEvent>
#include <QFontMetrics>
#include <QStringList>

#include <algorithm>

namespace {

// Holds a plot's whole title and elides it into the title element on every resize.
class ElidedTitle final : public QObject {
public:
    explicit ElidedTitle(QCustomPlot* plot)
        : QObject(plot)
        , m_plot(plot)
    {
        setObjectName(name());
        plot->installEventFilter(this);
    }
    static QString name() { return QStringLiteral("ckptElidedTitle"); }

    void set(const QString& title)
    {
        m_title = title;
        m_plot->setToolTip(title);
        show();
    }

protected:
    bool eventFilter(QObject*, QEvent* event) override
    {
        if (event->type() == QEvent::Resize)
            show();
        return false;
    }

private:
    void show()
    {
        auto* element = qobject_cast<QCPTextElement*>(m_plot->plotLayout()->element(0, 0));
        if (!element)
            return;
        const QFontMetrics metrics(element->font());
        const int width = std::max(40, m_plot->width() - 16);
        QStringList lines = m_title.split(QLatin1Char('\n'));
        for (QString& line : lines)
            line = metrics.elidedText(line, Qt::ElideMiddle, width);
        element->setText(lines.join(QLatin1Char('\n')));
        requestReplot(m_plot);
    }

    QCustomPlot* m_plot;
    QString m_title;
};

} // namespace

void setPlotTitle(QCustomPlot* plot, const QString& title)
{
    auto* holder = static_cast<ElidedTitle*>(plot->findChild<QObject*>(ElidedTitle::name(), Qt::FindDirectChildrenOnly));
    if (!holder)
        holder = new ElidedTitle(plot);
    holder->set(title);
}
