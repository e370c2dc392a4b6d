// SPDX-License-Identifier: MIT
// CheckpointLoader: results arrive on the GUI thread, a folder opens file by file (one failure
// never hides the others), and a new load() drops what the previous one still delivers.
#include "uitestutil.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ui/checkpointloader.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>

using FilePtr = std::shared_ptr<const ckpt::CheckpointFile>;
Q_DECLARE_METATYPE(FilePtr)

class TestCheckpointLoader : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_fixtures;

    QString fixture(const QString& name) const { return m_fixtures.filePath(name); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_fixtures.isValid());
        const QString error = UiTest::generateCheckpoints(m_fixtures.path());
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    void loadsOneFileOnTheGuiThread()
    {
        CheckpointLoader loader;
        QSignalSpy started(&loader, &CheckpointLoader::started);
        QSignalSpy failed(&loader, &CheckpointLoader::failed);
        QSignalSpy finished(&loader, &CheckpointLoader::finished);
        FilePtr file;
        QThread* deliveredOn = nullptr;
        connect(&loader, &CheckpointLoader::loaded, this, [&](const FilePtr& f) {
            file = f;
            deliveredOn = QThread::currentThread();
        });

        const QString path = fixture(QStringLiteral("state_dict.pt"));
        loader.load(path);
        QVERIFY(loader.isBusy());
        QCOMPARE(started.count(), 1);
        QCOMPARE(started.at(0).at(0).toStringList(), QStringList{path});
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 5000);
        QVERIFY(!loader.isBusy());
        QCOMPARE(failed.count(), 0);
        QVERIFY(file);
        QCOMPARE(deliveredOn, QThread::currentThread());
        QCOMPARE(QString::fromStdString(file->path()), path);
        QCOMPARE(file->tensorEntries().size(), std::size_t(15));
    }

    void failuresNameTheFileAndReason_data()
    {
        QTest::addColumn<QByteArray>("content"); // null: do not create the path
        QTest::addColumn<QString>("reasonPart");
        QTest::addRow("garbage bytes") << QByteArray("this is not a checkpoint at all\n") << QString();
        QTest::addRow("empty file") << QByteArray("") << QStringLiteral("empty");
        QTest::addRow("missing file") << QByteArray() << QString();
    }

    void failuresNameTheFileAndReason()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, reasonPart);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("broken.pt"));
        if (!content.isNull())
            QVERIFY(UiTest::writeFile(path, content));

        CheckpointLoader loader;
        QSignalSpy loaded(&loader, &CheckpointLoader::loaded);
        QSignalSpy failed(&loader, &CheckpointLoader::failed);
        QSignalSpy finished(&loader, &CheckpointLoader::finished);
        loader.load(path);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 5000);
        QCOMPARE(loaded.count(), 0);
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toString(), path);
        const QString reason = failed.at(0).at(1).toString();
        QVERIFY(!reason.isEmpty());
        QVERIFY2(!reason.startsWith(path), qPrintable(reason)); // the reason alone: the path is the first argument
        if (!reasonPart.isEmpty())
            QVERIFY2(reason.contains(reasonPart, Qt::CaseInsensitive), qPrintable(reason));
    }

    void folderOpensEveryCheckpointSeparately()
    {
        QTemporaryDir dir;
        QVERIFY(QFile::copy(fixture(QStringLiteral("state_dict.pt")), dir.filePath(QStringLiteral("b_state.pt"))));
        QVERIFY(QFile::copy(fixture(QStringLiteral("dtypes.pt")), dir.filePath(QStringLiteral("c_dtypes.pth"))));
        QVERIFY(UiTest::writeFile(dir.filePath(QStringLiteral("a_broken.ckpt")), QByteArray(64, 'x')));
        QVERIFY(UiTest::writeFile(dir.filePath(QStringLiteral("notes.txt")), "not a checkpoint name"));
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("sub")));
        QVERIFY(QFile::copy(fixture(QStringLiteral("state_dict.pt")), dir.filePath(QStringLiteral("sub/deep.pt"))));

        CheckpointLoader loader;
        QSignalSpy started(&loader, &CheckpointLoader::started);
        QSignalSpy loaded(&loader, &CheckpointLoader::loaded);
        QSignalSpy failed(&loader, &CheckpointLoader::failed);
        QSignalSpy finished(&loader, &CheckpointLoader::finished);
        QSignalSpy progress(&loader, &CheckpointLoader::progress);
        loader.load(dir.path());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 5000);

        const QStringList expected{dir.filePath(QStringLiteral("a_broken.ckpt")), dir.filePath(QStringLiteral("b_state.pt")),
                                   dir.filePath(QStringLiteral("c_dtypes.pth"))};
        QCOMPARE(started.at(0).at(0).toStringList(), expected); // sorted, not recursive, .txt ignored
        QCOMPARE(loaded.count(), 2);
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toString(), expected.at(0));
        QCOMPARE(progress.last().at(0).toInt(), 3);
        QCOMPARE(progress.last().at(1).toInt(), 3);
    }

    void folderWithoutCheckpointsFails()
    {
        QTemporaryDir dir;
        QVERIFY(UiTest::writeFile(dir.filePath(QStringLiteral("readme.md")), "nothing here"));
        CheckpointLoader loader;
        QSignalSpy failed(&loader, &CheckpointLoader::failed);
        QSignalSpy finished(&loader, &CheckpointLoader::finished);
        loader.load(dir.path());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 5000);
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toString(), dir.path());
        QVERIFY(failed.at(0).at(1).toString().contains(QStringLiteral("no checkpoint files")));
    }

    void everyGeneratedFixtureOpens()
    {
        CheckpointLoader loader;
        QSignalSpy loaded(&loader, &CheckpointLoader::loaded);
        QSignalSpy finished(&loader, &CheckpointLoader::finished);
        QStringList failures;
        connect(&loader, &CheckpointLoader::failed, this,
                [&](const QString& path, const QString& reason) { failures.append(path + QStringLiteral(": ") + reason); });
        loader.load(m_fixtures.path());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);

        const QStringList names = QDir(m_fixtures.path()).entryList(CheckpointLoader::checkpointNameFilters(), QDir::Files);
        QVERIFY(names.size() > 30);
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
        // A folder opens as its layout's files: the two sharded-*.safetensors are one W, read through
        // their index (opensAsCheckpointFile), which is loaded instead.
        QVERIFY(names.contains(QStringLiteral("sharded-00001-of-00002.safetensors")));
        QCOMPARE(loaded.count(), names.size() - 2 + 1);
    }

    void newLoadDropsStaleResults()
    {
        CheckpointLoader loader;
        QSignalSpy started(&loader, &CheckpointLoader::started);
        QSignalSpy failed(&loader, &CheckpointLoader::failed);
        QSignalSpy finished(&loader, &CheckpointLoader::finished);
        QStringList loadedPaths;
        connect(&loader, &CheckpointLoader::loaded, this,
                [&](const FilePtr& f) { loadedPaths.append(QString::fromStdString(f->path())); });

        loader.load(m_fixtures.path()); // 38 files, still running when the next load starts
        const QString second = fixture(QStringLiteral("state_dict.pt"));
        loader.load(second);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 5000);
        loader.waitForWorkers(); // every job of the first batch has ended ...
        UiTest::deliverPostedEvents(); // ... and whatever it posted has been delivered (or dropped)
        QCOMPARE(started.count(), 2);
        QCOMPARE(finished.count(), 1);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(loadedPaths, QStringList{second});
    }

    void emptyLoadFinishes()
    {
        CheckpointLoader loader;
        QSignalSpy finished(&loader, &CheckpointLoader::finished);
        loader.load(QStringList{});
        QVERIFY(!loader.isBusy());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 1000);
    }

    void destroyedWhileLoading()
    {
        // Must neither crash nor deliver into a dead object.
        auto* loader = new CheckpointLoader;
        loader->load(m_fixtures.path());
        delete loader; // its destructor drains its pool
        UiTest::deliverPostedEvents(); // nothing queued for the dead object may be delivered
    }
};

QTEST_GUILESS_MAIN(TestCheckpointLoader)
#include "tst_checkpointloader.moc"
