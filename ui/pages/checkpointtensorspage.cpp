// SPDX-License-Identifier: MIT
#include "ui/backgroundpriority.h"
#include "ui/pages/checkpointtensorspage.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/io/errors.h"
#include "ckpt/state/training_state.h"
#include "ckpt/stats/tensor_stats.h"
#include "ui/pages/copytableview.h"
#include "ui/pages/tensorlistmodel.h"
#include "ui/pages/tensornamefilter.h"
#include "ui/plots/histogramplot.h"
#include "ui/plots/shardmapplot.h"
#include "ui/quietprogressbar.h"
#include "ui/textformat.h"

#include <QCheckBox>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPromise>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QThreadPool>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent>

namespace {

// Histograms of large 32/64-bit tensors come from the one-pass value sketch: say how many
// elements may sit one bin off (core/stats/value_sketch.h).
QString uncertainNote(uint64_t uncertain)
{
    if (uncertain == 0)
        return {};
    return QCoreApplication::translate("CheckpointTensorsPage", "\n%L1 elements near bin edges may be one bin off")
        .arg(static_cast<qulonglong>(uncertain));
}

} // namespace

CheckpointTensorsPage::CheckpointTensorsPage(QWidget* parent)
    : QWidget(parent)
    , m_model(new TensorListModel(this))
    , m_proxy(new TensorNameFilter(m_model, this))
    , m_filter(new QLineEdit(this))
    , m_summary(new QLabel(this))
    , m_errorLabel(new QLabel(this))
    , m_progress(new QuietProgressBar(this))
    , m_cancel(new QToolButton(this))
    , m_view(new CopyTableView(this))
    , m_histogram(new HistogramPlot(this))
    , m_shardMap(new ShardMapPlot(this))
    , m_logHist(new QCheckBox(tr("log10 |x|"), this))
{
    m_proxy->setSortRole(TensorListModel::SortRole);

    m_filter->setPlaceholderText(tr("Filter by name…"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_proxy->setNameFilter(text);
        updateSummary();
    });
    m_cancel->setText(tr("Cancel"));
    m_cancel->setToolTip(tr("Stop reading the checkpoint's files and computing statistics"));
    connect(m_cancel, &QToolButton::clicked, this, &CheckpointTensorsPage::cancel);
    m_progress->setMaximumWidth(200);
    m_progress->setVisible(false);
    m_cancel->setVisible(false);
    m_errorLabel->setWordWrap(true);
    m_errorLabel->setVisible(false);
    m_errorLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(-1, Qt::AscendingOrder); // file order until the user sorts
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->horizontalHeader()->setStretchLastSection(true);
    // The file or the ranks a row comes from next to its name: at the model's place, after the
    // shape and sizes, long DeepSpeed names pushed it out of sight.
    m_view->horizontalHeader()->moveSection(TensorListModel::File, TensorListModel::Name + 1);
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &CheckpointTensorsPage::showSelected);

    auto* top = new QHBoxLayout;
    top->addWidget(m_filter, 1);
    top->addWidget(m_summary);
    top->addWidget(m_progress);
    top->addWidget(m_cancel);

    m_logHist->setToolTip(tr("Histogram of log10 |x| over the non-zero elements: the spread of moments such as "
                             "exp_avg_sq over many orders of magnitude"));
    connect(m_logHist, &QCheckBox::toggled, this, &CheckpointTensorsPage::showSelected);
    auto* histogramBox = new QWidget(this);
    auto* histogramLayout = new QVBoxLayout(histogramBox);
    histogramLayout->setContentsMargins(0, 0, 0, 0);
    histogramLayout->addWidget(m_logHist, 0, Qt::AlignRight);
    histogramLayout->addWidget(m_histogram, 1);
    auto* plots = new QSplitter(Qt::Vertical, this);
    plots->addWidget(histogramBox);
    plots->addWidget(m_shardMap);
    m_shardMap->setVisible(false);
    m_histogram->setMinimumWidth(260);

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_view);
    split->addWidget(plots);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_errorLabel);
    layout->addWidget(split, 1);

    connect(&m_collect, &QFutureWatcher<CollectedTensors>::progressValueChanged, m_progress, &QuietProgressBar::setValueQuietly);
    connect(&m_collect, &QFutureWatcher<CollectedTensors>::progressRangeChanged, m_progress, &QuietProgressBar::setRangeQuietly);
    connect(&m_collect, &QFutureWatcher<CollectedTensors>::finished, this, &CheckpointTensorsPage::onTensorsCollected);
    connect(&m_stats, &QFutureWatcher<StatsBatch>::resultReadyAt, this, [this](int index) {
        if (!m_computingStats)
            return;
        StatsBatch batch = m_stats.future().resultAt(index);
        const int begin = batch.first, end = batch.first + static_cast<int>(batch.views.size());
        m_model->setStats(begin, std::move(batch.views));
        const int currentRow = m_proxy->mapToSource(m_view->currentIndex()).row();
        const TensorRow* current = m_model->tensorAt(currentRow);
        if (current && ((currentRow >= begin && currentRow < end) || (current->group >= begin && current->group < end)))
            showSelected();
    });
    connect(&m_stats, &QFutureWatcher<StatsBatch>::progressValueChanged, m_progress, &QuietProgressBar::setValueQuietly);
    connect(m_progress, &QProgressBar::valueChanged, this, [this](int value) {
        if (!m_collecting && !m_computingStats)
            return;
        emit progress(value, m_progress->maximum());
        emit jobProgress(jobId(), value, m_progress->maximum(),
                         m_collecting ? tr("Reading the checkpoint's tensors…") : tr("Computing tensor statistics…"));
    });
    connect(&m_stats, &QFutureWatcher<StatsBatch>::finished, this, &CheckpointTensorsPage::onStatsFinished);
    showSelected();
    updateSummary();
}

CheckpointTensorsPage::~CheckpointTensorsPage()
{
    // The jobs hold their own references to the state and the files: they may finish after
    // the page is gone.
    m_collect.cancel();
    m_stats.cancel();
}

void CheckpointTensorsPage::setCheckpoint(std::shared_ptr<const ckpt::TrainingState> state,
                                          std::shared_ptr<const ckpt::RunHistory>)
{
    m_collect.cancel();
    m_stats.cancel();
    // Watchers set to empty futures drop whatever the old jobs still deliver.
    m_stats.setFuture(QFuture<StatsBatch>());
    m_collecting = false;
    m_computingStats = false;
    m_state = std::move(state);
    m_tensors.reset();
    m_errors.clear();
    m_model->setTensors({});
    m_errorLabel->setVisible(false);
    if (!m_state) {
        m_collect.setFuture(QFuture<CollectedTensors>());
        showBusy(false);
        updateSummary();
        showSelected();
        return;
    }
    m_progress->setRangeQuietly(0, 0);
    m_collecting = true;
    showBusy(true);
    // At the GUI's own priority, unlike the background jobs: the table the user is looking at is
    // waiting for these rows, while the check goes on with its rules at a lower one. A pool of its
    // own, as a thread's lowered priority cannot be raised again (backgroundpriority.h).
    static QThreadPool* const foreground = new QThreadPool(QCoreApplication::instance()); // ends with the application
    m_collect.setFuture(QtConcurrent::run(foreground, [state = m_state](QPromise<CollectedTensors>& promise) {
        CollectedTensors collected;
        collected.tensors = collectTensors(*state, [&promise](int done, int total) {
            promise.setProgressRange(0, total);
            promise.setProgressValue(done);
            return !promise.isCanceled();
        });
        collected.modelRows = collected.tensors.rows;
        promise.addResult(std::move(collected));
    }));
    updateSummary();
    showSelected();
}

void CheckpointTensorsPage::cancel()
{
    m_collect.cancel();
    m_stats.cancel();
}

bool CheckpointTensorsPage::isBusy() const
{
    return m_collecting;
}

bool CheckpointTensorsPage::isComputingStats() const
{
    return m_computingStats;
}

void CheckpointTensorsPage::showBusy(bool busy)
{
    m_progress->setVisible(busy);
    m_cancel->setVisible(busy);
    if (busy)
        emit jobProgress(jobId(), m_progress->value(), m_progress->maximum(),
                         m_collecting ? tr("Reading the checkpoint's tensors…") : tr("Computing tensor statistics…"));
    else
        emit jobFinished(jobId());
}

QString CheckpointTensorsPage::jobId()
{
    return QStringLiteral("tensors");
}

void CheckpointTensorsPage::onTensorsCollected()
{
    if (!m_collecting)
        return;
    m_collecting = false;
    showBusy(false);
    QFuture<CollectedTensors> future = m_collect.future();
    const bool cancelled = future.isCanceled(); // before takeResult(), which leaves the future invalid
    if (future.resultCount() > 0) {
        // moved out, not copied: copying a frontier model's 90k rows cost the UI thread ~150 ms
        CollectedTensors collected = future.takeResult();
        m_tensors = std::make_shared<const CheckpointTensors>(std::move(collected.tensors));
        m_errors = m_tensors->errors;
        m_model->setTensors(std::move(collected.modelRows));
        // widths from the rows on screen: measuring 500 rows of a frontier model took 20 ms of the
        // UI thread, all 90k of them seconds
        m_view->horizontalHeader()->setResizeContentsPrecision(0);
        m_view->resizeColumnsToContents();
        for (const auto& [column, widest] : {std::pair{TensorListModel::Name, 320}, std::pair{TensorListModel::File, 220}}) {
            if (m_view->columnWidth(column) > widest)
                m_view->setColumnWidth(column, widest); // elided in the middle, whole in the tooltip
        }
    }
    if (cancelled)
        m_errors.append(tr("Reading the checkpoint was cancelled: the table shows the files read until then."));
    m_errorLabel->setText(m_errors.join(QLatin1Char('\n')));
    m_errorLabel->setVisible(!m_errors.isEmpty());
    updateSummary();
    showSelected();
    emit tensorsLoaded();
    if (!cancelled)
        startStats();
}

void CheckpointTensorsPage::startStats()
{
    if (!m_tensors || m_tensors->rows.empty())
        return;
    m_progress->setRangeQuietly(0, static_cast<int>(m_tensors->rows.size()));
    m_progress->setValueQuietly(0);
    m_computingStats = true;
    showBusy(true);
    m_stats.setFuture(QtConcurrent::run([tensors = m_tensors](QPromise<StatsBatch>& promise) {
        lowerThreadPriority();
        ckpt::StatsOptions options;
        options.progress = [&promise](const ckpt::StatsProgress&) { return !promise.isCanceled(); };
        const auto& rows = tensors->rows;
        promise.setProgressRange(0, static_cast<int>(rows.size()));
        // Handed over in batches, one every kBatchMs: one result (and one progress value) per row
        // of a frontier model's 90k posted two events per row, and the UI thread then took 70 ms
        // for the thousands that had queued up between two frames.
        constexpr qint64 kBatchMs = 25;
        StatsBatch batch;
        QElapsedTimer sinceBatch;
        sinceBatch.start();
        auto handOver = [&](int next) {
            if (!batch.views.empty())
                promise.addResult(std::move(batch));
            batch = StatsBatch{next, {}};
            promise.setProgressValue(next);
            sinceBatch.restart();
        };
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (promise.isCanceled())
                return;
            try {
                batch.views.push_back(computeRowStats(*tensors, rows[i], options));
            } catch (const ckpt::CancelledError&) {
                return;
            } catch (const std::exception& e) {
                // one unreadable tensor never stops the others
                TensorStatsView failed;
                failed.problem = QString::fromUtf8(e.what());
                batch.views.push_back(std::move(failed));
            }
            if (sinceBatch.elapsed() >= kBatchMs)
                handOver(static_cast<int>(i) + 1);
        }
        handOver(static_cast<int>(rows.size()));
    }));
    updateSummary();
}

void CheckpointTensorsPage::onStatsFinished()
{
    if (!m_computingStats)
        return;
    m_computingStats = false;
    showBusy(false);
    for (int column = TensorListModel::Min; column < TensorListModel::ColumnCount; ++column)
        m_view->resizeColumnToContents(column);
    updateSummary();
    emit statsFinished();
}

bool CheckpointTensorsPage::selectTensor(const QString& name, const QString& file)
{
    for (int row = 0; row < m_proxy->rowCount(); ++row) {
        const QModelIndex index = m_proxy->index(row, TensorListModel::Name);
        const TensorRow* t = m_model->tensorAt(m_proxy->mapToSource(index).row());
        if (t && t->name == name && (file.isEmpty() || t->file == file)) {
            m_view->setCurrentIndex(index);
            m_view->scrollTo(index);
            return true;
        }
    }
    return false;
}

void CheckpointTensorsPage::showSelected()
{
    const QModelIndex current = m_proxy->mapToSource(m_view->currentIndex());
    const TensorRow* t = m_model->tensorAt(current.row());
    if (!t) {
        m_histogram->clear(m_model->rowCount() ? tr("Select a tensor to see its histogram") : QString());
        m_shardMap->clear();
        m_shardMap->setVisible(false);
        return;
    }
    const QString title = t->name + QLatin1Char(' ') + formatShape(t->shape);
    const bool log = m_logHist->isChecked();
    const TensorStatsView* s = t->stats ? &*t->stats : nullptr;
    if (!t->problem.isEmpty())
        m_histogram->clear(tr("%1: no histogram (%2)").arg(t->name, t->problem));
    else if (!s)
        m_histogram->clear(isComputingStats() ? tr("%1: computing statistics…").arg(t->name)
                                              : tr("%1: statistics not computed").arg(t->name));
    else if (!s->problem.isEmpty())
        m_histogram->clear(tr("%1: no histogram (%2)").arg(t->name, s->problem));
    else if (log && !s->logHistCounts.empty())
        m_histogram->setHistogram(PlotMath::histogramBars(s->logHistLo, s->logHistHi, s->logHistCounts),
                                  title + uncertainNote(s->logHistUncertain), tr("log10 |x|"));
    else if (!log && !s->histCounts.empty())
        m_histogram->setHistogram(PlotMath::histogramBars(s->histLo, s->histHi, s->histCounts),
                                  title + uncertainNote(s->histUncertain), tr("value"));
    else
        m_histogram->clear(tr("%1: no finite%2 element to bin").arg(t->name, log ? tr(" non-zero") : QString()));
    showShardMap(*t);
}

void CheckpointTensorsPage::showShardMap(const TensorRow& selected)
{
    // A per-rank tensor shows the map of its group: where its piece sits, or whether its copy agrees.
    const TensorRow* t = selected.group >= 0 ? m_model->tensorAt(selected.group) : &selected;
    if (!t || t->shards.empty()) {
        m_shardMap->clear();
        m_shardMap->setVisible(false);
        return;
    }
    std::vector<TensorShard> shards = t->shards;
    if (t->stats) {
        for (std::size_t i = 0; i < shards.size() && i < static_cast<std::size_t>(t->stats->shardNotes.size()); ++i)
            shards[i].note = t->stats->shardNotes[static_cast<qsizetype>(i)];
    }
    QString title = tr("%1: %2 %3").arg(t->name).arg(shards.size()).arg(t->shardKind);
    if (t->replicated && t->stats)
        title += t->stats->shardSummary.isEmpty() ? tr(" — identical on every rank") : tr(" — ") + t->stats->shardSummary;
    m_shardMap->setVisible(true);
    m_shardMap->setShardMap(PlotMath::shardMap(t->shape, shards), title);
}

QString CheckpointTensorsPage::summaryText() const
{
    return m_summary->text();
}

void CheckpointTensorsPage::updateSummary()
{
    if (isBusy()) {
        m_summary->setText(tr("reading files…"));
        return;
    }
    const QString computing = isComputingStats() ? tr("; computing statistics…") : QString();
    // Logical tensors: a row that merges the ranks' pieces or replicas counts once, its per-rank
    // rows not again; the bytes are those on disk (the per-rank rows', not the merged row's too).
    const std::vector<TensorRow>& rows = m_model->tensors();
    uint64_t bytes = 0;
    int total = 0, sharded = 0, replicated = 0;
    for (const TensorRow& t : rows) {
        if (t.members.empty())
            bytes += t.bytes;
        else
            ++(t.replicated ? replicated : sharded);
        total += t.group < 0;
    }
    // Unfiltered, every row is shown: a frontier model's 90k proxy rows were mapped for nothing (10 ms).
    int shown = m_proxy->filtering() ? 0 : total;
    for (int row = 0; m_proxy->filtering() && row < m_proxy->rowCount(); ++row)
        shown += rows[std::size_t(m_proxy->mapToSource(m_proxy->index(row, 0)).row())].group < 0;
    QString tensors = total == 1 ? tr("1 tensor") : tr("%1 tensors").arg(total);
    QStringList groups;
    if (sharded > 0)
        groups.append(sharded == 1 ? tr("1 sharded group") : tr("%1 sharded groups").arg(sharded));
    if (replicated > 0)
        groups.append(replicated == 1 ? tr("1 replica group") : tr("%1 replica groups").arg(replicated));
    if (!groups.isEmpty())
        tensors += QStringLiteral(" (") + groups.join(QStringLiteral(", ")) + QLatin1Char(')');
    m_summary->setText((shown == total ? tr("%1, %2").arg(tensors, humanBytes(bytes))
                                       : tr("%1 of %2, %3").arg(shown).arg(tensors, humanBytes(bytes)))
                       + computing);
}
