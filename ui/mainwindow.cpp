// SPDX-License-Identifier: MIT
#include "ui/mainwindow.h"
#include "ui/backgroundpriority.h"
#include "ui/reporthtml.h"

#include "ui/checkpointloader.h"
#include "ui/checkpointview.h"
#include "ui/compareview.h"
#include "ui/errorpanel.h"
#include "ui/findingspanel.h"
#include "ui/jobstatus.h"
#include "ui/models/runbrowsermodel.h"
#include "ui/recentfiles.h"
#include "ui/runbrowser.h"
#include "ui/runloader.h"
#include "ui/textformat.h"
#include "ui/validationpanel.h"

#include <QAction>
#include <QActionGroup>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QtConcurrent>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMimeData>
#include <QScrollArea>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QTreeView>

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

// The job id of reading and auditing runs in the status bar's job indicator.
QString runsJob()
{
    return QStringLiteral("runs");
}

QString cleanAbsolute(const QString& path)
{
    return QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

} // namespace

MainWindow::MainWindow(Settings settings, QWidget* parent)
    : QMainWindow(parent)
    , m_settings(settings)
    , m_loader(new RunLoader(this))
    , m_runs(new RunBrowserModel(this))
    , m_findingsTimer(new QTimer(this))
{
    setWindowTitle(tr("Checkpoint Inspector"));
    setAcceptDrops(true);

    m_checkpointView = new CheckpointView;
    m_compareView = new CompareView;
    m_centre = new QStackedWidget;
    m_centre->addWidget(m_checkpointView);
    m_centre->addWidget(m_compareView);
    setCentralWidget(m_centre);

    m_findingsTimer->setSingleShot(true);
    m_findingsTimer->setInterval(50);
    connect(m_findingsTimer, &QTimer::timeout, this, &MainWindow::rebuildFindings);

    createDocks();
    createMenus();
    createStatusBar();
    connectLoader();

    resize(1400, 860);
    if (m_settings == Settings::Use) {
        const QSettings store;
        restoreGeometry(store.value(geometryKey()).toByteArray());
        // the dock sizes of the last session are the user's: the findings dock is not fitted over them
        if (restoreState(store.value(stateKey()).toByteArray()))
            m_findingsHeightSet = kFindingsHeightUsers;
    }
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks()
{
    m_browser = new RunBrowser(m_runs);
    auto* runs = new QDockWidget(tr("Runs"), this);
    runs->setObjectName(QStringLiteral("runsDock"));
    runs->setWidget(m_browser);
    addDockWidget(Qt::LeftDockWidgetArea, runs);
    resizeDocks({runs}, {560}, Qt::Horizontal); // names, step, marks and the findings badge uncut
    connect(m_browser, &RunBrowser::checkpointSelected, this, [this](int runId, int index) {
        const RunDataPtr run = m_runs->run(runId);
        m_checkpointView->setCheckpoint(run, index);
        if (run && index >= 0 && std::size_t(index) < run->checkpoints.size())
            m_validation->setCheckpoint(QString::fromStdString(run->checkpoints[std::size_t(index)].info.path));
        updateTitle();
    });
    connect(m_browser, &RunBrowser::compareRequested, this, [this](int runA, int indexA, int runB, int indexB) {
        m_compareView->compare(runA, indexA, runB, indexB);
        setMode(Mode::Compare);
    });
    connect(m_browser, &RunBrowser::closeRunRequested, this, &MainWindow::closeRun);
    // Comparing, the browser shows where A is (and the Inspect view then shows A).
    connect(m_compareView, &CompareView::checkpointAChosen, this, [this](int runId, int index) {
        if (mode() == Mode::Compare)
            m_browser->revealCheckpoint(runId, index);
    });

    m_findings = new FindingsPanel;
    auto* findings = new QDockWidget(tr("Findings"), this);
    m_findingsDock = findings;
    findings->setObjectName(QStringLiteral("findingsDock"));
    findings->setWidget(m_findings);
    addDockWidget(Qt::BottomDockWidgetArea, findings);
    connect(m_findings, &FindingsPanel::findingActivated, this, &MainWindow::jumpTo);
    connect(m_findings, &FindingsPanel::groupActivated, m_browser, &RunBrowser::selectAlso);

    // Resume validation replays the next update in a separate process (ckpt-validate), so it
    // sits beside the findings rather than in the checkpoint view: it is an action, not a view.
    m_validation = new ValidationPanel;
    auto* validation = new QDockWidget(tr("Resume validation"), this);
    validation->setObjectName(QStringLiteral("validationDock"));
    // in a scroll area: the panel's form and report need ~300 px, which would otherwise be the
    // least height of the whole bottom dock area (both docks are tabbed together)
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_validation);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    validation->setWidget(scroll);
    addDockWidget(Qt::BottomDockWidgetArea, validation);
    tabifyDockWidget(findings, validation);
    findings->raise();
}

void MainWindow::createMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open file…"), QKeySequence::Open, this, &MainWindow::openFileDialog);
    file->addAction(tr("Open &folder (checkpoint or run)…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this,
                    &MainWindow::openFolderDialog);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    file->addAction(tr("&Close run"), QKeySequence::Close, this, [this] {
        if (m_checkpointView->runId())
            closeRun(m_checkpointView->runId());
    });
    file->addSeparator();
    file->addAction(tr("&Export report…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] {
        const RunDataPtr run = m_runs->run(m_checkpointView->runId());
        if (!run)
            return;
        const QString file = QFileDialog::getSaveFileName(this, tr("Export report"), run->name.section(QLatin1Char('/'), -1) + QStringLiteral("-report.html"),
                                                          tr("HTML (*.html)"));
        if (!file.isEmpty())
            exportReport(run->path, file);
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    auto* modes = new QActionGroup(this);
    m_inspectAction = view->addAction(tr("&Inspect checkpoint"), QKeySequence(Qt::CTRL | Qt::Key_1), this, [this] { setMode(Mode::Inspect); });
    m_compareAction = view->addAction(tr("&Compare two checkpoints"), QKeySequence(Qt::CTRL | Qt::Key_2), this, [this] { setMode(Mode::Compare); });
    for (QAction* action : {m_inspectAction, m_compareAction}) {
        action->setCheckable(true);
        modes->addAction(action);
    }
    m_inspectAction->setChecked(true);
    view->addSeparator();
    // Find: the shown tab's name filter, or the findings' filters where the tab has none.
    view->addAction(tr("&Find / filter"), QKeySequence::Find, this, [this] {
        if (mode() == Mode::Compare || !m_checkpointView->focusFilter())
            m_findings->severityFilter()->setFocus(Qt::ShortcutFocusReason);
    });
    view->addAction(tr("Go to &checkpoint tabs"), QKeySequence(Qt::ALT | Qt::Key_3), this, [this] {
        setMode(Mode::Inspect);
        m_checkpointView->tabs()->tabBar()->setFocus(Qt::ShortcutFocusReason);
    });
    view->addAction(tr("Go to run &browser"), QKeySequence(Qt::ALT | Qt::Key_1), this, [this] { m_browser->view()->setFocus(); });
    view->addAction(tr("Go to &findings"), QKeySequence(Qt::ALT | Qt::Key_2), this, [this] { m_findings->setFocus(); });
    view->addAction(tr("Cancel background work"), QKeySequence(Qt::Key_Escape), this, &MainWindow::cancelBackgroundWork);
    view->addSeparator();
    for (QDockWidget* dock : findChildren<QDockWidget*>())
        view->addAction(dock->toggleViewAction());
}

void MainWindow::createStatusBar()
{
    m_statusLabel = new QLabel;
    m_job = new JobStatus;
    statusBar()->addWidget(m_statusLabel, 1);
    statusBar()->addPermanentWidget(m_job);
    connect(m_job, &JobStatus::cancelRequested, this, &MainWindow::cancelBackgroundWork);
    connect(m_checkpointView, &CheckpointView::jobProgress, m_job, &JobStatus::setProgress);
    connect(m_checkpointView, &CheckpointView::jobFinished, m_job, &JobStatus::finish);
    // a resume band of the timeline: both sides in the compare view, the first differing part selected
    connect(m_checkpointView, &CheckpointView::compareRequested, this,
            [this](const QString& before, const QString& after, const QString& component) {
                if (compareByPath(before, after) && !component.isEmpty())
                    m_compareView->selectComponent(component);
            });
}

void MainWindow::connectLoader()
{
    connect(m_loader, &RunLoader::runAvailable, this, &MainWindow::onRunAvailable);
    connect(m_loader, &RunLoader::openFailed, this, [this](const QString& path, const QString& reason) {
        m_browser->errors()->addError(path, reason);
    });
    connect(m_loader, &RunLoader::stateAvailable, this,
            [this](int runId, int index, const std::shared_ptr<const ckpt::TrainingState>& state, const QString& error,
                   const std::vector<std::pair<std::string, uint64_t>>& sizes) {
                m_runs->applyState(runId, index, state, error, sizes);
                onRunChanged(runId, index);
            });
    connect(m_loader, &RunLoader::auditAvailable, this,
            [this](int runId, const std::shared_ptr<PlacedFindings>& findings, const QString& note) {
                m_runs->applyAudit(runId, findings.get(), note);
                onRunChanged(runId, -1);
            });
    connect(m_loader, &RunLoader::progress, this, [this](int done, int total, const QString& what) {
        m_job->setProgress(runsJob(), done, total, what);
    });
    connect(m_loader, &RunLoader::idle, this, &MainWindow::onIdle);
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = m_settings == Settings::Use ? RecentFiles::load() : QStringList();
    for (const QString& path : recent)
        m_recentMenu->addAction(path, this, [this, path] { openPaths({path}); });
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
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a checkpoint folder, a run, or a folder of runs"));
    if (!dir.isEmpty())
        openPaths({dir});
}

void MainWindow::openPaths(const QStringList& paths)
{
    if (m_settings == Settings::Use) {
        for (const QString& path : paths)
            RecentFiles::add(path);
    }
    m_statusLabel->setText(tr("Opening %1…").arg(paths.join(QStringLiteral(", "))));
    m_loader->open(paths, m_runs->runPaths());
}

bool MainWindow::isBusy() const
{
    return m_loader->isBusy() || m_checkpointView->isLoading() || m_findingsTimer->isActive();
}

void MainWindow::cancelBackgroundWork()
{
    if (m_reportCancel)
        *m_reportCancel = true;
    m_checkpointView->cancelBackgroundWork();
    if (!m_loader->isBusy())
        return;
    m_loader->cancel();
    m_statusLabel->setText(tr("Cancelled: checkpoints not read yet keep “…” in the Findings column; reopen the run to read them."));
}

void MainWindow::closeRun(int runId)
{
    m_loader->forget(runId); // its late results are dropped
    const bool shown = m_checkpointView->runId() == runId;
    m_runs->removeRun(runId);
    m_compareView->setRuns(m_runs->runs());
    if (shown) {
        m_checkpointView->setCheckpoint(nullptr, -1);
        if (!m_runs->runs().empty())
            showCheckpoint(m_runs->runs().front()->id, m_runs->runs().front()->latestIndex());
    }
    rebuildFindings();
    updateTitle();
}

void MainWindow::onRunAvailable(const RunDataPtr& run)
{
    m_runs->addRun(run);
    m_compareView->setRuns(m_runs->runs());
    if (m_checkpointView->runId() == 0)
        showCheckpoint(run->id, run->latestIndex()); // the first run to arrive shows what a resume would load
    if (m_pendingCompare.size() == 2 && compareByPath(m_pendingCompare[0], m_pendingCompare[1]))
        m_pendingCompare.clear();
    m_findingsTimer->start();
}

void MainWindow::onRunChanged(int runId, int index)
{
    // Only the shown checkpoint's page is rebuilt: a run of 100 reports 100 states.
    if (m_checkpointView->runId() == runId && (index < 0 || index == m_checkpointView->checkpointIndex()))
        m_checkpointView->setCheckpoint(m_runs->run(runId), m_checkpointView->checkpointIndex());
    if (m_centre->currentWidget() == m_compareView)
        m_compareView->refresh();
    if (!m_findingsTimer->isActive())
        m_findingsTimer->start();
}

void MainWindow::onIdle()
{
    m_job->finish(runsJob());
    m_compareView->setRuns(m_runs->runs()); // steps read from the states replace the names' steps
    // In an event of its own: the audit that ends the loading has just been applied in this one.
    m_findingsTimer->start();
    int checkpoints = 0, errors = 0;
    for (const RunDataPtr& run : m_runs->runs()) {
        checkpoints += static_cast<int>(run->checkpoints.size());
        for (const RunCheckpointData& checkpoint : run->checkpoints)
            errors += checkpoint.worstSeverity() == static_cast<int>(ckpt::Severity::Error);
    }
    const int failed = m_browser->errors()->count();
    QString text = tr("%n run(s), ", nullptr, static_cast<int>(m_runs->runs().size())) + tr("%n checkpoint(s)", nullptr, checkpoints);
    if (errors)
        text += tr("; %n with errors", nullptr, errors);
    if (failed)
        text += tr("; %n path(s) could not be opened", nullptr, failed);
    m_statusLabel->setText(text + QLatin1Char('.'));
    emit loadsFinished();
}

void MainWindow::rebuildFindings()
{
    std::vector<FindingRow> rows;
    for (const RunDataPtr& run : m_runs->runs()) {
        const QString folder = run->folder(); // a stat(): once per run, not once per finding
        for (const ckpt::Finding& finding : run->runFindings)
            rows.push_back({run->id, -1, QString(), finding, folder});
        for (std::size_t i = 0; i < run->checkpoints.size(); ++i) {
            const QString name = run->singleCheckpoint ? run->name
                                                       : run->name + QLatin1Char('/') + QFileInfo(fromUtf8(run->checkpoints[i].info.path)).fileName();
            for (const ckpt::Finding& finding : run->checkpoints[i].findings)
                rows.push_back({run->id, static_cast<int>(i), name, finding, folder});
        }
    }
    m_findings->setFindings(std::move(rows));
    fitFindingsDock();
}

void MainWindow::exportReport(const QString& path, const QString& file)
{
    if (m_reportCancel)
        *m_reportCancel = true; // one report at a time: the newest wins
    auto cancel = std::make_shared<std::atomic_bool>(false);
    m_reportCancel = cancel;
    const QString job = QStringLiteral("report");
    m_job->setProgress(job, 0, 0, tr("Reading and checking %1 for the report").arg(QFileInfo(path).fileName()));
    auto* watcher = new QFutureWatcher<std::shared_ptr<ckpt::RunReport>>(this);
    connect(watcher, &QFutureWatcher<std::shared_ptr<ckpt::RunReport>>::finished, this, [this, watcher, cancel, file, job] {
        watcher->deleteLater();
        m_job->finish(job);
        if (m_reportCancel == cancel)
            m_reportCancel = nullptr;
        std::shared_ptr<ckpt::RunReport> report;
        QString error;
        try {
            report = watcher->result();
        } catch (const std::exception& e) {
            error = fromUtf8(e.what());
        }
        if (*cancel || (report && report->check.cancelled))
            error = tr("cancelled");
        if (error.isEmpty()) {
            QFile out(file);
            const QByteArray html = renderReportHtml(*report, palette()).toUtf8();
            if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) || out.write(html) != html.size() || !out.flush())
                error = tr("cannot write %1: %2").arg(file, out.errorString());
        }
        m_statusLabel->setText(error.isEmpty() ? tr("Report written to %1").arg(QDir::toNativeSeparators(file))
                                               : tr("No report: %1").arg(error));
        emit reportExported(file, error);
    });
    watcher->setFuture(QtConcurrent::run([path, cancel] {
        lowerThreadPriority();
        return std::make_shared<ckpt::RunReport>(buildReportForExport(path, [cancel] { return !*cancel; }));
    }));
}

void MainWindow::fitFindingsDock()
{
    if (!m_findingsDock || m_findingsDock->isFloating() || !m_findingsDock->isVisible())
        return;
    if (m_findingsHeightSet == kFindingsHeightUsers
        || (m_findingsHeightSet >= 0 && std::abs(m_findingsDock->height() - m_findingsHeightSet) > 4)) {
        m_findingsHeightSet = kFindingsHeightUsers; // dragged by the user, or restored: theirs from now on
        return;
    }
    QTreeView* view = m_findings->view();
    const int rows = std::clamp(view->model() ? view->model()->rowCount() : 0, 2, 8);
    const int rowHeight = view->fontMetrics().height() + 6; // as the other tables' rows
    // the dock's title and tab bar, the panel's filter row, the table's header and rows
    const int chrome = m_findingsDock->height() - view->viewport()->height();
    const int wanted = chrome + rows * rowHeight + rowHeight / 2;
    resizeDocks({m_findingsDock}, {wanted}, Qt::Vertical);
    m_findingsHeightSet = m_findingsDock->height();
}

void MainWindow::jumpTo(const FindingRow& row)
{
    const RunDataPtr run = m_runs->run(row.runId);
    if (!run)
        return;
    setMode(Mode::Inspect);
    showCheckpoint(row.runId, row.checkpointIndex >= 0 ? row.checkpointIndex : run->latestIndex());
    if (row.checkpointIndex >= 0)
        m_checkpointView->reveal(row.finding);
}

void MainWindow::showCheckpoint(int runId, int index)
{
    m_browser->selectCheckpoint(runId, index); // shows it through RunBrowser::checkpointSelected
    if (m_checkpointView->runId() != runId || m_checkpointView->checkpointIndex() != index)
        m_checkpointView->setCheckpoint(m_runs->run(runId), index);
    updateTitle();
}

QStringList MainWindow::tabNames()
{
    return CheckpointView::tabNames();
}

bool MainWindow::selectTab(const QString& name)
{
    if (!m_checkpointView->selectTab(name))
        return false;
    setMode(Mode::Inspect);
    return true;
}

void MainWindow::setMode(Mode mode)
{
    if (mode == Mode::Compare && m_centre->currentWidget() != m_compareView) {
        m_compareView->setRuns(m_runs->runs());
        if (m_compareView->chooserA()->currentIndex() == m_compareView->chooserB()->currentIndex() && m_checkpointView->runId())
            m_compareView->compareDefault(m_checkpointView->runId());
        m_compareView->refresh();
    }
    const bool entering = mode == Mode::Compare && m_centre->currentWidget() != m_compareView;
    m_centre->setCurrentWidget(mode == Mode::Compare ? static_cast<QWidget*>(m_compareView) : m_checkpointView);
    int runA = 0, indexA = 0;
    if (entering && m_compareView->chosenA(runA, indexA))
        m_browser->revealCheckpoint(runA, indexA);
    (mode == Mode::Compare ? m_compareAction : m_inspectAction)->setChecked(true);
    updateTitle();
}

MainWindow::Mode MainWindow::mode() const
{
    return m_centre->currentWidget() == m_compareView ? Mode::Compare : Mode::Inspect;
}

bool MainWindow::compareByPath(const QString& pathA, const QString& pathB)
{
    m_pendingCompare = {pathA, pathB};
    int runs[2] = {0, 0}, indexes[2] = {-1, -1};
    for (int side = 0; side < 2; ++side) {
        const QString wanted = cleanAbsolute(m_pendingCompare[side]);
        for (const RunDataPtr& run : m_runs->runs()) {
            for (std::size_t i = 0; i < run->checkpoints.size(); ++i) {
                if (cleanAbsolute(fromUtf8(run->checkpoints[i].info.path)) == wanted) {
                    runs[side] = run->id;
                    indexes[side] = static_cast<int>(i);
                }
            }
        }
    }
    if (indexes[0] < 0 || indexes[1] < 0)
        return false;
    m_pendingCompare.clear();
    m_compareView->setRuns(m_runs->runs());
    m_compareView->compare(runs[0], indexes[0], runs[1], indexes[1]);
    setMode(Mode::Compare);
    return true;
}

void MainWindow::updateTitle()
{
    const RunDataPtr run = m_runs->run(m_checkpointView->runId());
    if (mode() == Mode::Compare)
        setWindowTitle(tr("Compare — Checkpoint Inspector"));
    else if (run)
        setWindowTitle(run->name + QStringLiteral(" — ") + tr("Checkpoint Inspector"));
    else
        setWindowTitle(tr("Checkpoint Inspector"));
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (m_settings == Settings::Use) {
        QSettings store;
        store.setValue(geometryKey(), saveGeometry());
        store.setValue(stateKey(), saveState());
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
