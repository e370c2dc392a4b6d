// SPDX-License-Identifier: MIT
// The checkpoint view's "RNG & data cursor" tab: every generator with its fingerprint, the
// sampler's epoch/position/seed and the progress counters, one column per rank (or per
// checkpoint when comparing), rows that disagree highlighted.
#pragma once

#include <QWidget>

#include <memory>
#include <vector>

namespace ckpt {
struct RunHistory;
struct TrainingState;
}
class CopyTableView;
class QCheckBox;
class QLabel;
class QSortFilterProxyModel;
class StateGridModel;

class RngPage final : public QWidget {
    Q_OBJECT
public:
    explicit RngPage(QWidget* parent = nullptr);

    /// One checkpoint: a column per rank. Null clears the page. `run` is not needed here.
    void setCheckpoint(std::shared_ptr<const ckpt::TrainingState> state,
                       std::shared_ptr<const ckpt::RunHistory> run = nullptr);
    /// Several checkpoints side by side: a column per checkpoint, headed by `labels` (by default
    /// each checkpoint's step, or its folder name).
    void setCheckpoints(const std::vector<std::shared_ptr<const ckpt::TrainingState>>& states,
                        QStringList labels = {});

    StateGridModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    CopyTableView* view() const { return m_view; }
    QCheckBox* onlyDifferences() const { return m_onlyDiffs; }
    QString summaryText() const;

private:
    void showGrid();

    StateGridModel* m_model;
    QSortFilterProxyModel* m_proxy;
    CopyTableView* m_view;
    QCheckBox* m_onlyDiffs;
    QLabel* m_summary;
};
