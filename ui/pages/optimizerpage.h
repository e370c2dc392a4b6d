// SPDX-License-Identifier: MIT
// The checkpoint view's "Optimizer" tab: the param groups with their hyperparameters, the
// per-parameter state by parameter name (step, moments with norm/mean/max computed in the
// background) and the moments' norms across the run's checkpoints.
#pragma once

#include "ui/pages/optimizerrows.h"

#include <QFutureWatcher>
#include <QWidget>

#include <memory>

namespace ckpt {
struct RunHistory;
struct TrainingState;
}
class CopyTableView;
class CurvePlot;
class MomentStateModel;
class ParamGroupsModel;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;

class OptimizerPage final : public QWidget {
    Q_OBJECT
public:
    explicit OptimizerPage(QWidget* parent = nullptr);
    ~OptimizerPage() override;

    /// Shows `state`'s optimizer (null clears the page). With `run`, the norms of the moments
    /// over the run's checkpoints are read in the background and plotted.
    void setCheckpoint(std::shared_ptr<const ckpt::TrainingState> state,
                       std::shared_ptr<const ckpt::RunHistory> run = nullptr);
    void cancel();
    bool isComputingStats() const { return m_computingStats; }
    bool isReadingHistory() const { return m_readingHistory; }

    ParamGroupsModel* groupsModel() const { return m_groups; }
    MomentStateModel* momentsModel() const { return m_moments; }
    QSortFilterProxyModel* momentsProxy() const { return m_proxy; }
    CopyTableView* groupsView() const { return m_groupsView; }
    CopyTableView* momentsView() const { return m_momentsView; }
    QLineEdit* filterEdit() const { return m_filter; }
    CurvePlot* normPlot() const { return m_plot; }
    const MomentHistory& history() const { return m_history; }
    QString headerText() const;

    /// The ids its jobProgress() and jobFinished() use: this checkpoint's moment statistics, and
    /// the moments read across the run's checkpoints.
    static QString statsJobId();
    static QString historyJobId();

signals:
    void statsFinished();
    void historyFinished();
    /// For the window's job indicator (the status bar's progress bar with Cancel).
    void jobProgress(const QString& job, int done, int total, const QString& what);
    void jobFinished(const QString& job);

private:
    void startStats();
    void startHistory(std::shared_ptr<const ckpt::RunHistory> run);
    void drawNorms();

    QLabel* m_header;
    ParamGroupsModel* m_groups;
    MomentStateModel* m_moments;
    QSortFilterProxyModel* m_proxy;
    CopyTableView* m_groupsView;
    CopyTableView* m_momentsView;
    QLineEdit* m_filter;
    CurvePlot* m_plot;
    QLabel* m_plotNote;
    QFutureWatcher<TensorStatsView> m_stats;
    QFutureWatcher<MomentHistory> m_historyJob;
    std::shared_ptr<const ckpt::TrainingState> m_state;
    MomentHistory m_history;
    bool m_computingStats = false;
    bool m_readingHistory = false;
};
