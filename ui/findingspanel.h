// SPDX-License-Identifier: MIT
// The Findings dock: every finding of what is open as a tree, each group of findings that say the
// same thing once (worst first, then the recovery guide's §10.1 order) with its instances below it,
// filtered by severity and component; activating a row (click, Enter) asks the window to show the
// checkpoint, tab and row it is about (a group: its first instance).
#pragma once

#include "ui/models/findingsmodel.h"

#include <QWidget>

class FindingsProxyModel;
class QComboBox;
class QLabel;
class QTreeView;

class FindingsPanel final : public QWidget {
    Q_OBJECT
public:
    explicit FindingsPanel(QWidget* parent = nullptr);

    void setFindings(std::vector<FindingRow> rows);

    FindingsModel* model() const { return m_model; }
    FindingsProxyModel* proxy() const { return m_proxy; }
    QTreeView* view() const { return m_view; }
    QComboBox* severityFilter() const { return m_severity; }
    QComboBox* componentFilter() const { return m_component; }

signals:
    void findingActivated(const FindingRow& row);
    /// After findingActivated for a group of several: the checkpoints of all its instances, so the
    /// run browser can select them together.
    void groupActivated(int runId, const QList<int>& checkpointIndices);

private:
    void updateCount();

    FindingsModel* m_model;
    FindingsProxyModel* m_proxy;
    QComboBox* m_severity;
    QComboBox* m_component;
    QLabel* m_count;
    QTreeView* m_view;
};
