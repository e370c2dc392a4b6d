// SPDX-License-Identifier: MIT
// Offscreen smoke test of the whole window on the checked-in sample runs: every run opened at
// once, every run's latest checkpoint in every tab, the compare view, the findings dock and its
// jumps, an unreadable file in a run, a path that does not exist, cancel, copy, keyboard and
// drag and drop. It asserts what the models and widgets hold, with every model under
// QAbstractItemModelTester from the start.
#include "uitestutil.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ui/checkpointview.h"
#include "ui/compareview.h"
#include "ui/copyaction.h"
#include "ui/errorpanel.h"
#include "ui/findingspanel.h"
#include "ui/importspage.h"
#include "ui/jobstatus.h"
#include "ui/mainwindow.h"
#include "ui/models/checkpointfilesmodel.h"
#include "ui/models/comparisonmodel.h"
#include "ui/models/findingsproxymodel.h"
#include "ui/models/importsmodel.h"
#include "ui/models/objecttreemodel.h"
#include "ui/models/runbrowsermodel.h"
#include "ui/models/statefieldsmodel.h"
#include "ui/models/tensordiffmodel.h"
#include "ui/overviewpage.h"
#include "ui/pages/checkpointtensorspage.h"
#include "ui/pages/copytableview.h"
#include "ui/pages/momentstatemodel.h"
#include "ui/pages/optimizerpage.h"
#include "ui/pages/rngpage.h"
#include "ui/pages/schedulepage.h"
#include "ui/pages/tensorlistmodel.h"
#include "ui/rawpage.h"
#include "ui/recentfiles.h"
#include "ui/runbrowser.h"
#include "ui/treepage.h"
#include "ui/validationpanel.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDockWidget>
#include <QLineEdit>
#include <QSet>
#include <QSettings>
#include <QTabBar>
#include <QDir>
#include <QComboBox>
#include <QLabel>
#include <QListWidget>
#include <QMimeData>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeView>
#include <QUrl>

#include <algorithm>
#include <memory>
#include <vector>

namespace {

QString samples(const char* relative = "")
{
    return QDir::cleanPath(QStringLiteral(CKPT_SAMPLE_RUNS "/") + QLatin1String(relative));
}

bool copyTree(const QString& from, const QString& to)
{
    QDir().mkpath(to);
    const QDir source(from);
    for (const QFileInfo& entry : source.entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QString target = to + QLatin1Char('/') + entry.fileName();
        if (entry.isDir() ? !copyTree(entry.filePath(), target) : !QFile::copy(entry.filePath(), target))
            return false;
    }
    return true;
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<MainWindow> m_window;
    std::vector<std::unique_ptr<QAbstractItemModelTester>> m_testers;

    RunDataPtr runNamed(const QString& name) const
    {
        for (const RunDataPtr& run : m_window->runModel()->runs()) {
            if (run->name == name)
                return run;
        }
        return nullptr;
    }

    void waitIdle()
    {
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isBusy(), 30000);
    }

    QString shownPath() const
    {
        const CheckpointView* view = m_window->checkpointView();
        const RunDataPtr run = m_window->runModel()->run(view->runId());
        return run ? QString::fromStdString(run->checkpoints[std::size_t(view->checkpointIndex())].info.path) : QString();
    }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        m_window = std::make_unique<MainWindow>(MainWindow::Settings::Ignore);
        CheckpointView* view = m_window->checkpointView();
        CompareView* compare = m_window->compareView();
        for (QAbstractItemModel* model : std::initializer_list<QAbstractItemModel*>{
                 m_window->runModel(), m_window->findingsPanel()->model(), m_window->findingsPanel()->proxy(),
                 view->overviewPage()->filesModel(), view->overviewPage()->fieldsModel(), view->overviewPage()->findingsModel(),
                 view->tensorsPage()->model(), view->tensorsPage()->proxy(), view->rawPage()->treePage()->model(),
                 view->rawPage()->importsPage()->model(), compare->comparisonModel(), compare->tensorModel(),
                 compare->pairFindingsModel()})
            m_testers.push_back(std::make_unique<QAbstractItemModelTester>(model));
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }

    void cleanupTestCase()
    {
        m_window.reset();
        m_testers.clear();
    }

    void opensEverySampleRun()
    {
        QSignalSpy finished(m_window.get(), &MainWindow::loadsFinished);
        // As packaging/setup.sh run does: the 4-rank run first, then the whole folder (ddp4-mlp once).
        m_window->openPaths({samples("ddp4-mlp"), samples()});
        QVERIFY(m_window->isBusy());
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 1, 30000);
        waitIdle();
        QVERIFY(!m_window->jobStatus()->isVisible());

        RunBrowserModel* runs = m_window->runModel();
        QCOMPARE(runs->rowCount(), 16);
        QCOMPARE(runs->index(0, RunBrowserModel::Name).data().toString(), QStringLiteral("ddp4-mlp"));
        QVERIFY(runNamed(QStringLiteral("broken/data-cursor-wrong"))); // named below the folder opened
        QVERIFY(!m_window->runBrowser()->errors()->isVisible());
        // What a resume would load is shown first: ddp4-mlp's latest.
        QCOMPARE(shownPath(), samples("ddp4-mlp/checkpoint-0000300"));
        QVERIFY(m_window->windowTitle().startsWith(QStringLiteral("ddp4-mlp")));
        // Every checkpoint of every run has been read (no "…" left) and the audits have arrived.
        for (int row = 0; row < runs->rowCount(); ++row) {
            const QModelIndex run = runs->index(row, 0);
            for (int c = 0; c < runs->rowCount(run); ++c)
                QVERIFY(runs->index(c, RunBrowserModel::Findings, run).data().toString() != QStringLiteral("…"));
        }
        const RunDataPtr incomplete = runNamed(QStringLiteral("broken/no-complete-marker"));
        QVERIFY(incomplete);
        const QModelIndex marks = runs->index(1, RunBrowserModel::Marks, runs->runIndex(incomplete->id));
        QCOMPARE(marks.data().toString(), QStringLiteral("latest · incomplete"));
        QCOMPARE(marks.sibling(1, RunBrowserModel::Findings).data(RunBrowserModel::WorstSeverityRole).toInt(), int(ckpt::Severity::Error));
        const RunDataPtr hf = runNamed(QStringLiteral("hf-trainer"));
        QVERIFY(hf);
        QCOMPARE(runs->index(2, RunBrowserModel::Marks, runs->runIndex(hf->id)).data().toString(), QStringLiteral("latest · best"));
    }

    void everyRunInEveryTab()
    {
        CheckpointView* view = m_window->checkpointView();
        QCOMPARE(view->tabs()->count(), int(CheckpointView::TabCount));
        for (const RunDataPtr& run : m_window->runModel()->runs()) {
            m_window->showCheckpoint(run->id, run->latestIndex());
            waitIdle();
            const QString what = run->name;
            OverviewPage* overview = view->overviewPage();
            QVERIFY2(overview->summaryLabel()->text().contains(QStringLiteral("step")), qPrintable(what));
            QVERIFY2(overview->filesModel()->rowCount() > 0, qPrintable(what));
            QCOMPARE(overview->fieldsModel()->rowCount(), 3);
            // DCP folders hold .distcp chunks and .metadata, no file the Raw tab opens.
            QVERIFY2(view->fileChooser()->count() > 0 || what.startsWith(QStringLiteral("dcp")), qPrintable(what));
            if (view->errors()->count() > 0)
                QFAIL(qPrintable(what + QStringLiteral(": ") + view->errors()->list()->item(0)->text()));
            for (const QString& tab : MainWindow::tabNames()) {
                QVERIFY(m_window->selectTab(tab));
                QCOMPARE(view->tabs()->currentIndex(), int(MainWindow::tabNames().indexOf(tab)));
            }
            waitIdle(); // a data page is filled when its tab is first shown
            // Raw shows the chosen file's object tree (the model file is chosen first); Tensors every tensor.
            QCOMPARE(view->rawPage()->treePage()->model()->rowCount(), view->fileChooser()->count() > 0 ? 1 : 0);
            QVERIFY2(view->tensorsPage()->model()->rowCount() > 0, qPrintable(what));
        }
        QVERIFY(!m_window->selectTab(QStringLiteral("plots")));
    }

    void ddp4CheckpointInDetail()
    {
        const RunDataPtr run = runNamed(QStringLiteral("ddp4-mlp"));
        QVERIFY(run);
        m_window->showCheckpoint(run->id, 1);
        waitIdle();
        // The resume-validation dock follows the selection: it would replay the update after this one.
        QCOMPARE(QDir(m_window->validationPanel()->checkpoint()).canonicalPath(),
                 QDir(samples("ddp4-mlp/checkpoint-0000200")).canonicalPath());
        QCOMPARE(m_window->validationPanel()->state(), ValidationPanel::State::Idle);
        CheckpointView* view = m_window->checkpointView();
        QCOMPARE(view->overviewPage()->filesModel()->rowCount(), 8); // COMPLETE, manifest, model, optimizer, 4 RNG files
        const int model = view->overviewPage()->filesModel()->rowOfPath(samples("ddp4-mlp/checkpoint-0000200/model.pt"));
        QVERIFY(model >= 0);
        QCOMPARE(view->overviewPage()->filesModel()->index(model, CheckpointFilesModel::Audit).data().toString(),
                 QStringLiteral("verified (size, sha256)"));
        QCOMPARE(view->fileChooser()->count(), 6);
        QCOMPARE(view->fileChooser()->currentText(), QStringLiteral("model.pt"));
        // The data pages are filled when their tab is shown, not before.
        QVERIFY(m_window->selectTab(QStringLiteral("overview")));
        m_window->showCheckpoint(run->id, 0);
        m_window->showCheckpoint(run->id, 1);
        waitIdle();
        QVERIFY(!view->tensorsPage()->isBusy() && !view->tensorsPage()->isComputingStats());
        QVERIFY(m_window->selectTab(QStringLiteral("tensors")));
        waitIdle();
        QVERIFY(view->tensorsPage()->model()->rowCount() >= 6); // the model's 6, then the optimizer's moments
        for (const TensorRow& row : view->tensorsPage()->model()->tensors())
            QVERIFY2(row.stats != nullptr, qPrintable(row.name)); // statistics computed once shown
        QVERIFY(m_window->selectTab(QStringLiteral("optimizer")));
        waitIdle();
        QVERIFY(view->optimizerPage()->momentsModel()->rowCount() > 0);
        QCOMPARE(view->optimizerPage()->history().steps.size(), std::size_t(3)); // moments across the run
        QVERIFY(m_window->selectTab(QStringLiteral("rng")));
        QVERIFY(!view->rngPage()->summaryText().isEmpty());
        QVERIFY(m_window->selectTab(QStringLiteral("overview")));
        view->fileChooser()->setCurrentIndex(view->fileChooser()->findText(QStringLiteral("optimizer.pt")));
        QVERIFY(m_window->selectTab(QStringLiteral("raw"))); // the Raw tab is filled when it is shown
        QCOMPARE(view->rawPage()->treePage()->model()->index(0, 0).data().toString(), QStringLiteral("optimizer.pt"));
        QVERIFY(view->rawPage()->importsPage()->model()->rowCount() > 0);
        // The global step the fields show is the one the browser shows.
        const QModelIndex progress = view->overviewPage()->fieldsModel()->index(0, 0);
        QCOMPARE(progress.data().toString(), QStringLiteral("Progress counters (C)"));
        QStringList counters;
        for (int r = 0; r < view->overviewPage()->fieldsModel()->rowCount(progress); ++r)
            counters.append(view->overviewPage()->fieldsModel()->index(r, StateFieldsModel::Value, progress).data().toString());
        QVERIFY(counters.contains(QStringLiteral("200")));
        // A field saved in several files (epoch in manifest.json and optimizer.pt, sampler.* once
        // per rank) says which file each value is from, as the compare view does.
        StateFieldsModel* fields = view->overviewPage()->fieldsModel();
        QStringList names;
        for (int section = 0; section < fields->rowCount(); ++section) {
            QSet<QString> seen;
            const QModelIndex parent = fields->index(section, 0);
            for (int r = 0; r < fields->rowCount(parent); ++r) {
                const QString name = fields->index(r, StateFieldsModel::Name, parent).data().toString();
                QVERIFY2(!seen.contains(name), qPrintable(name));
                seen.insert(name);
                names.append(name);
            }
        }
        QVERIFY2(names.contains(QStringLiteral("epoch (manifest.json)")), qPrintable(names.join(QLatin1Char(','))));
        QVERIFY(names.contains(QStringLiteral("epoch (optimizer.pt)")));
        QVERIFY(names.contains(QStringLiteral("data.sampler_seed")) || names.contains(QStringLiteral("data.sampler_seed (manifest.json)")));
        QVERIFY(std::any_of(names.begin(), names.end(), [](const QString& n) { return n.endsWith(QStringLiteral("(rng-rank-3.pt)")); }));
    }

    void compareDefaultsAndByPath()
    {
        const RunDataPtr run = runNamed(QStringLiteral("ddp4-mlp"));
        m_window->showCheckpoint(run->id, 2);
        m_window->setMode(MainWindow::Mode::Compare);
        CompareView* compare = m_window->compareView();
        // ddp4-mlp names no best checkpoint: the one before latest against latest.
        QCOMPARE(compare->chooserA()->currentText(), QStringLiteral("ddp4-mlp / checkpoint-0000200  (step 200)"));
        QCOMPARE(compare->chooserB()->currentText(), QStringLiteral("ddp4-mlp / checkpoint-0000300  (step 300)"));
        QCOMPARE(compare->comparisonModel()->rowCount(), 8); // C, D, L, A, O, R, W, E
        QVERIFY(compare->tensorModel()->rowCount() >= 6); // 6 model keys; with the values, optimizer moments too
        // Only notes (the scaler's skipped updates): nothing wrong between 200 and 300.
        for (int row = 0; row < compare->pairFindingsModel()->rowCount(); ++row)
            QCOMPARE(compare->pairFindingsModel()->index(row, FindingsModel::Severity).data().toString(), QStringLiteral("info"));
        QVERIFY2(compare->summaryLabel()->text().startsWith(QStringLiteral("A: step 200 · B: step 300")), qPrintable(compare->summaryLabel()->text()));

        // The values follow from the background: every weight moved between steps 200 and 300.
        QSignalSpy diffed(compare, &CompareView::tensorDiffAvailable);
        QVERIFY(compare->tensorDiff() || diffed.wait(60000));
        TensorDiffModel* tensors = compare->tensorModel();
        QVERIFY(tensors->hasValues());
        QVERIFY2(tensors->rowCount() > 6, "model tensors and optimizer moments");
        int changedWeights = 0;
        for (int row = 0; row < tensors->rowCount(); ++row) {
            const QString name = tensors->index(row, TensorDiffModel::Tensor).data().toString();
            if (!name.endsWith(QStringLiteral(".weight")) || name.contains(QStringLiteral("exp_avg")))
                continue;
            QCOMPARE(tensors->index(row, TensorDiffModel::Status).data().toString(), QStringLiteral("changed"));
            bool ok = false;
            QVERIFY(tensors->index(row, TensorDiffModel::MaxAbsDiff).data().toString().toDouble(&ok) > 0 && ok);
            const double cosine = tensors->index(row, TensorDiffModel::Cosine).data().toString().toDouble(&ok);
            QVERIFY(ok && cosine > 0 && cosine <= 1.0 + 1e-12);
            ++changedWeights;
        }
        QCOMPARE(changedWeights, 3);

        // hf-trainer names a best: best (60) is also latest, so the one before it.
        QVERIFY(m_window->compareByPath(samples("broken/scheduler-stepped-twice/checkpoint-0000200"),
                                        samples("broken/scheduler-stepped-twice/checkpoint-0000300")));
        QCOMPARE(m_window->mode(), MainWindow::Mode::Compare);
        FindingsModel* pair = compare->pairFindingsModel();
        QVERIFY(pair->rowCount() >= 1);
        QCOMPARE(pair->index(0, FindingsModel::Rule).data().toString(), QStringLiteral("compare.inconsistent"));
        QVERIFY(pair->index(0, FindingsModel::Message).data().toString().contains(QStringLiteral("advanced 200 positions")));
        // The pair findings show paths as the Findings dock does: from the run's folder, whole in the tooltip.
        QVERIFY(m_window->compareByPath(samples("broken/hash-mismatch/checkpoint-0000200"), samples("broken/hash-mismatch/checkpoint-0000300")));
        bool sawHashMismatch = false;
        for (int row = 0; row < pair->rowCount(); ++row) {
            const QModelIndex where = pair->index(row, FindingsModel::Where);
            QVERIFY2(!where.data().toString().startsWith(QLatin1Char('/')), qPrintable(where.data().toString()));
            if (pair->index(row, FindingsModel::Rule).data().toString() != QStringLiteral("integrity.hash-mismatch"))
                continue;
            sawHashMismatch = true;
            QCOMPARE(where.data().toString(), QStringLiteral("checkpoint-0000300/manifest.json: files.optimizer.pt.sha256"));
            QVERIFY(where.data(Qt::ToolTipRole).toString().contains(samples("broken/hash-mismatch/checkpoint-0000300/optimizer.pt")));
        }
        QVERIFY(sawHashMismatch);
        // The run browser shows where A is.
        const RunDataPtr hashMismatch = runNamed(QStringLiteral("broken/hash-mismatch"));
        QVERIFY(hashMismatch);
        QCOMPARE(m_window->runBrowser()->view()->currentIndex(), m_window->runModel()->checkpointIndex(hashMismatch->id, 0));
        const QModelIndex shownA = m_window->runModel()->checkpointIndex(hashMismatch->id, 0);
        QVERIFY(m_window->runBrowser()->view()->selectionModel()->isRowSelected(shownA.row(), shownA.parent()));
        compare->chooserA()->setCurrentIndex(compare->chooserA()->findText(QStringLiteral("ddp4-mlp / checkpoint-0000100  (step 100)")));
        QCOMPARE(m_window->runBrowser()->view()->currentIndex(), m_window->runModel()->checkpointIndex(run->id, 0));
        QVERIFY(!m_window->compareByPath(samples("ddp4-mlp/checkpoint-0000300"), samples("no/such/checkpoint")));

        // Any two by selection in the browser.
        RunBrowser* browser = m_window->runBrowser();
        const RunDataPtr tiny = runNamed(QStringLiteral("tiny-mlp"));
        QItemSelectionModel* selection = browser->view()->selectionModel();
        selection->clearSelection();
        selection->select(m_window->runModel()->checkpointIndex(tiny->id, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
        selection->select(m_window->runModel()->checkpointIndex(run->id, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
        int runA = 0, indexA = 0, runB = 0, indexB = 0;
        QVERIFY(browser->selectedPair(runA, indexA, runB, indexB));
        QCOMPARE(runA, run->id); // ddp4-mlp is above tiny-mlp in the browser
        QCOMPARE(runB, tiny->id);
        m_window->setMode(MainWindow::Mode::Inspect);
    }

    void findingsFilterAndJump()
    {
        FindingsPanel* panel = m_window->findingsPanel();
        QVERIFY(panel->model()->rowCount() > 0);
        // Worst first by default; paths from the run's folder, the full path in the tooltip.
        QAbstractItemModel* shown = panel->view()->model();
        QCOMPARE(shown->index(0, FindingsModel::Severity).data().toString(), QStringLiteral("error"));
        for (int row = 1; row < shown->rowCount(); ++row)
            QVERIFY(shown->index(row - 1, 0).data(FindingsModel::SeverityRole).toInt() >= shown->index(row, 0).data(FindingsModel::SeverityRole).toInt());
        bool sawHashMismatch = false;
        for (int row = 0; row < shown->rowCount(); ++row) {
            const QModelIndex where = shown->index(row, FindingsModel::Where);
            QVERIFY2(!where.data().toString().startsWith(QLatin1Char('/')), qPrintable(where.data().toString()));
            if (shown->index(row, FindingsModel::Rule).data().toString() != QStringLiteral("integrity.hash-mismatch"))
                continue;
            sawHashMismatch = true;
            QCOMPARE(where.data().toString(), QStringLiteral("checkpoint-0000300/manifest.json: files.optimizer.pt.sha256"));
            QVERIFY(where.data(Qt::ToolTipRole).toString().contains(samples("broken/hash-mismatch/checkpoint-0000300/optimizer.pt")));
        }
        QVERIFY(sawHashMismatch);
        // A group of several (the same finding at several checkpoints) selects all of them in the run
        // browser, its first current (issue 42).
        int group = -1;
        for (int row = 0; row < panel->proxy()->rowCount() && group < 0; ++row) {
            if (panel->proxy()->index(row, 0).data(FindingsModel::MemberCountRole).toInt() > 1
                && panel->proxy()->index(row, FindingsModel::Checkpoint).data().toString().contains(QStringLiteral("ddp4-mlp")))
                group = row;
        }
        QVERIFY2(group >= 0, "no group of several findings in ddp4-mlp");
        emit panel->view()->activated(panel->proxy()->index(group, FindingsModel::Message));
        const RunDataPtr ddp = runNamed(QStringLiteral("ddp4-mlp"));
        QItemSelectionModel* browserSelection = m_window->runBrowser()->view()->selectionModel();
        int selected = 0;
        for (std::size_t i = 0; i < ddp->checkpoints.size(); ++i) {
            const QModelIndex c = m_window->runModel()->checkpointIndex(ddp->id, int(i));
            selected += browserSelection->isRowSelected(c.row(), c.parent());
        }
        QCOMPARE(selected, panel->proxy()->index(group, 0).data(FindingsModel::MemberCountRole).toInt());
        QCOMPARE(m_window->runBrowser()->view()->currentIndex(), m_window->runModel()->checkpointIndex(ddp->id, 0));
        panel->severityFilter()->setCurrentIndex(panel->severityFilter()->findData(int(ckpt::Severity::Error)));
        FindingsProxyModel* proxy = panel->proxy();
        QVERIFY(proxy->rowCount() > 0);
        int hashMismatch = -1;
        for (int row = 0; row < proxy->rowCount(); ++row) {
            QCOMPARE(proxy->index(row, FindingsModel::Severity).data().toString(), QStringLiteral("error"));
            if (proxy->index(row, FindingsModel::Rule).data().toString() == QStringLiteral("integrity.hash-mismatch"))
                hashMismatch = row;
        }
        QVERIFY(hashMismatch >= 0);
        panel->componentFilter()->setCurrentIndex(panel->componentFilter()->findData(int(ckpt::Component::Rng)));
        for (int row = 0; row < proxy->rowCount(); ++row)
            QCOMPARE(proxy->index(row, FindingsModel::Component).data().toString(), QStringLiteral("rng"));
        QVERIFY(proxy->rowCount() >= 1); // missing-rank-rng
        panel->componentFilter()->setCurrentIndex(0);
        panel->view()->setCurrentIndex(proxy->index(hashMismatch, FindingsModel::Message));
        emit panel->view()->activated(proxy->index(hashMismatch, FindingsModel::Message));
        QCOMPARE(shownPath(), samples("broken/hash-mismatch/checkpoint-0000300"));
        CheckpointView* view = m_window->checkpointView();
        QCOMPARE(view->tabs()->currentIndex(), int(CheckpointView::OverviewTab));
        const QModelIndex current = view->overviewPage()->filesView()->currentIndex();
        QCOMPARE(current.siblingAtColumn(CheckpointFilesModel::File).data().toString(), QStringLiteral("optimizer.pt"));
        QCOMPARE(current.siblingAtColumn(CheckpointFilesModel::Audit).data().toString(), QStringLiteral("integrity.hash-mismatch"));
        panel->severityFilter()->setCurrentIndex(0);

    }

    void copyAndKeyboard()
    {
        CheckpointView* view = m_window->checkpointView();
        waitIdle();
        QTableView* files = view->overviewPage()->filesView();
        files->setFocus();
        QCOMPARE(copyText(files).section(QLatin1Char('\t'), 0, 0), QStringLiteral("optimizer.pt"));
        QTest::keyClick(files, Qt::Key_C, Qt::ControlModifier);
        QVERIFY(QGuiApplication::clipboard()->text().startsWith(QStringLiteral("optimizer.pt\toptimizer")));

        // Down in the run browser moves to the next checkpoint and shows it.
        const RunDataPtr tiny = runNamed(QStringLiteral("tiny-mlp"));
        m_window->showCheckpoint(tiny->id, 0);
        QTreeView* browser = m_window->runBrowser()->view();
        browser->setFocus();
        QTest::keyClick(browser, Qt::Key_Down);
        QCOMPARE(shownPath(), samples("tiny-mlp/checkpoint-0000100"));
        waitIdle();
        QCOMPARE(view->overviewPage()->filesModel()->rowCount(), 5);
        // Header tooltips explain the columns.
        QVERIFY(!m_window->runModel()->headerData(RunBrowserModel::Marks, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
    }

    // Every item view of the window (tables, trees and lists, the Raw tree and the compare view
    // included) copies with Ctrl+C and from its context menu; Tab never gets trapped in a table.
    void everyViewCopies()
    {
        waitIdle();
        const QList<QAbstractItemView*> views = m_window->findChildren<QAbstractItemView*>();
        QVERIFY(views.size() >= 15);
        for (QAbstractItemView* view : views) {
            if (qobject_cast<QComboBox*>(view->parentWidget()) || view->inherits("QComboBoxListView") || view->inherits("QHeaderView"))
                continue; // a combo box's popup list or a view's header
            const QString name = QLatin1String(view->metaObject()->className()) + QStringLiteral(" in ")
                + QLatin1String(view->parentWidget()->metaObject()->className());
            bool copies = false;
            for (const QAction* action : view->actions())
                copies = copies || action->shortcut() == QKeySequence(QKeySequence::Copy);
            QVERIFY2(copies, qPrintable(name + QStringLiteral(" has no Ctrl+C")));
            QVERIFY2(view->contextMenuPolicy() == Qt::ActionsContextMenu, qPrintable(name + QStringLiteral(" has no context menu")));
            QVERIFY2(!view->tabKeyNavigation(), qPrintable(name + QStringLiteral(" keeps Tab to itself")));
        }

        // Raw tree: Ctrl+C copies the row as shown.
        const RunDataPtr ddp4 = runNamed(QStringLiteral("ddp4-mlp"));
        m_window->showCheckpoint(ddp4->id, 2);
        QVERIFY(m_window->selectTab(QStringLiteral("raw")));
        waitIdle();
        QTreeView* tree = m_window->checkpointView()->rawPage()->treePage()->view();
        m_window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
        tree->setFocus();
        const QModelIndex firstLeaf = tree->model()->index(0, 0, tree->model()->index(0, 0));
        tree->setCurrentIndex(firstLeaf);
        tree->selectionModel()->select(firstLeaf, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QTest::keyClick(tree, Qt::Key_C, Qt::ControlModifier);
        QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("0.weight\ttensor\tfloat32 [64, 16] 4.00 KiB"));

        // Compare view: the side-by-side tree copies its rows too.
        QVERIFY(m_window->compareByPath(samples("ddp4-mlp/checkpoint-0000100"), samples("ddp4-mlp/checkpoint-0000200")));
        QTreeView* comparison = m_window->compareView()->comparisonView();
        comparison->setFocus();
        const QModelIndex counters = comparison->model()->index(0, 0);
        const QModelIndex step = comparison->model()->index(1, 0, counters); // global_step (manifest.json)
        comparison->setCurrentIndex(step);
        comparison->selectionModel()->select(step, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QTest::keyClick(comparison, Qt::Key_C, Qt::ControlModifier);
        QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("global_step (manifest.json)\t100\t200\tchanged"));
        m_window->setMode(MainWindow::Mode::Inspect);
    }

    // Tab walks from the run browser through the tabs, the shown page and the findings back to
    // the browser; Ctrl+F finds the shown tab's filter; the shortcuts for Open and Compare exist.
    void keyboardReachesEveryPart()
    {
        waitIdle();
        m_window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
        CheckpointView* view = m_window->checkpointView();
        QVERIFY(m_window->selectTab(QStringLiteral("tensors")));
        m_window->runBrowser()->view()->setFocus();
        QSet<QWidget*> reached;
        for (int i = 0; i < 80 && !reached.contains(QApplication::focusWidget()); ++i) {
            reached.insert(QApplication::focusWidget());
            QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        }
        QCOMPARE(QApplication::focusWidget(), m_window->runBrowser()->view()); // round and back
        QVERIFY(reached.contains(static_cast<QWidget*>(view->tabs()->tabBar())));
        QVERIFY(reached.contains(static_cast<QWidget*>(view->tensorsPage()->filterEdit())));
        QVERIFY(reached.contains(static_cast<QWidget*>(view->tensorsPage()->view())));
        QVERIFY(reached.contains(static_cast<QWidget*>(m_window->findingsPanel()->view())));

        // The arrows switch tabs in the tab bar.
        view->tabs()->tabBar()->setFocus();
        QTest::keyClick(view->tabs()->tabBar(), Qt::Key_Right);
        QCOMPARE(view->tabs()->currentIndex(), int(CheckpointView::OptimizerTab));

        QTest::keyClick(m_window.get(), Qt::Key_F, Qt::ControlModifier);
        QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(view->optimizerPage()->filterEdit()));
        QVERIFY(m_window->selectTab(QStringLiteral("schedule")));
        QTest::keyClick(m_window.get(), Qt::Key_F, Qt::ControlModifier); // no filter there: the findings'
        QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(m_window->findingsPanel()->severityFilter()));
        QTest::keyClick(m_window.get(), Qt::Key_3, Qt::AltModifier);
        QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(view->tabs()->tabBar()));

        QTest::keyClick(m_window.get(), Qt::Key_2, Qt::ControlModifier);
        QVERIFY(m_window->mode() == MainWindow::Mode::Compare);
        QTest::keyClick(m_window.get(), Qt::Key_1, Qt::ControlModifier);
        QVERIFY(m_window->mode() == MainWindow::Mode::Inspect);
        QStringList shortcuts;
        for (const QAction* action : m_window->findChildren<QAction*>())
            shortcuts.append(action->shortcut().toString());
        QVERIFY(shortcuts.contains(QKeySequence(QKeySequence::Open).toString()));
        QVERIFY(shortcuts.contains(QStringLiteral("Ctrl+D"))); // compare the two selected in the browser
    }

    // Geometry, docks and the recent files survive a restart (settings of the test mode, never
    // the user's).
    void windowStateAndRecentFilesPersist()
    {
        QSettings().clear();
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString run = dir.filePath(QStringLiteral("persisted-run"));
        QVERIFY(copyTree(samples("tiny-mlp"), run));
        {
            MainWindow first(MainWindow::Settings::Use);
            first.show();
            QVERIFY(QTest::qWaitForWindowExposed(&first));
            first.resize(1111, 777);
            first.findChild<QDockWidget*>(QStringLiteral("findingsDock"))->hide();
            first.openPaths({run});
            QTRY_VERIFY_WITH_TIMEOUT(!first.isBusy(), 30000);
            first.close();
        }
        QVERIFY(QSettings().contains(QStringLiteral("mainWindow/state")));
        MainWindow second(MainWindow::Settings::Use);
        QCOMPARE(second.size(), QSize(1111, 777));
        QVERIFY(second.findChild<QDockWidget*>(QStringLiteral("findingsDock"))->isHidden());
        QVERIFY(!second.findChild<QDockWidget*>(QStringLiteral("runsDock"))->isHidden());
        QCOMPARE(RecentFiles::load().value(0), run);
        QSettings().clear();
    }

    void switchingDropsStaleResults()
    {
        const RunDataPtr ddp4 = runNamed(QStringLiteral("ddp4-mlp"));
        const RunDataPtr tiny = runNamed(QStringLiteral("tiny-mlp"));
        m_window->showCheckpoint(ddp4->id, 0);
        m_window->showCheckpoint(tiny->id, 0); // before ddp4's files have been opened
        waitIdle();
        CheckpointView* view = m_window->checkpointView();
        QCOMPARE(view->fileChooser()->count(), 3); // model.pt, optimizer.pt, rng-rank-0.pt
        for (const auto& file : view->files())
            QVERIFY(QString::fromStdString(file->path()).startsWith(samples("tiny-mlp/checkpoint-0000050/")));
    }

    void unreadableFilesLeaveTheRestShown()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString run = dir.filePath(QStringLiteral("damaged-run"));
        QVERIFY(copyTree(samples("tiny-mlp"), run));
        const QString rng = run + QStringLiteral("/checkpoint-0000150/rng-rank-0.pt");
        QVERIFY(QFile::remove(rng));
        QVERIFY(UiTest::writeFile(rng, QByteArray("\x89garbage\x00\x01 not a checkpoint", 24)));

        QSignalSpy finished(m_window.get(), &MainWindow::loadsFinished);
        const int errorsBefore = m_window->runBrowser()->errors()->count();
        m_window->openPaths({run, dir.filePath(QStringLiteral("does-not-exist"))});
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 1, 30000);
        waitIdle();
        // The path that does not exist: one line in the browser's error panel.
        QCOMPARE(m_window->runBrowser()->errors()->count(), errorsBefore + 1);
        QVERIFY(m_window->runBrowser()->errors()->list()->item(errorsBefore)->text().contains(QStringLiteral("no such file or directory")));

        const RunDataPtr damaged = runNamed(QStringLiteral("damaged-run"));
        QVERIFY(damaged);
        m_window->showCheckpoint(damaged->id, 2);
        waitIdle();
        CheckpointView* view = m_window->checkpointView();
        QCOMPARE(view->errors()->count(), 1);
        QVERIFY(view->errors()->list()->item(0)->text().startsWith(QStringLiteral("rng-rank-0.pt")));
        QVERIFY(view->errors()->isVisibleTo(m_window.get()));
        QVERIFY(!QApplication::activeModalWidget()); // a panel, never a dialog to click away
        QCOMPARE(view->fileChooser()->count(), 2); // model.pt and optimizer.pt still open
        QVERIFY(m_window->selectTab(QStringLiteral("tensors")));
        waitIdle();
        QVERIFY(view->tensorsPage()->model()->rowCount() >= 4); // model.pt's 4 tensors at least
        QVERIFY(m_window->selectTab(QStringLiteral("overview")));
        // The audit saw the damage too: the size no longer matches the manifest.
        const CheckpointFilesModel* files = view->overviewPage()->filesModel();
        const int row = files->rowOfPath(rng);
        QVERIFY(row >= 0);
        QVERIFY(files->index(row, CheckpointFilesModel::Audit).data().toString().contains(QStringLiteral("integrity.")));
        m_window->closeRun(damaged->id);
        QVERIFY(!runNamed(QStringLiteral("damaged-run")));
    }

    void cancelStopsBackgroundWork()
    {
        MainWindow window(MainWindow::Settings::Ignore);
        window.openPaths({samples()});
        QTRY_VERIFY_WITH_TIMEOUT(window.runModel()->rowCount() > 0, 30000);
        QVERIFY(window.jobStatus()->isVisibleTo(&window));
        emit window.jobStatus()->cancelRequested();
        QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), 10000);
        QVERIFY(!window.jobStatus()->isVisibleTo(&window));
    }

    // The optimizer's moments across a run are read in the background: the status bar's job
    // indicator shows them with the other jobs, and its Cancel stops them.
    void optimizerHistoryInTheStatusBarAndCancel()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString run = dir.filePath(QStringLiteral("long-run"));
        // 40 checkpoints of an MLP written by packaging/python/ckpt_writer.py (the recovery guide's layout).
        const QString made = UiTest::runPython(QStringLiteral(
            "import sys, torch\n"
            "sys.path.insert(0, '" CKPT_SOURCE_DIR "/packaging/python')\n"
            "import ckpt_writer\n"
            "torch.manual_seed(0)\n"
            "m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))\n"
            "opt = torch.optim.AdamW(m.parameters(), lr=1e-3)\n"
            "w = ckpt_writer.CheckpointWriter(sys.argv[1])\n"
            "x, y = torch.randn(64, 32), torch.randn(64, 1)\n"
            "for step in range(1, 41):\n"
            "    loss = torch.nn.functional.mse_loss(m(x), y)\n"
            "    opt.zero_grad(); loss.backward(); opt.step()\n"
            "    w.save(step, model=m, optimizer=opt, epoch=0, batch_pos=step, data_seed=0)\n"), run);
        QVERIFY2(made.isEmpty(), qPrintable(made));

        MainWindow window(MainWindow::Settings::Ignore);
        QVERIFY(window.selectTab(QStringLiteral("optimizer")));
        window.show();
        window.openPaths({run});
        QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), 60000);
        OptimizerPage* page = window.checkpointView()->optimizerPage();
        QCOMPARE(page->history().steps.size(), std::size_t(40)); // read to the end when left alone
        QVERIFY(!window.jobStatus()->isVisibleTo(&window));

        // Another checkpoint: its moments across the run are read again, shown as a job.
        const RunDataPtr opened = window.runModel()->runs().front();
        window.showCheckpoint(opened->id, 10);
        QVERIFY(page->isReadingHistory());
        QVERIFY(window.jobStatus()->jobs().contains(OptimizerPage::historyJobId()));
        QVERIFY(window.jobStatus()->isVisibleTo(&window));
        QVERIFY(window.jobStatus()->text().contains(QStringLiteral("moments across the run")));
        emit window.jobStatus()->cancelRequested();
        QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), 30000);
        QVERIFY(!window.jobStatus()->jobs().contains(OptimizerPage::historyJobId()));
        QVERIFY(!window.jobStatus()->isVisibleTo(&window));
        QVERIFY(page->history().steps.empty());
        QVERIFY(page->momentsModel()->rowCount() > 0); // the checkpoint's own moments stay
    }

    void droppedRunsOpen()
    {
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(samples("lightning"))});
        const QPoint centre = m_window->rect().center();
        QDragEnterEvent enter(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(m_window.get(), &enter);
        QVERIFY(enter.isAccepted());
        const int before = m_window->runModel()->rowCount();
        QDropEvent drop(QPointF(centre), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(m_window.get(), &drop);
        waitIdle();
        QCOMPARE(m_window->runModel()->rowCount(), before); // already open: not twice

        // A checkpoint folder not open yet: dropped, it opens as a run of its own.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString folder = dir.filePath(QStringLiteral("dropped-checkpoint"));
        QVERIFY(copyTree(samples("tiny-mlp/checkpoint-0000100"), folder));
        QMimeData fresh;
        fresh.setUrls({QUrl::fromLocalFile(folder)});
        QDragEnterEvent enterFresh(centre, Qt::CopyAction, &fresh, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(m_window.get(), &enterFresh);
        QVERIFY(enterFresh.isAccepted());
        QDropEvent dropFresh(QPointF(centre), Qt::CopyAction, &fresh, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(m_window.get(), &dropFresh);
        QTRY_COMPARE_WITH_TIMEOUT(m_window->runModel()->rowCount(), before + 1, 30000);
        waitIdle();
        const RunDataPtr dropped = runNamed(QStringLiteral("dropped-checkpoint"));
        QVERIFY(dropped);
        QCOMPARE(dropped->checkpoints.size(), std::size_t(1));
        m_window->closeRun(dropped->id);

        QMimeData text;
        text.setText(QStringLiteral("not a file"));
        QDragEnterEvent refused(centre, Qt::CopyAction, &text, Qt::LeftButton, Qt::NoModifier);
        refused.setAccepted(false);
        QCoreApplication::sendEvent(m_window.get(), &refused);
        QVERIFY(!refused.isAccepted());
    }
};

CKPT_UI_TEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
