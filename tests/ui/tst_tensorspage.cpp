// SPDX-License-Identifier: MIT
// The Tensors data page on the real sample runs: the model's golden dumps, the rows checked
// against the training state read by the core on its own, and the page's widgets (filter,
// sorting, selection, histogram, shard map on a real DCP folder, copy, stale loads).
#include "pagetestutil.h"

#include "core/training_state.h"
#include "ui/pages/checkpointtensorspage.h"
#include "ui/pages/copytableview.h"
#include "ui/pages/tensorlistmodel.h"
#include "ui/plots/histogramplot.h"
#include "ui/plots/shardmapplot.h"

#include <QAbstractItemModelTester>
#include <QClipboard>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>

namespace {

QString cell(const QAbstractItemModel& model, int row, int column)
{
    return model.index(row, column).data().toString();
}

bool loadAndWait(CheckpointTensorsPage& page, std::shared_ptr<const ckpt::TrainingState> state)
{
    QSignalSpy loaded(&page, &CheckpointTensorsPage::tensorsLoaded);
    page.setCheckpoint(std::move(state));
    return loaded.wait(20000) && !page.isBusy();
}

} // namespace

class TestTensorsPage : public QObject {
    Q_OBJECT

private slots:
    void modelDump_data()
    {
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<QString>("expected");
        QTest::addRow("ddp4-mlp") << QStringLiteral("ddp4-mlp/checkpoint-0000300") << QStringLiteral("tensors_ddp4-mlp");
        QTest::addRow("tiny-mlp") << QStringLiteral("tiny-mlp/checkpoint-0000150") << QStringLiteral("tensors_tiny-mlp");
        QTest::addRow("hf-trainer") << QStringLiteral("hf-trainer/checkpoint-60") << QStringLiteral("tensors_hf-trainer");
        QTest::addRow("lightning") << QStringLiteral("lightning/checkpoints/epoch=1-step=50.ckpt")
                                   << QStringLiteral("tensors_lightning");
    }

    void modelDump()
    {
        QFETCH(QString, checkpoint);
        QFETCH(QString, expected);
        TensorListModel model;
        QSortFilterProxyModel proxy;
        QAbstractItemModelTester tester(&model);
        QAbstractItemModelTester proxyTester(&proxy);
        proxy.setSourceModel(&model);
        proxy.setSortRole(TensorListModel::SortRole);

        const auto state = PageTest::state(checkpoint);
        CheckpointTensors tensors = collectTensors(*state);
        QVERIFY2(tensors.errors.isEmpty(), qPrintable(tensors.errors.join(QLatin1Char('\n'))));
        model.setTensors(std::move(tensors.rows));
        QVERIFY(PageTest::matchesExpected(UiTest::dumpModel(model), expected));

        // The model part read by the training-state reader on its own agrees: every parameter
        // is a row of the model file with the same dtype, shape and numel.
        QVERIFY(state->model);
        const QString modelFile = QFileInfo(QString::fromStdString(state->model->from.file)).fileName();
        for (const ckpt::ParameterEntry& p : state->model->parameters) {
            bool found = false;
            for (const TensorRow& row : model.tensors()) {
                if (QFileInfo(row.file).fileName() != modelFile || !row.name.endsWith(QString::fromStdString(p.name)))
                    continue;
                found = true;
                QCOMPARE(row.dtype, QString::fromStdString(p.dtype));
                QCOMPARE(row.shape, p.shape);
                QCOMPARE(row.numel, p.numel);
            }
            QVERIFY2(found, p.name.c_str());
        }
        // Statistics columns stay empty until computed; sorting by them keeps every row.
        proxy.sort(TensorListModel::L2, Qt::DescendingOrder);
        QCOMPARE(proxy.rowCount(), model.rowCount());
        QVERIFY(PageTest::everyHeaderHasTooltip(model));
    }

    void statsArriveRowByRow()
    {
        TensorListModel model;
        QAbstractItemModelTester tester(&model);
        CheckpointTensors tensors = collectTensors(*PageTest::state(QStringLiteral("tiny-mlp/checkpoint-0000050")));
        model.setTensors(std::move(tensors.rows));
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        TensorStatsView stats;
        stats.min = -1.5;
        stats.max = 2;
        stats.l2 = 3.25;
        stats.nan = 2;
        stats.histLo = -1.5;
        stats.histHi = 2;
        stats.histCounts = {1, 2, 3};
        model.setStats(1, stats);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.first().at(0).toModelIndex(), model.index(1, TensorListModel::Min));
        QCOMPARE(cell(model, 1, TensorListModel::Min), QStringLiteral("-1.5"));
        QCOMPARE(cell(model, 1, TensorListModel::L2), QStringLiteral("3.25"));
        QCOMPARE(cell(model, 1, TensorListModel::NonFinite), QStringLiteral("2 nan, 0 +inf, 0 -inf"));
        QCOMPARE(cell(model, 0, TensorListModel::Min), QString());
        model.setStats(model.rowCount(), stats); // out of range: ignored
        QCOMPARE(changed.count(), 1);
    }

    void pageLoadsFiltersSortsAndCopies()
    {
        CheckpointTensorsPage page;
        QAbstractItemModelTester tester(page.model());
        QAbstractItemModelTester proxyTester(page.proxy());
        QVERIFY(loadAndWait(page, PageTest::state(QStringLiteral("ddp4-mlp/checkpoint-0000300"))));
        QVERIFY2(page.errors().isEmpty(), qPrintable(page.errors().join(QLatin1Char('\n'))));
        const int rows = page.model()->rowCount();
        QVERIFY(rows > 6);
        QCOMPARE(page.summaryText(), tr("%1 tensors, %2").arg(rows).arg(page.summaryText().section(QStringLiteral(", "), 1)));

        page.filterEdit()->setText(QStringLiteral("EXP_AVG_SQ"));
        QCOMPARE(page.proxy()->rowCount(), 6);
        QVERIFY(page.summaryText().startsWith(QStringLiteral("6 of ")));
        page.filterEdit()->clear();
        QCOMPARE(page.proxy()->rowCount(), rows);

        page.view()->sortByColumn(TensorListModel::Numel, Qt::DescendingOrder);
        QCOMPARE(cell(*page.proxy(), 0, TensorListModel::Numel), QStringLiteral("5056")); // a torch generator state
        QCOMPARE(cell(*page.proxy(), 4, TensorListModel::Numel), QStringLiteral("4096")); // then the 64x64 weight and moments
        QVERIFY(page.selectTensor(QStringLiteral("3.weight"), QStringLiteral("model.pt")));
        QCOMPARE(page.histogram()->barCount(), 0);
        QVERIFY(page.histogram()->title().contains(QStringLiteral("not computed")));
        QVERIFY(page.shardMap()->isHidden());

        page.view()->selectionModel()->clearSelection();
        page.view()->selectionModel()->select(page.view()->currentIndex(),
                                              QItemSelectionModel::Select | QItemSelectionModel::Rows);
        const QString copied = page.view()->selectedText();
        QVERIFY(copied.startsWith(QStringLiteral("3.weight\tfloat32\t[64, 64]\t4096\t16.0 KiB\tmodel.pt")));
        page.view()->copySelection();
        QCOMPARE(QApplication::clipboard()->text(), copied);
        PageTest::grab(page, QStringLiteral("tensors_ddp4"));
    }

    void newerCheckpointWins()
    {
        CheckpointTensorsPage page;
        QAbstractItemModelTester tester(page.model());
        QSignalSpy loaded(&page, &CheckpointTensorsPage::tensorsLoaded);
        page.setCheckpoint(PageTest::state(QStringLiteral("ddp4-mlp/checkpoint-0000300")));
        page.setCheckpoint(PageTest::state(QStringLiteral("lightning/checkpoints/epoch=1-step=50.ckpt")));
        QVERIFY(loaded.wait(20000));
        QTest::qWait(200); // a late result of the first load would arrive now
        QCOMPARE(loaded.count(), 1);
        for (const TensorRow& row : page.model()->tensors())
            QCOMPARE(row.file, QStringLiteral("epoch=1-step=50.ckpt"));
        page.setCheckpoint(nullptr);
        QCOMPARE(page.model()->rowCount(), 0);
    }

    void shardMapOfRealDcpFolder()
    {
        const QString dcp = QStringLiteral(CKPT_CORPUS_DIR "/Lightning-AI__pytorch-lightning@0f916ea4/dcp-2rank");
        if (!QFileInfo::exists(dcp))
            QSKIP("the shared corpus is not next to the repository");
        CheckpointTensorsPage page;
        QAbstractItemModelTester tester(page.model());
        QVERIFY(loadAndWait(page, std::make_shared<const ckpt::TrainingState>(ckpt::readTrainingState(dcp.toStdString()))));
        QVERIFY(page.model()->rowCount() > 0);
        int sharded = -1;
        for (int row = 0; row < page.model()->rowCount(); ++row) {
            if (page.model()->tensors()[static_cast<std::size_t>(row)].shards.size() > 1)
                sharded = row;
        }
        QVERIFY(sharded >= 0);
        const TensorRow& t = page.model()->tensors()[static_cast<std::size_t>(sharded)];
        QVERIFY(page.selectTensor(t.name));
        QVERIFY(!page.shardMap()->isHidden());
        QCOMPARE(page.shardMap()->barCount(), int(t.shards.size()));
        QVERIFY(cell(*page.model(), sharded, TensorListModel::File).contains(QStringLiteral("shard")));
        PageTest::grab(page, QStringLiteral("tensors_dcp"));
    }
};

CKPT_UI_TEST_MAIN(TestTensorsPage)
#include "tst_tensorspage.moc"
