// SPDX-License-Identifier: MIT
#include "ui/pages/timelinepage.h"

#include "ui/copyaction.h"
#include "ui/palettecolors.h"
#include "ui/plots/plotcolors.h"
#include "ui/plots/markerlabels.h"
#include "ui/plots/plotmath.h"
#include "ui/plots/plotstyle.h"
#include "ui/plots/qcustomplotfence.h"
#include "ui/textformat.h"

#include "ckpt/findings/finding_groups.h"
#include "ckpt/frameworks/framework_registry.h"

#include <QEvent>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace {

QString baseName(const std::string& path)
{
    return QFileInfo(fromUtf8(path)).fileName();
}

QString bandText(const ckpt::ResumePoint& r)
{
    const QString at = r.from == r.to ? QString::number(r.from) : QStringLiteral("%1-%2").arg(r.from).arg(r.to);
    QString text = QObject::tr("Resume at step %1").arg(at);
    if (!r.before.empty() && !r.after.empty())
        text += QObject::tr(": %1 → %2").arg(baseName(r.before), baseName(r.after));
    text += r.firstComponent.empty() ? QObject::tr(", nothing differs between them")
                                     : QObject::tr(", %1 differs first").arg(fromUtf8(r.firstComponent));
    return text;
}

constexpr int kBandRole = Qt::UserRole + 1;

} // namespace

TimelinePage::TimelinePage(QWidget* parent)
    : QWidget(parent)
    , m_headline(new QLabel(this))
    , m_resumes(new QListWidget(this))
    , m_plot(new QCustomPlot(this))
{
    m_headline->setWordWrap(true);
    m_headline->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_resumes->setToolTip(tr("Activate a resume point to compare the checkpoints on both sides"));
    installCopyAction(m_resumes);
    connect(m_resumes, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        activateResume(item->data(kBandRole).toInt());
    });
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom | QCP::iSelectItems);
    m_plot->setMinimumHeight(320);
    connect(m_plot, &QCustomPlot::itemClick, this, [this](QCPAbstractItem* item, QMouseEvent*) {
        const QVariant band = item->property("band");
        if (band.isValid())
            activateResume(band.toInt());
    });
    connect(m_plot, &QCustomPlot::afterLayout, this, &TimelinePage::placeCheckpointLabels);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_headline);
    layout->addWidget(m_resumes);
    layout->addWidget(m_plot, 1);
}

void TimelinePage::setRun(const RunDataPtr& run, int current)
{
    const bool same = run == m_run && run && run->timeline == m_shown && current == m_current;
    m_run = run;
    m_given = nullptr;
    m_current = current;
    if (!same)
        rebuild();
}

void TimelinePage::showTimeline(std::shared_ptr<const ckpt::Timeline> timeline)
{
    m_run = nullptr;
    m_current = -1;
    m_given = std::move(timeline);
    rebuild();
}

void TimelinePage::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && (m_run || m_given))
        rebuild();
}

void TimelinePage::activateResume(int index)
{
    if (!m_shown || index < 0 || index >= static_cast<int>(m_shown->resumes.size()))
        return;
    const ckpt::ResumePoint& r = m_shown->resumes[static_cast<std::size_t>(index)];
    if (r.before.empty() || r.after.empty())
        return;
    emit compareRequested(fromUtf8(r.before), fromUtf8(r.after), fromUtf8(r.firstComponent));
}

QString TimelinePage::headline() const
{
    return m_headline->text();
}

void TimelinePage::placeCheckpointLabels()
{
    if (m_top)
        layOutMarkerTexts(m_tags, *m_top->axis(QCPAxis::atBottom), m_top->left(), m_top->right());
}

void TimelinePage::rebuild()
{
    m_plot->clearItems();
    m_tags.clear();
    m_top = nullptr;
    m_plot->clearPlottables();
    m_plot->plotLayout()->clear();
    m_resumes->clear();
    m_stripNames.clear();
    m_shown = m_run ? m_run->timeline : m_given;
    applyPlotPalette(m_plot, palette());
    if (!m_given && (!m_run || m_run->singleCheckpoint || m_run->looseFiles)) {
        m_headline->setText(tr("The timeline shows a run of checkpoints; this is a single checkpoint."));
        m_resumes->hide();
        m_plot->replot();
        return;
    }
    if (!m_shown) {
        m_headline->setText(tr("Checking the run: the timeline appears when its checkpoints and pairs have been checked."));
        m_resumes->hide();
        m_plot->replot();
        return;
    }
    const ckpt::Timeline& t = *m_shown;
    const QPalette pal = palette();
    const QColor text = pal.color(QPalette::WindowText);
    const QColor bandColor = [&] {
        QColor c = warningColor(pal);
        c.setAlpha(55);
        return c;
    }();

    // headline (the run's verdict, as ckpt check and the report open with it) and the resume points
    QString verdict;
    if (m_run) {
        // A pair's finding is listed under both of its checkpoints: counted once, as ckpt check does.
        std::vector<ckpt::Finding> findings = m_run->runFindings;
        std::vector<std::string> order;
        for (const auto& c : m_run->checkpoints) {
            findings.insert(findings.end(), c.findings.begin(), c.findings.end());
            order.push_back(c.info.path);
        }
        verdict = verdictText(ckpt::withoutRepeats(findings), m_run->checkpoints.size(), order) + QLatin1Char('\n');
    }
    if (t.resumes.empty()) {
        m_headline->setText(verdict + tr("No resume point: the logs, the probes and each pair of consecutive checkpoints agree (%n checkpoint(s)).",
                                         nullptr, static_cast<int>(t.checkpoints.size())));
        m_resumes->hide();
    } else {
        m_headline->setText(verdict + tr("%n resume point(s). Click a band (or activate a row) to compare the checkpoints on both sides.",
                                         nullptr, static_cast<int>(t.resumes.size())));
        for (std::size_t i = 0; i < t.resumes.size(); ++i) {
            const auto& r = t.resumes[i];
            QString tip;
            for (const auto& e : r.evidence)
                tip += (tip.isEmpty() ? QString() : QStringLiteral("\n")) + fromUtf8(e);
            auto* item = new QListWidgetItem(bandText(r), m_resumes);
            item->setData(kBandRole, static_cast<int>(i));
            item->setToolTip(tip);
            if (!r.firstComponent.empty())
                item->setIcon(severityIcon(2));
        }
        const int rows = std::min(4, m_resumes->count());
        m_resumes->setFixedHeight(rows * m_resumes->sizeHintForRow(0) + 2 * m_resumes->frameWidth() + 2);
        m_resumes->show();
    }

    const double x0 = static_cast<double>(t.firstStep.value_or(0)), x1 = static_cast<double>(t.lastStep.value_or(1));
    const double span = std::max(1.0, x1 - x0);
    const double minBand = span * 0.006; // a resume at one step stays visible on a long run

    // rows: the logged loss (by the frameworks' names for it) on top, then one per strip
    std::vector<QCPAxisRect*> rects;
    auto addRect = [&](const QString& label, int stretch) {
        auto* rect = new QCPAxisRect(m_plot);
        rect->setupFullAxesBox(false);
        rect->axis(QCPAxis::atTop)->setVisible(false);
        rect->axis(QCPAxis::atRight)->setVisible(false);
        rect->axis(QCPAxis::atLeft)->ticker()->setTickCount(2);
        rect->setRangeDrag(Qt::Horizontal);
        rect->setRangeZoom(Qt::Horizontal);
        rect->setMinimumMargins(QMargins(0, 2, 0, 2));
        m_plot->plotLayout()->addElement(static_cast<int>(rects.size()), 0, rect);
        m_plot->plotLayout()->setRowStretchFactor(static_cast<int>(rects.size()), stretch);
        // the row's name inside it, top left: a rotated axis label does not fit a strip's height
        auto* name = new QCPItemText(m_plot);
        name->setClipAxisRect(rect);
        name->position->setAxisRect(rect);
        name->position->setType(QCPItemPosition::ptAxisRectRatio);
        name->position->setCoords(0.004, 0.04);
        name->setPositionAlignment(Qt::AlignTop | Qt::AlignLeft);
        name->setText(label);
        name->setColor(text);
        name->setBrush(pal.brush(QPalette::Base));
        name->setPadding(QMargins(2, 0, 2, 0));
        name->setSelectable(false);
        name->setLayer(QStringLiteral("overlay"));
        rects.push_back(rect);
        return rect;
    };
    auto addCurve = [&](QCPAxisRect* rect, const ckpt::StepSeries& s, const QColor& color, bool points) {
        QVector<double> xs, ys;
        for (const auto& [step, v] : s) {
            if (std::isfinite(v)) {
                xs.push_back(static_cast<double>(step));
                ys.push_back(v);
            }
        }
        auto* g = m_plot->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        g->setData(xs, ys, true);
        g->setPen(QPen(color, points ? 1.5 : 1.2));
        if (points)
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, color, 6));
        g->setSelectable(QCP::stNone);
        rect->axis(QCPAxis::atLeft)->rescale();
        QCPRange r = rect->axis(QCPAxis::atLeft)->range();
        if (r.size() <= 0)
            r = QCPRange(r.lower - 1, r.upper + 1);
        rect->axis(QCPAxis::atLeft)->setRange(r.lower - r.size() * 0.08, r.upper + r.size() * 0.08);
        return g;
    };
    auto addBands = [&](QCPAxisRect* rect, bool clickable) {
        for (std::size_t i = 0; i < t.resumes.size(); ++i) {
            const auto& r = t.resumes[i];
            auto* band = new QCPItemRect(m_plot);
            band->setClipAxisRect(rect);
            for (QCPItemPosition* p : {band->topLeft, band->bottomRight}) {
                p->setAxisRect(rect);
                p->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
                p->setTypeX(QCPItemPosition::ptPlotCoords);
                p->setTypeY(QCPItemPosition::ptAxisRectRatio);
            }
            const double mid = (r.from + r.to) / 2.0, half = std::max(minBand, (r.to - r.from) / 2.0 + 0.5);
            band->topLeft->setCoords(mid - half, 0);
            band->bottomRight->setCoords(mid + half, 1);
            band->setPen(Qt::NoPen);
            band->setBrush(bandColor);
            band->setSelectable(clickable);
            band->setSelectedBrush(bandColor.darker(120));
            band->setProperty("band", static_cast<int>(i));
        }
    };
    auto vline = [&](QCPAxisRect* rect, double x, const QPen& pen) {
        auto* line = new QCPItemStraightLine(m_plot);
        line->setClipAxisRect(rect);
        line->point1->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        line->point2->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        line->point1->setAxisRect(rect);
        line->point2->setAxisRect(rect);
        line->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
        line->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
        line->point1->setCoords(x, 0);
        line->point2->setCoords(x, 1);
        line->setPen(pen);
        line->setSelectable(false);
        return line;
    };

    // the top row: the loss, by the frameworks' names for it (never a column that happens to sort
    // first), with the checkpoints and the resume bands; without a loss, the checkpoints alone
    const std::string lossName = PlotMath::pickSeries(t.logged, ckpt::lossMetricNames(), "loss", {"eval", "val", "test", "scale"});
    const auto loss = lossName.empty() ? t.logged.end() : t.logged.find(lossName);
    QCPAxisRect* top = addRect(loss != t.logged.end() ? fromUtf8(loss->first) : tr("checkpoints"), 3);
    m_top = top;
    addBands(top, true);
    if (loss != t.logged.end())
        addCurve(top, loss->second, seriesColor(pal, 0), false);
    for (std::size_t i = 0; i < t.checkpoints.size(); ++i) {
        const auto& c = t.checkpoints[i];
        if (!c.step)
            continue;
        const QColor color = c.worst ? severityColor(static_cast<int>(*c.worst), pal) : markerColor(pal);
        const bool current = m_run && m_current >= 0 && static_cast<std::size_t>(m_current) < m_run->checkpoints.size()
                          && m_run->checkpoints[static_cast<std::size_t>(m_current)].info.path == c.path;
        vline(top, static_cast<double>(*c.step), QPen(color, current ? 2.5 : 1.4, current ? Qt::SolidLine : Qt::DashLine));
        const QString brief = QString::number(*c.step);
        QString label = brief;
        if (c.latest)
            label += tr(" latest");
        if (c.best)
            label += tr(" best");
        auto* tag = new QCPItemText(m_plot);
        m_tags.push_back({tag, label, brief, static_cast<double>(*c.step), current || c.latest || c.best});
        tag->setClipAxisRect(top);
        tag->position->setAxisRect(top);
        tag->position->setAxes(top->axis(QCPAxis::atBottom), top->axis(QCPAxis::atLeft));
        tag->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        tag->position->setCoords(static_cast<double>(*c.step), 0.14);
        tag->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter); // placeCheckpointLabels keeps them apart
        tag->setPadding(QMargins(3, 0, 3, 0));
        tag->setText(label);
        tag->setColor(color);
        tag->setSelectable(false);
    }

    // the strips, aligned under it
    int colour = 1;
    for (const auto& s : t.strips) {
        QCPAxisRect* rect = addRect(fromUtf8(s.name), 1);
        m_stripNames << fromUtf8(s.name);
        addBands(rect, false);
        if (!s.reference.empty())
            addCurve(rect, s.reference, seriesColor(pal, colour).lighter(130), false)->setName(fromUtf8(s.referenceName));
        if (!s.reconstructed.empty()) {
            QCPGraph* g = addCurve(rect, s.reconstructed, text, false);
            g->setPen(QPen(text, 1, Qt::DashLine));
            g->setName(tr("reconstructed from the latest checkpoint's scheduler"));
        }
        addCurve(rect, s.points, seriesColor(pal, colour), true)->setName(fromUtf8(s.name));
        for (int64_t b : s.breaks)
            vline(rect, static_cast<double>(b), QPen(warningColor(pal), 2, Qt::DashLine));
        ++colour;
    }

    // one x axis for all rows: only the bottom one labelled; dragging or zooming one moves all
    for (std::size_t i = 0; i < rects.size(); ++i) {
        QCPAxis* x = rects[i]->axis(QCPAxis::atBottom);
        x->setRange(x0 - span * 0.02, x1 + span * 0.02);
        x->setTickLabels(i + 1 == rects.size());
        if (i + 1 == rects.size())
            x->setLabel(tr("step"));
        for (std::size_t j = 0; j < rects.size(); ++j) {
            if (i != j)
                connect(x, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), rects[j]->axis(QCPAxis::atBottom),
                        qOverload<const QCPRange&>(&QCPAxis::setRange));
        }
        rects[i]->axis(QCPAxis::atLeft)->setLabelColor(text);
    }
    // align the left edges of every row
    auto* group = new QCPMarginGroup(m_plot);
    for (auto* r : rects)
        r->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    applyPlotPalette(m_plot, pal);
    requestReplot(m_plot);
}

bool TimelinePage::savePng(const QString& path, int width, int height)
{
    return m_plot->savePng(path, width, height);
}
