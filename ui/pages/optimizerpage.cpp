// SPDX-License-Identifier: MIT
#include "ui/backgroundpriority.h"
#include "ui/pages/optimizerpage.h"

#include "ckpt/io/errors.h"
#include "ckpt/state/run_history.h"
#include "ckpt/state/training_state.h"
#include "ckpt/stats/checkpoint_stats.h"
#include "ui/pages/copytableview.h"
#include "ui/pages/momentstatemodel.h"
#include "ui/pages/paramgroupsmodel.h"
#include "ui/plots/curveplot.h"
#include "ui/textformat.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPromise>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QVBoxLayout>
#include <QtConcurrent>

OptimizerPage::OptimizerPage(QWidget* parent)
    : QWidget(parent)
    , m_header(new QLabel(this))
    , m_groups(new ParamGroupsModel(this))
    , m_moments(new MomentStateModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_groupsView(new CopyTableView(this))
    , m_momentsView(new CopyTableView(this))
    , m_filter(new QLineEdit(this))
    , m_plot(new CurvePlot(this))
    , m_plotNote(new QLabel(this))
{
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_groupsView->setModel(m_groups);
    m_groupsView->setMaximumHeight(m_groupsView->verticalHeader()->defaultSectionSize() * 5);

    m_proxy->setSourceModel(m_moments);
    m_proxy->setSortRole(MomentStateModel::SortRole);
    m_proxy->setFilterKeyColumn(MomentStateModel::Parameter);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_filter->setPlaceholderText(tr("Filter by parameter name…"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    m_momentsView->setModel(m_proxy);
    m_momentsView->setSortingEnabled(true);
    m_momentsView->sortByColumn(-1, Qt::AscendingOrder);
    m_momentsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_momentsView->horizontalHeader()->setStretchLastSection(true);
    connect(m_momentsView->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &OptimizerPage::drawNorms);

    m_plot->setAxisLabels(tr("training step"), tr("L2 norm"));
    m_plot->setLeftLogarithmic(true); // second moments are orders of magnitude below the first
    m_plot->setToolTip(tr("Norms of the optimizer's moments at each checkpoint of the run: all parameters "
                          "together, and the selected parameter. Drag to pan, wheel to zoom, double-click to fit"));
    m_plotNote->setWordWrap(true);

    auto* tables = new QWidget(this);
    auto* tablesLayout = new QVBoxLayout(tables);
    tablesLayout->setContentsMargins(0, 0, 0, 0);
    tablesLayout->addWidget(m_groupsView);
    tablesLayout->addWidget(m_filter);
    tablesLayout->addWidget(m_momentsView, 1);
    auto* plotBox = new QWidget(this);
    auto* plotLayout = new QVBoxLayout(plotBox);
    plotLayout->setContentsMargins(0, 0, 0, 0);
    plotLayout->addWidget(m_plotNote);
    plotLayout->addWidget(m_plot, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(tables);
    split->addWidget(plotBox);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({1, 1}); // half and half, whatever the first size the page gets
    m_plot->setMinimumWidth(360);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_header);
    layout->addWidget(split, 1);

    connect(&m_stats, &QFutureWatcher<TensorStatsView>::resultReadyAt, this, [this](int row) {
        if (m_computingStats)
            m_moments->setStats(row, m_stats.future().resultAt(row));
    });
    connect(&m_stats, &QFutureWatcher<TensorStatsView>::progressValueChanged, this, [this](int done) {
        if (m_computingStats)
            emit jobProgress(statsJobId(), done, m_stats.progressMaximum(), tr("Computing moment statistics…"));
    });
    connect(&m_historyJob, &QFutureWatcher<MomentHistory>::progressValueChanged, this, [this](int done) {
        if (!m_readingHistory)
            return;
        emit jobProgress(historyJobId(), done, m_historyJob.progressMaximum(), tr("Reading the moments across the run…"));
        m_plotNote->setText(tr("Reading the moments of the run's checkpoints: %1 of %2…").arg(done).arg(m_historyJob.progressMaximum()));
    });
    connect(&m_stats, &QFutureWatcher<TensorStatsView>::finished, this, [this] {
        if (!m_computingStats)
            return;
        m_computingStats = false;
        emit jobFinished(statsJobId());
        m_momentsView->resizeColumnsToContents();
        emit statsFinished();
    });
    connect(&m_historyJob, &QFutureWatcher<MomentHistory>::finished, this, [this] {
        if (!m_readingHistory)
            return;
        m_readingHistory = false;
        emit jobFinished(historyJobId());
        const bool cancelled = m_historyJob.future().isCanceled();
        if (!cancelled && m_historyJob.future().resultCount() > 0)
            m_history = m_historyJob.future().result();
        drawNorms();
        if (cancelled)
            m_plotNote->setText(tr("Reading the moments across the run was cancelled; select the checkpoint again to read them."));
        emit historyFinished();
    });
    setCheckpoint(nullptr);
}

OptimizerPage::~OptimizerPage()
{
    cancel(); // the jobs own what they read: they may end after the page
}

void OptimizerPage::cancel()
{
    m_stats.cancel();
    m_historyJob.cancel();
}

QString OptimizerPage::statsJobId()
{
    return QStringLiteral("optimizer-stats");
}

QString OptimizerPage::historyJobId()
{
    return QStringLiteral("optimizer-history");
}

void OptimizerPage::setCheckpoint(std::shared_ptr<const ckpt::TrainingState> state,
                                  std::shared_ptr<const ckpt::RunHistory> run)
{
    cancel();
    if (m_computingStats)
        emit jobFinished(statsJobId());
    if (m_readingHistory)
        emit jobFinished(historyJobId());
    m_computingStats = false;
    m_readingHistory = false;
    m_stats.setFuture(QFuture<TensorStatsView>());
    m_historyJob.setFuture(QFuture<MomentHistory>());
    m_state = std::move(state);
    m_history = {};
    const ckpt::OptimizerPart* optimizer = m_state && m_state->optimizer ? &*m_state->optimizer : nullptr;
    m_groups->setOptimizer(optimizer);
    m_moments->setRows(optimizer ? momentRows(*optimizer) : std::vector<MomentRow>());
    m_groupsView->resizeColumnsToContents();
    m_momentsView->resizeColumnsToContents();
    if (!m_state)
        m_header->setText(tr("No checkpoint selected."));
    else if (!optimizer)
        m_header->setText(tr("This checkpoint has no optimizer state: a resume from it starts the optimizer afresh."));
    else
        m_header->setText(tr("%1 · %2 param group(s) · %3 parameter(s) with state · names %4 · %5")
                              .arg(fromUtf8(optimizer->type))
                              .arg(optimizer->groups.size())
                              .arg(optimizer->paramState.size())
                              .arg(fromUtf8(optimizer->nameMapping), QFileInfo(fromUtf8(optimizer->from.file)).fileName()));
    drawNorms();
    if (optimizer)
        startStats();
    if (optimizer && run)
        startHistory(std::move(run));
}

QString OptimizerPage::headerText() const
{
    return m_header->text();
}

void OptimizerPage::startStats()
{
    std::vector<ckpt::Provenance> sources;
    for (const MomentRow& row : m_moments->rows())
        sources.push_back(row.from);
    m_computingStats = true;
    emit jobProgress(statsJobId(), 0, static_cast<int>(sources.size()), tr("Computing moment statistics…"));
    m_stats.setFuture(QtConcurrent::run([sources = std::move(sources)](QPromise<TensorStatsView>& promise) {
        lowerThreadPriority();
        ckpt::TensorSource source;
        ckpt::StatsOptions options;
        options.progress = [&promise](const ckpt::StatsProgress&) { return !promise.isCanceled(); };
        promise.setProgressRange(0, static_cast<int>(sources.size()));
        for (std::size_t i = 0; i < sources.size(); ++i) {
            if (promise.isCanceled())
                return;
            promise.setProgressValue(static_cast<int>(i));
            if (sources[i].file.empty())
                continue; // a parameter with a step and no moment
            try {
                promise.addResult(toStatsView(source.stats(sources[i], options)), static_cast<int>(i));
            } catch (const ckpt::CancelledError&) {
                return;
            } catch (const std::exception& e) {
                TensorStatsView failed;
                failed.problem = QString::fromUtf8(e.what());
                promise.addResult(std::move(failed), static_cast<int>(i));
            }
        }
    }));
}

void OptimizerPage::startHistory(std::shared_ptr<const ckpt::RunHistory> run)
{
    m_readingHistory = true;
    const int total = static_cast<int>(run->checkpoints.size());
    m_plotNote->setText(tr("Reading the moments of the run's %1 checkpoints…").arg(total));
    emit jobProgress(historyJobId(), 0, total, tr("Reading the moments across the run…"));
    m_historyJob.setFuture(QtConcurrent::run([run](QPromise<MomentHistory>& promise) {
        lowerThreadPriority();
        MomentHistory history = momentHistory(*run, [&promise](int done, int total) {
            promise.setProgressRange(0, total);
            promise.setProgressValue(done);
            return !promise.isCanceled();
        });
        if (!promise.isCanceled())
            promise.addResult(std::move(history));
    }));
}

void OptimizerPage::drawNorms()
{
    m_plot->clear();
    if (m_readingHistory)
        return;
    if (m_history.steps.empty()) {
        m_plotNote->setText(m_state && m_state->optimizer ? tr("Open the checkpoint within its run to plot the moments "
                                                               "across the run's checkpoints.")
                                                          : QString());
        return;
    }
    int color = 0;
    for (const auto& [moment, values] : m_history.totalNorm)
        m_plot->addCurve(tr("%1, all parameters").arg(moment), m_history.total(moment), CurvePlot::Axis::Left, color++);
    const MomentRow* selected = m_moments->rowAt(m_proxy->mapToSource(m_momentsView->currentIndex()).row());
    if (selected) {
        const auto it = m_history.byParameter.find(selected->parameter);
        if (it != m_history.byParameter.end()) {
            for (const auto& [moment, values] : it->second)
                m_plot->addCurve(tr("%1, %2").arg(moment, selected->parameter), m_history.of(selected->parameter, moment),
                                 CurvePlot::Axis::Left, color++);
        }
    }
    QStringList labels;
    int current = -1;
    for (const double step : m_history.steps) {
        if (m_state && m_state->globalStep && step == static_cast<double>(*m_state->globalStep))
            current = static_cast<int>(labels.size());
        labels.append(tr("step %1").arg(step));
    }
    m_plot->setMarkers(m_history.steps, labels, current);
    m_plot->fit();
    m_plotNote->setText(m_history.errors.isEmpty() ? tr("Moment norms over %1 checkpoints").arg(m_history.steps.size())
                                                   : m_history.errors.join(QLatin1Char('\n')));
}
