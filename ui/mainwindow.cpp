// SPDX-License-Identifier: MIT
#include "ui/mainwindow.h"

#include "core/checkpoint_file.h"
#include "ui/checkpointloader.h"
#include "ui/importspage.h"
#include "ui/models/filelistmodel.h"
#include "ui/palettecolors.h"
#include "ui/recentfiles.h"
#include "ui/tensorspage.h"
#include "ui/textformat.h"
#include "ui/treepage.h"
#include "ui/warningspage.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QListView>
#include <QMenuBar>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QVBoxLayout>

namespace {

QString geometryKey()
{
    return QStringLiteral("mainWindow/geometry");
}

QString stateKey()
{
    return QStringLiteral("mainWindow/state");
}

QStringList localPaths(const QMimeData* mime)
{
    QStringList paths;
    if (!mime->hasUrls())
        return paths;
    for (const QUrl& url : mime->urls()) {
        if (url.isLocalFile())
            paths.append(url.toLocalFile());
    }
    return paths;
}

} // namespace

MainWindow::MainWindow(Settings settings, QWidget* parent)
    : QMainWindow(parent)
    , m_settings(settings)
    , m_loader(new CheckpointLoader(this))
    , m_files(new FileListModel(this))
{
    setWindowTitle(tr("Checkpoint Inspector"));
    setAcceptDrops(true);

    m_tensorsPage = new TensorsPage;
    m_treePage = new TreePage;
    m_importsPage = new ImportsPage;
    m_warningsPage = new WarningsPage;
    m_tabs = new QTabWidget;
    m_tabs->setDocumentMode(true);
    m_tabs->insertTab(TensorsTab, m_tensorsPage, tr("Tensors"));
    m_tabs->insertTab(TreeTab, m_treePage, tr("Tree"));
    m_tabs->insertTab(ImportsTab, m_importsPage, tr("Imports"));
    m_tabs->insertTab(WarningsTab, m_warningsPage, tr("Warnings"));

    m_header = new QLabel(tr("Open a checkpoint file or folder (File menu), or drop files here."));
    m_header->setObjectName(QStringLiteral("fileHeader"));
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(6, 6, 6, 0);
    layout->addWidget(m_header);
    layout->addWidget(m_tabs, 1);
    setCentralWidget(central);

    createDock();
    createMenus();
    createStatusBar();

    connect(m_loader, &CheckpointLoader::started, this, &MainWindow::onStarted);
    connect(m_loader, &CheckpointLoader::loaded, this, &MainWindow::onLoaded);
    connect(m_loader, &CheckpointLoader::failed, this, &MainWindow::onFailed);
    connect(m_loader, &CheckpointLoader::finished, this, &MainWindow::onFinished);
    connect(m_loader, &CheckpointLoader::progress, this, [this](int done, int total) {
        m_progress->setRange(0, total > 1 ? total : 0); // one file: a busy indicator
        m_progress->setValue(done);
        m_statusLabel->setText(tr("Loading %1 of %2…").arg(qMin(done + 1, total)).arg(total));
    });

    resize(1200, 760);
    if (m_settings == Settings::Use) {
        const QSettings settingsStore;
        restoreGeometry(settingsStore.value(geometryKey()).toByteArray());
        restoreState(settingsStore.value(stateKey()).toByteArray());
    }
}

MainWindow::~MainWindow() = default;

void MainWindow::createDock()
{
    m_fileView = new QListView;
    m_fileView->setModel(m_files);
    m_fileView->setWordWrap(true);
    m_fileView->setSpacing(2);
    m_fileView->setAlternatingRowColors(true);
    m_fileView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    connect(m_fileView->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& current) {
        if (!m_selectingRow)
            m_userPicked = true;
        showRow(current.row());
    });

    auto* dock = new QDockWidget(tr("Files"), this);
    dock->setObjectName(QStringLiteral("filesDock"));
    dock->setWidget(m_fileView);
    dock->setAllowedAreas(Qt::LeftDockWidgetArea | Qt::RightDockWidgetArea);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    resizeDocks({dock}, {300}, Qt::Horizontal);
}

void MainWindow::createMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* openFile = file->addAction(tr("&Open file…"), this, &MainWindow::openFileDialog);
    openFile->setShortcut(QKeySequence::Open);
    QAction* openFolder = file->addAction(tr("Open &folder…"), this, &MainWindow::openFolderDialog);
    openFolder->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    m_recentMenu = file->addMenu(tr("Open &recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* dock : findChildren<QDockWidget*>())
        view->addAction(dock->toggleViewAction());
}

void MainWindow::createStatusBar()
{
    m_statusLabel = new QLabel;
    m_progress = new QProgressBar;
    m_progress->setMaximumWidth(180);
    m_progress->setTextVisible(false);
    m_progress->hide();
    statusBar()->addWidget(m_statusLabel, 1);
    statusBar()->addPermanentWidget(m_progress);
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = m_settings == Settings::Use ? RecentFiles::load() : QStringList();
    for (const QString& path : recent) {
        m_recentMenu->addAction(path, this, [this, path] { openPaths({path}); });
    }
    if (recent.isEmpty()) {
        m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
        return;
    }
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(tr("Clear list"), this, [] { RecentFiles::clear(); });
}

void MainWindow::openFileDialog()
{
    const QString filter = tr("Checkpoints (%1);;All files (*)").arg(CheckpointLoader::checkpointNameFilters().join(QLatin1Char(' ')));
    const QStringList paths = QFileDialog::getOpenFileNames(this, tr("Open checkpoint"), QString(), filter);
    if (!paths.isEmpty())
        openPaths(paths);
}

void MainWindow::openFolderDialog()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open folder of checkpoints"));
    if (!dir.isEmpty())
        openPaths({dir});
}

void MainWindow::openPaths(const QStringList& paths)
{
    if (m_settings == Settings::Use) {
        for (const QString& path : paths)
            RecentFiles::add(path);
    }
    m_loader->load(paths);
}

bool MainWindow::isLoading() const
{
    return m_loader->isBusy();
}

QStringList MainWindow::tabNames()
{
    return {QStringLiteral("tensors"), QStringLiteral("tree"), QStringLiteral("imports"), QStringLiteral("warnings")};
}

bool MainWindow::selectTab(const QString& name)
{
    const qsizetype index = tabNames().indexOf(name.toLower());
    if (index < 0)
        return false;
    m_tabs->setCurrentIndex(static_cast<int>(index));
    return true;
}

void MainWindow::onStarted(const QStringList& files)
{
    m_files->setPaths(files);
    m_shownRow = -1;
    m_userPicked = false;
    showRow(-1);
    m_progress->show();
}

void MainWindow::onLoaded(const std::shared_ptr<const ckpt::CheckpointFile>& file)
{
    const int row = m_files->setLoaded(file);
    if (row < 0)
        return;
    if (row == m_shownRow) {
        showRow(row); // the user picked it while it was loading
        return;
    }
    // Show the first file in list order that loads, whatever order the loads finish in.
    if (!m_userPicked && (m_shownRow < 0 || row < m_shownRow))
        selectRow(row);
}

void MainWindow::onFailed(const QString& path, const QString& reason)
{
    const int row = m_files->setFailed(path, reason);
    if (row >= 0 && row == m_shownRow)
        showRow(row);
}

void MainWindow::onFinished()
{
    m_progress->hide();
    int failed = 0;
    for (int row = 0; row < m_files->rowCount(); ++row) {
        if (m_files->stateAt(row) == FileListModel::State::Failed)
            ++failed;
    }
    const int total = m_files->rowCount();
    m_statusLabel->setText(failed ? tr("Opened %1 of %2 files; %3 could not be read.").arg(total - failed).arg(total).arg(failed)
                                  : total == 1 ? tr("Opened 1 file.") : tr("Opened %1 files.").arg(total));
    if (m_shownRow < 0 && total > 0)
        selectRow(0); // nothing loaded: show why the first one failed
    emit loadsFinished();
}

void MainWindow::selectRow(int row)
{
    const bool changed = m_fileView->currentIndex().row() != row;
    m_selectingRow = true;
    m_fileView->setCurrentIndex(m_files->index(row)); // shows it through currentChanged
    m_selectingRow = false;
    if (!changed)
        showRow(row); // it was current already but may have just loaded
}

void MainWindow::showRow(int row)
{
    m_shownRow = row;
    const std::shared_ptr<const ckpt::CheckpointFile> file = m_files->fileAt(row);
    m_tensorsPage->setFile(file);
    m_treePage->setFile(file);
    m_importsPage->setFile(file);
    const int warnings = m_warningsPage->setFile(file);
    m_tabs->setTabText(WarningsTab, warnings ? tr("Warnings (%1)").arg(warnings) : tr("Warnings"));
    const bool dangerous = file && (file->imports().anyDangerous() || file->imports().structuralDanger);
    m_tabs->setTabIcon(ImportsTab, dangerous ? style()->standardIcon(QStyle::SP_MessageBoxWarning) : QIcon());

    m_headerIsError = false;
    if (row < 0 || row >= m_files->rowCount()) {
        m_header->clear();
        setWindowTitle(tr("Checkpoint Inspector"));
    } else {
        const QString path = m_files->data(m_files->index(row), FileListModel::PathRole).toString();
        const QString name = QFileInfo(path).fileName();
        const QString detail = m_files->data(m_files->index(row), FileListModel::DetailRole).toString();
        if (m_files->stateAt(row) == FileListModel::State::Failed) {
            m_header->setText(tr("%1 could not be read: %2").arg(path, detail));
            m_headerIsError = true;
        } else {
            m_header->setText(path + QStringLiteral("  —  ") + detail);
        }
        setWindowTitle(name + QStringLiteral(" — ") + tr("Checkpoint Inspector"));
    }
    updateHeaderColour();
}

void MainWindow::updateHeaderColour()
{
    QPalette palette = m_header->palette();
    palette.setColor(QPalette::WindowText, m_headerIsError ? warningColor(this->palette()) : this->palette().color(QPalette::WindowText));
    m_header->setPalette(palette);
}

void MainWindow::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange)
        updateHeaderColour();
    QMainWindow::changeEvent(event);
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (m_settings == Settings::Use) {
        QSettings settingsStore;
        settingsStore.setValue(geometryKey(), saveGeometry());
        settingsStore.setValue(stateKey(), saveState());
    }
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (!localPaths(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QStringList paths = localPaths(event->mimeData());
    if (paths.isEmpty())
        return;
    event->acceptProposedAction();
    openPaths(paths);
}
