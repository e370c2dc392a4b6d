// SPDX-License-Identifier: MIT
// The left dock: every open run with its checkpoints (RunBrowserModel), and below it the paths
// that could not be opened. Selecting a checkpoint shows it; selecting two offers to compare them.
#pragma once

#include <QWidget>

class ErrorPanel;
class QTreeView;
class RunBrowserModel;

class RunBrowser final : public QWidget {
    Q_OBJECT
public:
    explicit RunBrowser(RunBrowserModel* model, QWidget* parent = nullptr);

    QTreeView* view() const { return m_view; }
    ErrorPanel* errors() const { return m_errors; }

    /// Makes checkpoint `index` of run `runId` current (and shows it through checkpointSelected).
    void selectCheckpoint(int runId, int index);
    /// Adds these checkpoints of run `runId` to the selection, the current one unchanged (a
    /// findings group's checkpoints).
    void selectAlso(int runId, const QList<int>& indices);
    /// Makes checkpoint `index` of run `runId` current and scrolls to it, keeping the selection
    /// when it already holds that checkpoint (the two picked for comparing stay selected).
    void revealCheckpoint(int runId, int index);
    /// The two selected checkpoints, or false when fewer or more are selected.
    bool selectedPair(int& runA, int& indexA, int& runB, int& indexB) const;

signals:
    void checkpointSelected(int runId, int index);
    void compareRequested(int runA, int indexA, int runB, int indexB);
    void closeRunRequested(int runId);

private:
    void requestCompare();

    RunBrowserModel* m_model;
    QTreeView* m_view;
    ErrorPanel* m_errors;
};
