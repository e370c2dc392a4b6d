// SPDX-License-Identifier: MIT
#include "ui/pages/schedulepage.h"

#include "ckpt/state/run_history.h"
#include "ckpt/state/training_state.h"
#include "ui/pages/schedulecurves.h"
#include "ui/plots/curveplot.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

SchedulePage::SchedulePage(QWidget* parent)
    : QWidget(parent)
    , m_plot(new CurvePlot(this))
    , m_info(new QLabel(this))
    , m_log(new QCheckBox(tr("Logarithmic LR axis"), this))
    , m_fit(new QPushButton(tr("Fit"), this))
    , m_export(new QPushButton(tr("Export…"), this))
{
    m_info->setWordWrap(true);
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_fit->setToolTip(tr("Show every curve and checkpoint (also: double-click the plot)"));
    m_export->setToolTip(tr("Save the plot as PNG or PDF"));
    m_plot->setToolTip(tr("Drag to pan, wheel to zoom, double-click to fit"));
    m_plot->setAxisLabels(tr("training step"), tr("learning rate"), tr("loss"));
    connect(m_log, &QCheckBox::toggled, this, [this](bool on) {
        m_plot->setLeftLogarithmic(on);
        m_plot->fit();
    });
    connect(m_fit, &QPushButton::clicked, m_plot, &CurvePlot::fit);
    connect(m_export, &QPushButton::clicked, this, &SchedulePage::exportWithDialog);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_info, 1);
    bar->addWidget(m_log);
    bar->addWidget(m_fit);
    bar->addWidget(m_export);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_plot, 1);
    setCheckpoint(nullptr);
}

void SchedulePage::setCheckpoint(std::shared_ptr<const ckpt::TrainingState> state,
                                 std::shared_ptr<const ckpt::RunHistory> run)
{
    m_plot->clear();
    m_export->setEnabled(state != nullptr);
    if (!state) {
        m_info->setText(tr("No checkpoint selected."));
        return;
    }
    const ScheduleCurves curves = buildScheduleCurves(*state, run.get());
    // Colours stay tied to the meaning: rebuilt LR 0.., logged LR and loss after them.
    const int loggedColor = static_cast<int>(curves.lrGroups.size());
    if (!curves.loggedLr.curve.x.empty())
        m_plot->addCurve(curves.loggedLr.name, curves.loggedLr.curve, CurvePlot::Axis::Left, loggedColor,
                         CurvePlot::Style::Points);
    int color = 0;
    for (const ScheduleCurves::Named& lr : curves.lrGroups)
        m_plot->addCurve(lr.name, lr.curve, CurvePlot::Axis::Left, color++,
                         lr.curve.x.size() == 1 ? CurvePlot::Style::Points
                         : curves.lrStepwise    ? CurvePlot::Style::Steps
                                                : CurvePlot::Style::Line);
    if (!curves.loss.curve.x.empty())
        m_plot->addCurve(curves.loss.name, curves.loss.curve, CurvePlot::Axis::Right, loggedColor + 1,
                         CurvePlot::Style::Line);
    m_plot->setMarkers(curves.markers, curves.markerLabels, curves.currentMarker);
    m_plot->fit();

    QStringList lines;
    if (!curves.schedulerText.isEmpty())
        lines.append(curves.schedulerText);
    lines.append(curves.notes);
    m_info->setText(lines.join(QLatin1Char('\n')));
}

QString SchedulePage::infoText() const
{
    return m_info->text();
}

bool SchedulePage::exportPlot(const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    bool ok = false;
    if (suffix == QLatin1String("png"))
        ok = m_plot->savePng(path, 1600, 900);
    else if (suffix == QLatin1String("pdf"))
        ok = m_plot->savePdf(path, 1600, 900);
    else {
        m_error = tr("%1: choose a .png or .pdf file name").arg(path);
        return false;
    }
    m_error = ok ? QString() : tr("%1: could not be written (check the folder exists and is writable)").arg(path);
    return ok;
}

void SchedulePage::exportWithDialog()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Export schedule plot"), QStringLiteral("schedule.png"),
                                                      tr("PNG image (*.png);;PDF document (*.pdf)"));
    if (!path.isEmpty() && !exportPlot(path))
        m_info->setText(m_info->text() + QLatin1Char('\n') + m_error);
}
