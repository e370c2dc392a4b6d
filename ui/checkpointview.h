// SPDX-License-Identifier: MIT
// The centre of the window: one checkpoint in tabs. Overview and Raw are here; Tensors is the
// per-file tensor table. Optimizer, Schedule and "RNG & data" are page widgets of their own
// (ui/pages/, built apart) that plug in with setPage(); until they do, their tabs say where the
// values are shown meanwhile. The checkpoint's files are opened in the background for Tensors and
// Raw; what cannot be opened is listed in an error panel above the tabs.
#pragma once

#include "ui/rundata.h"

#include <QWidget>

#include <memory>
#include <vector>

namespace ckpt {
class CheckpointFile;
}
class CheckpointLoader;
class ErrorPanel;
class OverviewPage;
class QComboBox;
class QLabel;
class QTabWidget;
class RawPage;
class TensorsPage;

class CheckpointView final : public QWidget {
    Q_OBJECT
public:
    enum Tab { OverviewTab, TensorsTab, OptimizerTab, ScheduleTab, RngTab, RawTab, TabCount };

    explicit CheckpointView(QWidget* parent = nullptr);
    ~CheckpointView() override;

    /// Shows checkpoint `index` of `run` (null: nothing). Opening its files starts over only when
    /// the checkpoint changed; otherwise the Overview is refreshed with what has arrived since.
    void setCheckpoint(const RunDataPtr& run, int index);
    int runId() const;
    int checkpointIndex() const { return m_index; }
    bool isLoading() const;

    /// "overview", "tensors", "optimizer", "schedule", "rng", "raw"
    static QStringList tabNames();
    bool selectTab(const QString& name);
    /// Replaces a tab's page (the pages of ui/pages/ plug in here).
    void setPage(Tab tab, QWidget* page);
    /// Shows the tab and row a finding points at.
    void reveal(const ckpt::Finding& finding);

    QTabWidget* tabs() const { return m_tabs; }
    OverviewPage* overviewPage() const { return m_overview; }
    TensorsPage* tensorsPage() const { return m_tensors; }
    RawPage* rawPage() const { return m_raw; }
    QComboBox* fileChooser() const { return m_fileChooser; }
    ErrorPanel* errors() const { return m_errors; }
    const std::vector<std::shared_ptr<const ckpt::CheckpointFile>>& files() const { return m_files; }

signals:
    /// The checkpoint's files have all been opened or failed.
    void filesLoaded();

private:
    void onFileLoaded(const std::shared_ptr<const ckpt::CheckpointFile>& file);
    void showFile(int comboIndex);

    RunDataPtr m_run;
    int m_index = -1;
    QString m_path;
    CheckpointLoader* m_loader;
    QLabel* m_title;
    QComboBox* m_fileChooser;
    ErrorPanel* m_errors;
    QTabWidget* m_tabs;
    OverviewPage* m_overview;
    TensorsPage* m_tensors;
    RawPage* m_raw;
    std::vector<std::shared_ptr<const ckpt::CheckpointFile>> m_files; // in the chooser's order
};
