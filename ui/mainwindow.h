// SPDX-License-Identifier: MIT
// The main window: the run browser dock on the left, the findings dock below, and in the centre
// either one checkpoint (CheckpointView) or two side by side (CompareView). Runs load in the
// background (RunLoader); the status bar shows their progress with a Cancel button.
#pragma once

#include "ui/rundata.h"

#include <QMainWindow>

#include <atomic>
#include <memory>

class CheckpointView;
class CompareView;
class FindingsPanel;
class ValidationPanel;
class JobStatus;
class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QStackedWidget;
class QTimer;
class RunBrowser;
class RunBrowserModel;
class RunLoader;
struct FindingRow;

class MainWindow final : public QMainWindow {
    Q_OBJECT
public:
    enum class Settings { Use, Ignore }; // Ignore: screenshots and tests leave no trace
    enum class Mode { Inspect, Compare };

    explicit MainWindow(Settings settings = Settings::Use, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens files, checkpoint folders, run folders and folders of runs; runs already open stay
    /// and are not opened twice.
    void openPaths(const QStringList& paths);
    /// Runs are still being read or audited, the findings dock is not up to date yet, or the shown
    /// checkpoint's files or statistics are being read.
    bool isBusy() const;
    void cancelBackgroundWork();
    void closeRun(int runId);

    /// The checkpoint tabs: "overview", "tensors", "optimizer", "schedule", "rng", "raw".
    static QStringList tabNames();
    bool selectTab(const QString& name);
    void setMode(Mode mode);
    Mode mode() const;
    /// Compares the checkpoints at these paths once they are open (now, if they are); false when
    /// a path is not a checkpoint of an open run (yet).
    bool compareByPath(const QString& pathA, const QString& pathB);
    void showCheckpoint(int runId, int index);
    /// Writes the report of the run (or checkpoint) at `path` to `file` as one HTML file: read and
    /// checked in the background (progress and Cancel in the status bar), drawn here. Emits
    /// reportExported when done.
    void exportReport(const QString& path, const QString& file);

    RunBrowserModel* runModel() const { return m_runs; }
    RunBrowser* runBrowser() const { return m_browser; }
    FindingsPanel* findingsPanel() const { return m_findings; }
    ValidationPanel* validationPanel() const { return m_validation; }
    CheckpointView* checkpointView() const { return m_checkpointView; }
    CompareView* compareView() const { return m_compareView; }
    JobStatus* jobStatus() const { return m_job; }

signals:
    /// Every run opened so far has been read and audited (or the work was cancelled).
    void loadsFinished();
    /// exportReport's end: `error` is empty when `file` was written.
    void reportExported(const QString& file, const QString& error);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createDocks();
    void createMenus();
    void createStatusBar();
    void connectLoader();
    void rebuildRecentMenu();
    void openFileDialog();
    void openFolderDialog();
    void onRunAvailable(const RunDataPtr& run);
    void onRunChanged(int runId, int index); // index -1: the whole run (its audit)
    void onIdle();
    void rebuildFindings();
    /// Sizes the findings dock to its rows (2 to 8 of them) until the user drags it to a height of
    /// their own: an empty list takes no room from the checkpoint.
    void fitFindingsDock();
    void jumpTo(const FindingRow& row);
    void updateTitle();

    Settings m_settings;
    RunLoader* m_loader;
    RunBrowserModel* m_runs;
    RunBrowser* m_browser = nullptr;
    FindingsPanel* m_findings = nullptr;
    QDockWidget* m_findingsDock = nullptr;
    static constexpr int kFindingsHeightUsers = -2; // the user's size (dragged, or restored from the last session)
    int m_findingsHeightSet = -1; // the height fitFindingsDock() last gave; another one: the user's
    ValidationPanel* m_validation = nullptr;
    QStackedWidget* m_centre = nullptr;
    CheckpointView* m_checkpointView = nullptr;
    CompareView* m_compareView = nullptr;
    JobStatus* m_job = nullptr;
    QLabel* m_statusLabel = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_inspectAction = nullptr;
    QAction* m_compareAction = nullptr;
    QTimer* m_findingsTimer = nullptr;             // coalesces findings updates while a run scans
    QStringList m_pendingCompare;
    std::shared_ptr<std::atomic_bool> m_reportCancel; // the report being built, if any                  // --compare A B before A and B have arrived
};
