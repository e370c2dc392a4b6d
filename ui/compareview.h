// SPDX-License-Identifier: MIT
// Two checkpoints side by side: pick A and B (any checkpoints of the open runs; by default the
// best and the latest of the current run), the pair's findings at the top, then the comparison
// per component and the tensor table.
#pragma once

#include "ui/rundata.h"

#include <QWidget>

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

    /// The checkpoints A and B can be chosen from; keeps the current choice where it still exists.
    void setRuns(const std::vector<RunDataPtr>& runs);
    void compare(int runA, int indexA, int runB, int indexB);
    /// Best vs latest of the run (the one before latest when the run names no best).
    void compareDefault(int runId);
    /// Recomputes with what has arrived since (states read after the choice was made).
    void refresh();

    QComboBox* chooserA() const { return m_chooserA; }
    QComboBox* chooserB() const { return m_chooserB; }
    ComparisonModel* comparisonModel() const { return m_comparison; }
    TensorDiffModel* tensorModel() const { return m_tensors; }
    FindingsModel* pairFindingsModel() const { return m_findings; }
    QLabel* summaryLabel() const { return m_summary; }
    QTreeView* comparisonView() const { return m_comparisonView; }

private:
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
    QTableView* m_tensorView;
};
