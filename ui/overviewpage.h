// SPDX-License-Identifier: MIT
// The "Overview" tab of a checkpoint: its layout in one line, its files with sizes and audit
// status, the saved counters, data cursor and environment (C, D, E), and its findings.
#pragma once

#include "ui/rundata.h"

#include <QWidget>

class CheckpointFilesModel;
class FindingsModel;
class QLabel;
class QTableView;
class QTreeView;
class StateFieldsModel;

class OverviewPage final : public QWidget {
    Q_OBJECT
public:
    explicit OverviewPage(QWidget* parent = nullptr);

    /// `run` may be null (nothing selected); the page keeps no reference to it.
    void setCheckpoint(const RunData* run, int index);
    /// Selects the file's row in the files table; false when it is not listed.
    bool revealFile(const QString& path);
    /// Selects the finding with this rule (and file) in the findings table.
    bool revealFinding(const ckpt::Finding& finding);

    QLabel* summaryLabel() const { return m_summary; }
    CheckpointFilesModel* filesModel() const { return m_files; }
    StateFieldsModel* fieldsModel() const { return m_fields; }
    FindingsModel* findingsModel() const { return m_findings; }
    QTableView* filesView() const { return m_filesView; }
    QTableView* findingsView() const { return m_findingsView; }

private:
    QLabel* m_summary;
    CheckpointFilesModel* m_files;
    StateFieldsModel* m_fields;
    FindingsModel* m_findings;
    QTableView* m_filesView;
    QTreeView* m_fieldsView;
    QTableView* m_findingsView;
};
