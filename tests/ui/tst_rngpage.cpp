// SPDX-License-Identifier: MIT
// The RNG & data cursor page on the real sample runs: golden dumps per rank, checkpoints side
// by side, and the faults of sample_runs/broken showing up as highlighted rows.
#include "pagetestutil.h"

#include "ui/pages/copytableview.h"
#include "ui/pages/rngpage.h"
#include "ui/pages/stategridmodel.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QSortFilterProxyModel>

namespace {

// The model's text plus "  <- differs" / "  <- note" markers, for the golden files.
QStringList dumpWithFlags(const StateGridModel& model)
{
    QStringList lines = UiTest::dumpModel(model);
    for (int row = 0; row < model.rowCount(); ++row) {
        if (model.grid().rows[static_cast<std::size_t>(row)].differs)
            lines[row] += QStringLiteral("  <- differs");
        if (!model.grid().rows[static_cast<std::size_t>(row)].note.isEmpty())
            lines[row] += QStringLiteral("  <- same state on every rank");
    }
    return lines;
}

const StateGrid::Row* findRow(const StateGridModel& model, const QString& name)
{
    for (const StateGrid::Row& row : model.grid().rows) {
        if (row.name == name)
            return &row;
    }
    return nullptr;
}

QStringList differingNames(const StateGridModel& model)
{
    QStringList names;
    for (const StateGrid::Row& row : model.grid().rows) {
        if (row.differs)
            names.append(row.name);
    }
    return names;
}

} // namespace

class TestRngPage : public QObject {
    Q_OBJECT

private slots:
    void byRank_data()
    {
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<QString>("expected");
        QTest::addRow("ddp4-mlp") << QStringLiteral("ddp4-mlp/checkpoint-0000300") << QStringLiteral("rng_ddp4-mlp");
        QTest::addRow("tiny-mlp") << QStringLiteral("tiny-mlp/checkpoint-0000150") << QStringLiteral("rng_tiny-mlp");
        QTest::addRow("hf-trainer") << QStringLiteral("hf-trainer/checkpoint-60") << QStringLiteral("rng_hf-trainer");
        QTest::addRow("lightning") << QStringLiteral("lightning/checkpoints/epoch=1-step=50.ckpt")
                                   << QStringLiteral("rng_lightning");
    }

    void byRank()
    {
        QFETCH(QString, checkpoint);
        QFETCH(QString, expected);
        RngPage page;
        QAbstractItemModelTester tester(page.model());
        QAbstractItemModelTester proxyTester(page.proxy());
        page.setCheckpoint(PageTest::state(checkpoint));
        QVERIFY(PageTest::matchesExpected(dumpWithFlags(*page.model()), expected));
        QVERIFY(PageTest::everyHeaderHasTooltip(*page.model()));
    }

    void ddp4RanksAndSharedValues()
    {
        RngPage page;
        QAbstractItemModelTester tester(page.model());
        page.setCheckpoint(PageTest::state(QStringLiteral("ddp4-mlp/checkpoint-0000300")));
        const StateGridModel& model = *page.model();
        QCOMPARE(model.grid().columns,
                 (QStringList{QStringLiteral("checkpoint"), QStringLiteral("rank 0"), QStringLiteral("rank 1"),
                              QStringLiteral("rank 2"), QStringLiteral("rank 3")}));
        // `ckpt show`: rank 0's torch generator d22bccce5946e10f, rank 3's 8cb4cd2e70721ba8
        const StateGrid::Row* torch = findRow(model, QStringLiteral("torch_cpu (rng/torch) fingerprint"));
        QVERIFY(torch);
        QCOMPARE(torch->values,
                 (QStringList{QString(), QStringLiteral("d22bccce5946e10f"), QStringLiteral("3fe92fc9b031af17"),
                              QStringLiteral("161b1ddd5a45e1e6"), QStringLiteral("8cb4cd2e70721ba8")}));
        QVERIFY(torch->differs); // each rank is seeded apart
        QVERIFY(torch->note.isEmpty());
        const StateGrid::Row* position = findRow(model, QStringLiteral("sampler.position"));
        QVERIFY(position);
        QCOMPARE(position->values.mid(1), QStringList(4, QStringLiteral("44")));
        QVERIFY(!position->differs);
        const StateGrid::Row* step = findRow(model, QStringLiteral("global_step [manifest.json]"));
        QVERIFY(step);
        QCOMPARE(step->values.first(), QStringLiteral("300"));
        QVERIFY(!findRow(model, QStringLiteral("global_step [optimizer.pt]"))->differs); // both files say 300

        // only-differences filter keeps just the generator rows (each rank its own stream)
        page.onlyDifferences()->setChecked(true);
        QCOMPARE(page.proxy()->rowCount(), model.differingRows());
        for (int row = 0; row < page.proxy()->rowCount(); ++row)
            QCOMPARE(page.proxy()->index(row, StateGridModel::Part).data().toString(), QStringLiteral("R"));
        page.onlyDifferences()->setChecked(false);
        QCOMPARE(page.proxy()->rowCount(), model.rowCount());

        // copy of a value
        page.view()->setCurrentIndex(page.proxy()->index(0, StateGridModel::FirstValue + 1));
        QCOMPARE(page.view()->selectedText(), model.grid().rows[0].values[1]);
        PageTest::grab(page, QStringLiteral("rng_ddp4"));
    }

    void reseededRanksAreFlagged()
    {
        RngPage page;
        QAbstractItemModelTester tester(page.model());
        page.setCheckpoint(PageTest::state(QStringLiteral("broken/rng-not-restored/checkpoint-0000300")));
        const StateGrid::Row* python = findRow(*page.model(), QStringLiteral("python (rng/python) fingerprint"));
        QVERIFY(python);
        QVERIFY(!python->differs);
        QVERIFY(python->note.contains(QStringLiteral("same generator state")));
        QVERIFY(page.summaryText().contains(QStringLiteral("every rank holds the same generator state")));
        page.onlyDifferences()->setChecked(true); // the flagged rows stay in view
        QCOMPARE(page.proxy()->rowCount(), 3);
        PageTest::grab(page, QStringLiteral("rng_reseeded"));
    }

    void checkpointsSideBySide()
    {
        RngPage page;
        QAbstractItemModelTester tester(page.model());
        QAbstractItemModelTester proxyTester(page.proxy());
        // the good run and the one whose resume restarted the epoch (batch_pos 36 instead of 44)
        page.setCheckpoints({PageTest::state(QStringLiteral("ddp4-mlp/checkpoint-0000300")),
                             PageTest::state(QStringLiteral("broken/data-cursor-wrong/checkpoint-0000300"))},
                            {QStringLiteral("good"), QStringLiteral("data-cursor-wrong")});
        const StateGridModel& model = *page.model();
        QCOMPARE(model.grid().columns, (QStringList{QStringLiteral("good"), QStringLiteral("data-cursor-wrong")}));
        const QStringList differing = differingNames(model);
        QVERIFY(differing.contains(QStringLiteral("batch_pos [optimizer.pt]")));
        for (int rank = 0; rank < 4; ++rank)
            QVERIFY(differing.contains(QStringLiteral("rank %1 · sampler.position").arg(rank)));
        QVERIFY(!differing.contains(QStringLiteral("global_step [manifest.json]")));
        QCOMPARE(findRow(model, QStringLiteral("batch_pos [optimizer.pt]"))->values,
                 (QStringList{QStringLiteral("44"), QStringLiteral("36")}));
        PageTest::grab(page, QStringLiteral("rng_compare"));

        // tiny-mlp has no dropout: its generators do not move between saves, its counters do
        page.setCheckpoints({PageTest::state(QStringLiteral("tiny-mlp/checkpoint-0000050")),
                             PageTest::state(QStringLiteral("tiny-mlp/checkpoint-0000100")),
                             PageTest::state(QStringLiteral("tiny-mlp/checkpoint-0000150"))});
        QCOMPARE(model.grid().columns,
                 (QStringList{QStringLiteral("step 50"), QStringLiteral("step 100"), QStringLiteral("step 150")}));
        QVERIFY(!findRow(model, QStringLiteral("rank 0 · torch_cpu (rng/torch) fingerprint"))->differs);
        QVERIFY(findRow(model, QStringLiteral("global_step [optimizer.pt]"))->differs);
        QVERIFY(PageTest::matchesExpected(dumpWithFlags(model), QStringLiteral("rng_compare_tiny-mlp")));
    }
};

CKPT_UI_TEST_MAIN(TestRngPage)
#include "tst_rngpage.moc"
