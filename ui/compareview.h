// SPDX-License-Identifier: MIT
// Two checkpoints side by side: pick A and B (any checkpoints of the open runs; by default the
// best and the latest of the current run), the pair's findings at the top, then the comparison
// per component and the tensor table.
#pragma once

#include "ui/rundata.h"

#include <QVariant>
#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>
#include <utility>

namespace ckpt {
struct CheckpointDiff;
}

class ComparisonModel;
class FindingsModel;
class QCheckBox;
class QComboBox;
class QLabel;
class QTableView;
class QTreeView;
class TensorDiffModel;

class CompareView final : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);
    /// Cancels a tensor comparison still running (its result is dropped).
    ~CompareView() override;

    /// The checkpoints A and B can be chosen from; keeps the current choice where it still exists.
    void setRuns(const std::vector<RunDataPtr>& runs);
    void compare(int runA, int indexA, int runB, int indexB);
    /// Best vs latest of the run (the one before latest when the run names no best).
    void compareDefault(int runId);
    /// Recomputes with what has arrived since (states read after the choice was made).
    void refresh();
    /// Selects and expands the section of a part of S_t (a ckpt::componentName: "scaler", "rng"...);
    /// false when the comparison has no such section.
    bool selectComponent(const QString& component);
    /// A as (run id, checkpoint index); false when none is chosen.
    bool chosenA(int& runId, int& index) const;

    QComboBox* chooserA() const { return m_chooserA; }
    QComboBox* chooserB() const { return m_chooserB; }
    ComparisonModel* comparisonModel() const { return m_comparison; }
    TensorDiffModel* tensorModel() const { return m_tensors; }
    FindingsModel* pairFindingsModel() const { return m_findings; }
    QLabel* summaryLabel() const { return m_summary; }
    QTreeView* comparisonView() const { return m_comparisonView; }

    /// The tensor values of the chosen pair, once compared in the background (null before).
    std::shared_ptr<const ckpt::CheckpointDiff> tensorDiff() const { return m_diff; }

Q_SIGNALS:
    void tensorDiffAvailable();
    /// A is now checkpoint `index` of run `runId` (emitted when the choice of A changes), so the
    /// run browser can show where A is.
    void checkpointAChosen(int runId, int index);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void startTensorDiff(const QString& pathA, const QString& pathB);
    const RunCheckpointData* checkpointAt(const QComboBox* chooser, const RunData** run = nullptr) const;
    void update();

    std::vector<RunDataPtr> m_runs;
    QComboBox* m_chooserA;
    QComboBox* m_chooserB;
    QCheckBox* m_differencesOnly;
    QLabel* m_summary;
    FindingsModel* m_findings;
    QTableView* m_findingsView;
    ComparisonModel* m_comparison;
    QTreeView* m_comparisonView;
    TensorDiffModel* m_tensors;
    QVariant m_chosenA; // the A last announced through checkpointAChosen
    std::optional<std::pair<QString, QString>> m_pendingDiff; // chosen while hidden: compared when shown
    bool m_updatePending = false; // runs or choices changed while hidden: update() when shown
    QString m_diffKey; // the pair whose values are compared or being compared
    std::shared_ptr<std::atomic_bool> m_diffCancel;
    std::shared_ptr<const ckpt::CheckpointDiff> m_diff;
    QTableView* m_tensorView;
};
