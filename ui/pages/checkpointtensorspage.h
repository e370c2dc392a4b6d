// SPDX-License-Identifier: MIT
// The checkpoint view's "Tensors" tab: every tensor of the checkpoint in a sortable, filterable
// table; the selected tensor's histogram and, when it is saved in shards, its shard map. The
// files are opened off the GUI thread with progress and cancel; statistics columns fill in as
// they are computed.
#pragma once

#include "ui/pages/tensornamefilter.h"
#include "ui/pages/tensorrows.h"

#include <QFutureWatcher>
#include <QWidget>

#include <memory>

namespace ckpt {
struct RunHistory;
struct TrainingState;
}
class CopyTableView;
class HistogramPlot;
class QCheckBox;
class QLabel;
class QLineEdit;
class QuietProgressBar;
class QToolButton;
class ShardMapPlot;
class TensorListModel;

/// What the collecting job hands over: the rows, which the statistics job reads, and the model's
/// own copy of them (it fills in their statistics), made on the worker: copying a frontier model's
/// 90k rows on the UI thread stalled it ~140 ms.
struct CollectedTensors {
    CheckpointTensors tensors;
    std::vector<TensorRow> modelRows;
};

/// Rows [first, first + views.size())'s statistics, handed over together (QPromise in Qt 6.4 adds
/// one result at a time): one result per row of a frontier model's 90k flooded the UI thread.
struct StatsBatch {
    int first = 0;
    std::vector<TensorStatsView> views;
};

class CheckpointTensorsPage final : public QWidget {
    Q_OBJECT
public:
    explicit CheckpointTensorsPage(QWidget* parent = nullptr);
    ~CheckpointTensorsPage() override;

    /// Shows `state`'s tensors (null clears the page). Opens its files in the background; a
    /// newer call drops what an older one was still doing. `run` is not needed here.
    void setCheckpoint(std::shared_ptr<const ckpt::TrainingState> state,
                       std::shared_ptr<const ckpt::RunHistory> run = nullptr);
    /// Stops the background work (opening files, then statistics); what arrived stays.
    void cancel();
    bool isBusy() const;
    bool isComputingStats() const;
    /// The id its jobProgress() and jobFinished() use.
    static QString jobId();

    TensorListModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    CopyTableView* view() const { return m_view; }
    QLineEdit* filterEdit() const { return m_filter; }
    HistogramPlot* histogram() const { return m_histogram; }
    QCheckBox* logHistogram() const { return m_logHist; }
    ShardMapPlot* shardMap() const { return m_shardMap; }
    QString summaryText() const;
    QStringList errors() const { return m_errors; }
    /// Selects the row showing tensor `name` (file `file` when several have that name).
    bool selectTensor(const QString& name, const QString& file = {});

signals:
    /// The tensor table is filled (or the load was cancelled or failed).
    void tensorsLoaded();
    /// Every tensor's statistics arrived (or their computation was cancelled).
    void statsFinished();
    /// Files read, then statistics computed: for a status-bar progress bar (the page shows its own).
    void progress(int done, int total);
    /// The same for the window's job indicator, under the job id "tensors"; `what` says which stage.
    void jobProgress(const QString& job, int done, int total, const QString& what);
    /// The page's background work is over (done, cancelled, or replaced by nothing).
    void jobFinished(const QString& job);

private:
    void onTensorsCollected();
    void startStats();
    void onStatsFinished();
    void showBusy(bool busy);
    void showSelected();
    void showShardMap(const TensorRow& selected);
    void updateSummary();

    TensorListModel* m_model;
    TensorNameFilter* m_proxy;
    QLineEdit* m_filter;
    QLabel* m_summary;
    QLabel* m_errorLabel;
    QuietProgressBar* m_progress;
    QToolButton* m_cancel;
    CopyTableView* m_view;
    HistogramPlot* m_histogram;
    ShardMapPlot* m_shardMap;
    QCheckBox* m_logHist;
    QFutureWatcher<CollectedTensors> m_collect;
    QFutureWatcher<StatsBatch> m_stats; // result i: the i-th batch of rows' statistics
    std::shared_ptr<const ckpt::TrainingState> m_state;
    std::shared_ptr<const CheckpointTensors> m_tensors; // keeps the files open for the statistics
    // Set while a job of this page's current checkpoint runs: a watcher given an empty future
    // (to drop an old job) reports "finished" at once, which must not count.
    bool m_collecting = false;
    bool m_computingStats = false;
    QStringList m_errors;
};
