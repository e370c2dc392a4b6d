// SPDX-License-Identifier: MIT
// The main window: the Files dock on the left, the current file's tabs in the centre.
#pragma once

#include <QMainWindow>

#include <memory>

namespace ckpt {
class CheckpointFile;
}
class CheckpointLoader;
class FileListModel;
class ImportsPage;
class QLabel;
class QListView;
class QMenu;
class QProgressBar;
class QTabWidget;
class TensorsPage;
class TreePage;
class WarningsPage;

class MainWindow final : public QMainWindow {
    Q_OBJECT
public:
    enum class Settings { Use, Ignore }; // Ignore: screenshots and tests leave no trace
    enum Tab { TensorsTab, TreeTab, ImportsTab, WarningsTab };

    explicit MainWindow(Settings settings = Settings::Use, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens files and folders as one batch, replacing what is open.
    void openPaths(const QStringList& paths);
    bool isLoading() const;

    /// "tensors", "tree", "imports", "warnings"
    static QStringList tabNames();
    bool selectTab(const QString& name);

    FileListModel* fileModel() const { return m_files; }
    QListView* fileView() const { return m_fileView; }
    QTabWidget* tabs() const { return m_tabs; }
    TensorsPage* tensorsPage() const { return m_tensorsPage; }
    TreePage* treePage() const { return m_treePage; }
    ImportsPage* importsPage() const { return m_importsPage; }
    WarningsPage* warningsPage() const { return m_warningsPage; }

signals:
    /// Every file of the last openPaths() has loaded or failed.
    void loadsFinished();

protected:
    void changeEvent(QEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createMenus();
    void createDock();
    void createStatusBar();
    void rebuildRecentMenu();
    void openFileDialog();
    void openFolderDialog();
    void onStarted(const QStringList& files);
    void onLoaded(const std::shared_ptr<const ckpt::CheckpointFile>& file);
    void onFailed(const QString& path, const QString& reason);
    void onFinished();
    void selectRow(int row);
    void showRow(int row);
    void updateHeaderColour();

    Settings m_settings;
    CheckpointLoader* m_loader;
    FileListModel* m_files;
    QListView* m_fileView = nullptr;
    QLabel* m_header = nullptr;
    QTabWidget* m_tabs = nullptr;
    TensorsPage* m_tensorsPage = nullptr;
    TreePage* m_treePage = nullptr;
    ImportsPage* m_importsPage = nullptr;
    WarningsPage* m_warningsPage = nullptr;
    QMenu* m_recentMenu = nullptr;
    QLabel* m_statusLabel = nullptr;
    QProgressBar* m_progress = nullptr;
    int m_shownRow = -1;
    bool m_userPicked = false;    // the user chose a file: automatic selection stops
    bool m_selectingRow = false;  // selectRow() is moving the current index, not the user
    bool m_headerIsError = false;
};
