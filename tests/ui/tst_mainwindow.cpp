// SPDX-License-Identifier: MIT
// MainWindow smoke test: a folder of real checkpoints plus a broken file, opened the way the
// user does it; the broken one shows its error, the others still open.
#include "uitestutil.h"

#include "core/checkpoint_file.h"
#include "ui/importspage.h"
#include "ui/mainwindow.h"
#include "ui/models/filelistmodel.h"
#include "ui/models/importsmodel.h"
#include "ui/models/objecttreemodel.h"
#include "ui/models/tensorproxymodel.h"
#include "ui/models/tensortablemodel.h"
#include "ui/palettecolors.h"
#include "ui/tensorspage.h"
#include "ui/treepage.h"
#include "ui/warningspage.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QListWidget>
#include <QMimeData>
#include <QProgressBar>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QUrl>

#include <memory>
#include <vector>

class TestMainWindow : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_fixtures;
    QTemporaryDir m_folder;
    std::unique_ptr<MainWindow> m_window;
    std::vector<std::unique_ptr<QAbstractItemModelTester>> m_testers;

    int rowOf(const QString& name) const
    {
        return m_window->fileModel()->rowOf(m_folder.filePath(name));
    }

    void openAndWait(const QStringList& paths)
    {
        QSignalSpy finished(m_window.get(), &MainWindow::loadsFinished);
        m_window->openPaths(paths);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
        QVERIFY(!m_window->isLoading());
    }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_fixtures.isValid());
        const QString error = UiTest::generateCheckpoints(m_fixtures.path());
        QVERIFY2(error.isEmpty(), qPrintable(error));

        for (const char* name : {"state_dict.pt", "full_checkpoint.pt", "dtypes.pt"})
            QVERIFY(QFile::copy(m_fixtures.filePath(QLatin1String(name)), m_folder.filePath(QLatin1String(name))));
        static const char garbage[] = "\x89garbage\x00\x01\x02 not a checkpoint";
        QVERIFY(UiTest::writeFile(m_folder.filePath(QStringLiteral("broken.pt")), QByteArray(garbage, sizeof garbage - 1)));

        m_window = std::make_unique<MainWindow>(MainWindow::Settings::Ignore);
        // Every model of the window is checked while the window fills it.
        for (QAbstractItemModel* model : std::initializer_list<QAbstractItemModel*>{
                 m_window->fileModel(), m_window->tensorsPage()->model(), m_window->tensorsPage()->proxy(),
                 m_window->treePage()->model(), m_window->importsPage()->model()})
            m_testers.push_back(std::make_unique<QAbstractItemModelTester>(model));
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }

    void cleanupTestCase()
    {
        m_window.reset();
        m_testers.clear();
    }

    void folderWithABrokenFile()
    {
        auto* progress = m_window->statusBar()->findChild<QProgressBar*>();
        QVERIFY(progress);
        QVERIFY(!progress->isVisible());
        QSignalSpy finished(m_window.get(), &MainWindow::loadsFinished);
        m_window->openPaths({m_folder.path()});
        QVERIFY(m_window->isLoading());
        QVERIFY(progress->isVisible()); // busy while the loads run
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
        QVERIFY(!m_window->isLoading());
        QVERIFY(!progress->isVisible());

        FileListModel* files = m_window->fileModel();
        QCOMPARE(files->rowCount(), 4);

        const int broken = rowOf(QStringLiteral("broken.pt"));
        QCOMPARE(broken, 0); // sorted by name
        QCOMPARE(files->stateAt(broken), FileListModel::State::Failed);
        const QString text = files->index(broken).data().toString();
        QVERIFY2(text.startsWith(QStringLiteral("broken.pt\n")) && text.size() > 12, qPrintable(text));
        QCOMPARE(files->index(broken).data(Qt::ForegroundRole).value<QColor>(), warningColor());
        for (const char* name : {"dtypes.pt", "full_checkpoint.pt", "state_dict.pt"})
            QCOMPARE(files->stateAt(rowOf(QLatin1String(name))), FileListModel::State::Loaded);

        // The first file that loaded (in list order) is shown.
        const int dtypes = rowOf(QStringLiteral("dtypes.pt"));
        QCOMPARE(m_window->fileView()->currentIndex().row(), dtypes);
        const QJsonObject truth = UiTest::readJson(m_fixtures.filePath(QStringLiteral("dtypes.pt.expected.json")));
        QCOMPARE(m_window->tensorsPage()->proxy()->rowCount(), truth.value(QStringLiteral("tensors")).toArray().size());
        QCOMPARE(m_window->treePage()->model()->index(0, 0).data().toString(), QStringLiteral("dtypes.pt"));
        QVERIFY(m_window->windowTitle().startsWith(QStringLiteral("dtypes.pt")));
    }

    void pickingFilesShowsThem()
    {
        m_window->fileView()->setCurrentIndex(m_window->fileModel()->index(rowOf(QStringLiteral("state_dict.pt"))));
        TensorsPage* tensors = m_window->tensorsPage();
        QCOMPARE(tensors->proxy()->rowCount(), 15);
        QCOMPARE(tensors->proxy()->index(0, TensorTableModel::Key).data().toString(), QStringLiteral("conv.weight"));
        tensors->filterEdit()->setText(QStringLiteral("bn1d"));
        QCOMPARE(tensors->proxy()->rowCount(), 5);
        tensors->filterEdit()->clear();
        QCOMPARE(tensors->proxy()->rowCount(), 15);

        m_window->fileView()->setCurrentIndex(m_window->fileModel()->index(rowOf(QStringLiteral("full_checkpoint.pt"))));
        QCOMPARE(tensors->proxy()->rowCount(), 43);
        QCOMPARE(m_window->importsPage()->model()->rowCount(),
                 static_cast<int>(m_window->fileModel()->fileAt(rowOf(QStringLiteral("full_checkpoint.pt")))->imports().entries.size()));
        QVERIFY(m_window->importsPage()->verdictLabel()->text().contains(QStringLiteral("globals")));
        const QModelIndex root = m_window->treePage()->model()->index(0, 0);
        QCOMPARE(m_window->treePage()->model()->rowCount(root), 12);

        // The broken file: nothing in the pages, the error above them.
        m_window->fileView()->setCurrentIndex(m_window->fileModel()->index(rowOf(QStringLiteral("broken.pt"))));
        QCOMPARE(tensors->proxy()->rowCount(), 0);
        QCOMPARE(m_window->treePage()->model()->rowCount(), 0);
        const auto* header = m_window->centralWidget()->findChild<QLabel*>(QStringLiteral("fileHeader"));
        QVERIFY(header);
        QVERIFY2(header->text().contains(QStringLiteral("could not be read")), qPrintable(header->text()));
    }

    void pickingAFileWhileItLoads()
    {
        QSignalSpy finished(m_window.get(), &MainWindow::loadsFinished);
        m_window->openPaths({m_folder.path()});
        // Results arrive through the event loop, so every row is still loading here.
        const int stateDict = rowOf(QStringLiteral("state_dict.pt"));
        QCOMPARE(m_window->fileModel()->stateAt(stateDict), FileListModel::State::Loading);
        m_window->fileView()->setCurrentIndex(m_window->fileModel()->index(stateDict));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
        // The user's pick stays, and shows the file once it has loaded.
        QCOMPARE(m_window->fileView()->currentIndex().row(), stateDict);
        QCOMPARE(m_window->tensorsPage()->proxy()->rowCount(), 15);
        QCOMPARE(m_window->treePage()->model()->index(0, 0).data().toString(), QStringLiteral("state_dict.pt"));
    }

    void tabsByName()
    {
        QCOMPARE(m_window->tabs()->count(), 4);
        QVERIFY(m_window->selectTab(QStringLiteral("tree")));
        QCOMPARE(m_window->tabs()->currentWidget(), m_window->treePage());
        QVERIFY(m_window->selectTab(QStringLiteral("Imports")));
        QCOMPARE(m_window->tabs()->currentWidget(), m_window->importsPage());
        QVERIFY(m_window->selectTab(QStringLiteral("warnings")));
        QVERIFY(m_window->selectTab(QStringLiteral("tensors")));
        QVERIFY(!m_window->selectTab(QStringLiteral("plots")));
        QCOMPARE(m_window->tabs()->currentWidget(), m_window->tensorsPage());
    }

    void droppedFilesReplaceTheList()
    {
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(m_folder.filePath(QStringLiteral("state_dict.pt")))});
        const QPoint centre = m_window->rect().center();
        QDragEnterEvent enter(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(m_window.get(), &enter);
        QVERIFY(enter.isAccepted());

        QSignalSpy finished(m_window.get(), &MainWindow::loadsFinished);
        QDropEvent drop(QPointF(centre), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(m_window.get(), &drop);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
        QCOMPARE(m_window->fileModel()->rowCount(), 1);
        QCOMPARE(m_window->tensorsPage()->proxy()->rowCount(), 15);

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
