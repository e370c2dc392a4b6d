// SPDX-License-Identifier: MIT
// The centre of the window: one checkpoint in tabs. Overview and Raw are here; Tensors, Optimizer,
// Schedule and "RNG & data" are the data pages of ui/pages/, each given the checkpoint's training
// state and its run once the state has been read and its tab is shown. The checkpoint's files are
// opened in the background for Raw; what cannot be opened is listed in an error panel above the tabs.
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
class CheckpointTensorsPage;
class OptimizerPage;
class RngPage;
class SchedulePage;
class TimelinePage;

class CheckpointView final : public QWidget {
    Q_OBJECT
public:
    enum Tab { OverviewTab, TensorsTab, OptimizerTab, ScheduleTab, RngTab, RawTab, TimelineTab, TabCount };

    explicit CheckpointView(QWidget* parent = nullptr);
    ~CheckpointView() override;

    /// Shows checkpoint `index` of `run` (null: nothing). Opening its files starts over only when
    /// the checkpoint changed; otherwise the Overview is refreshed with what has arrived since.
    void setCheckpoint(const RunDataPtr& run, int index);
    int runId() const;
    int checkpointIndex() const { return m_index; }
    bool isLoading() const;
    /// Stops the pages' background work (tensor statistics, the optimizer's moments).
    void cancelBackgroundWork();

    /// "overview", "tensors", "optimizer", "schedule", "rng", "raw", "timeline"
    static QStringList tabNames();
    bool selectTab(const QString& name);
    /// Puts the keyboard focus in the shown tab's name filter; false when the tab has none.
    bool focusFilter();
    /// Shows the tab and row a finding points at.
    void reveal(const ckpt::Finding& finding);

    QTabWidget* tabs() const { return m_tabs; }
    OverviewPage* overviewPage() const { return m_overview; }
    CheckpointTensorsPage* tensorsPage() const { return m_tensors; }
    OptimizerPage* optimizerPage() const { return m_optimizer; }
    SchedulePage* schedulePage() const { return m_schedule; }
    RngPage* rngPage() const { return m_rng; }
    TimelinePage* timelinePage() const { return m_timeline; }
    RawPage* rawPage() const { return m_raw; }
    /// The file the Raw tab shows.
    QComboBox* fileChooser() const { return m_fileChooser; }
    ErrorPanel* errors() const { return m_errors; }
    const std::vector<std::shared_ptr<const ckpt::CheckpointFile>>& files() const { return m_files; }

signals:
    /// The timeline asks to compare the checkpoints on both sides of a resume, with `component` first.
    void compareRequested(const QString& before, const QString& after, const QString& component);
    /// The checkpoint's files have all been opened or failed.
    void filesLoaded();
    /// A page's background job advanced or ended (ids: CheckpointTensorsPage::jobId(), ...).
    void jobProgress(const QString& job, int done, int total, const QString& what);
    void jobFinished(const QString& job);

private:
    void onFileLoaded(const std::shared_ptr<const ckpt::CheckpointFile>& file);
    void loadFilesWhenReady();
    void showFile(int comboIndex);
    void updatePages();
    void refreshPage(int tab);

    RunDataPtr m_run;
    int m_index = -1;
    QString m_path;
    QString m_fileBase; // what the files' names are relative to (checkpointFileBase)
    CheckpointLoader* m_loader;
    QLabel* m_title;
    QComboBox* m_fileChooser;
    ErrorPanel* m_errors;
    QTabWidget* m_tabs;
    OverviewPage* m_overview;
    CheckpointTensorsPage* m_tensors;
    OptimizerPage* m_optimizer;
    SchedulePage* m_schedule;
    RngPage* m_rng;
    TimelinePage* m_timeline;
    std::shared_ptr<const ckpt::CheckpointFile> m_rawFile; // the chosen file, given to the Raw tab when it is shown
    bool m_rawGiven = true;
    bool m_filesRequested = false; // m_loader asked for the current checkpoint's files
    RawPage* m_raw;
    std::shared_ptr<const ckpt::TrainingState> m_pageState; // what the data pages show
    std::shared_ptr<const ckpt::TrainingState> m_pageGiven[TabCount]; // what each page was last given
    std::vector<std::shared_ptr<const ckpt::CheckpointFile>> m_files; // in the chooser's order
};
