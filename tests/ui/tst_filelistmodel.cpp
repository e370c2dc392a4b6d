// SPDX-License-Identifier: MIT
// FileListModel: rows start as loading, then show format/size/tensors or the failure in red.
#include "uitestutil.h"

#include "core/checkpoint_file.h"
#include "ui/models/filelistmodel.h"
#include "ui/palettecolors.h"

#include <QAbstractItemModelTester>
#include <QRegularExpression>
#include <QTemporaryDir>

class TestFileListModel : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_fixtures;

private slots:
    void initTestCase()
    {
        QVERIFY(m_fixtures.isValid());
        const QString error = UiTest::generateCheckpoints(m_fixtures.path());
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    void rowsFollowTheLoads()
    {
        FileListModel model;
        QAbstractItemModelTester tester(&model);
        const QString good = m_fixtures.filePath(QStringLiteral("state_dict.pt"));
        const QString legacy = m_fixtures.filePath(QStringLiteral("state_dict_legacy.pt"));
        const QString bad = m_fixtures.filePath(QStringLiteral("missing.pt"));
        model.setPaths({good, legacy, bad});
        QCOMPARE(model.rowCount(), 3);
        for (int row = 0; row < 3; ++row) {
            QCOMPARE(model.stateAt(row), FileListModel::State::Loading);
            QVERIFY(!model.fileAt(row));
        }
        QCOMPARE(model.index(0).data().toString(), QStringLiteral("state_dict.pt\nloading…"));

        QCOMPARE(model.setLoaded(ckpt::CheckpointFile::open(good.toStdString())), 0);
        QCOMPARE(model.stateAt(0), FileListModel::State::Loaded);
        QVERIFY(model.fileAt(0));
        const QString detail = model.index(0).data(FileListModel::DetailRole).toString();
        QVERIFY2(QRegularExpression(QStringLiteral("^torch_zip, [0-9.]+ KiB, 15 tensors$")).match(detail).hasMatch(),
                 qPrintable(detail));
        QVERIFY(!model.index(0).data(Qt::ForegroundRole).isValid());

        QCOMPARE(model.setLoaded(ckpt::CheckpointFile::open(legacy.toStdString())), 1);
        QVERIFY(model.index(1).data(FileListModel::DetailRole).toString().startsWith(QStringLiteral("torch_legacy, ")));

        QCOMPARE(model.setFailed(bad, QStringLiteral("cannot open: No such file")), 2);
        QCOMPARE(model.stateAt(2), FileListModel::State::Failed);
        QCOMPARE(model.index(2).data().toString(), QStringLiteral("missing.pt\ncannot open: No such file"));
        QCOMPARE(model.index(2).data(Qt::ForegroundRole).value<QColor>(), warningColor());
        QVERIFY(model.index(2).data(Qt::ToolTipRole).toString().startsWith(bad));
        QCOMPARE(model.index(2).data(FileListModel::PathRole).toString(), bad);

        // results for paths that are not listed (a previous batch) change nothing
        QCOMPARE(model.setFailed(QStringLiteral("/elsewhere.pt"), QStringLiteral("x")), -1);
        QCOMPARE(model.rowCount(), 3);

        model.setPaths({});
        QCOMPARE(model.rowCount(), 0);
    }
};

CKPT_UI_TEST_MAIN(TestFileListModel)
#include "tst_filelistmodel.moc"
