// SPDX-License-Identifier: MIT
// The Optimizer data page on the real sample runs: param groups and per-parameter moments
// (golden dumps with statistics), the moment norms across the run checked against the table,
// and a restarted optimizer (sample_runs/broken) as the user sees it.
#include "pagetestutil.h"

#include "ui/pages/checkpointtensorspage.h"
#include "ui/pages/copytableview.h"
#include "ui/pages/momentstatemodel.h"
#include "ui/pages/optimizerpage.h"
#include "ui/pages/paramgroupsmodel.h"
#include "ui/pages/tensorlistmodel.h"
#include "ui/plots/curveplot.h"

#include <QAbstractItemModelTester>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>

#include <cmath>

namespace {

// Loads and waits for the statistics and, with a run, the history.
bool load(OptimizerPage& page, const QString& checkpoint, const QString& runDir = {})
{
    QSignalSpy stats(&page, &OptimizerPage::statsFinished);
    QSignalSpy history(&page, &OptimizerPage::historyFinished);
    page.setCheckpoint(PageTest::state(checkpoint), runDir.isEmpty() ? nullptr : PageTest::run(runDir));
    if (page.momentsModel()->rowCount() > 0 && !stats.wait(20000))
        return false;
    if (!runDir.isEmpty() && history.isEmpty() && !history.wait(30000))
        return false;
    return !page.isComputingStats() && !page.isReadingHistory();
}

QString cell(const QAbstractItemModel& model, int row, int column)
{
    return model.index(row, column).data().toString();
}

} // namespace

class TestOptimizerPage : public QObject {
    Q_OBJECT

private slots:
    void dumps_data()
    {
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<QString>("expected");
        QTest::addRow("ddp4-mlp") << QStringLiteral("ddp4-mlp/checkpoint-0000300") << QStringLiteral("optimizer_ddp4-mlp");
        QTest::addRow("tiny-mlp") << QStringLiteral("tiny-mlp/checkpoint-0000150") << QStringLiteral("optimizer_tiny-mlp");
        QTest::addRow("hf-trainer") << QStringLiteral("hf-trainer/checkpoint-60") << QStringLiteral("optimizer_hf-trainer");
        QTest::addRow("lightning") << QStringLiteral("lightning/checkpoints/epoch=1-step=50.ckpt")
                                   << QStringLiteral("optimizer_lightning");
    }

    void dumps()
    {
        QFETCH(QString, checkpoint);
        QFETCH(QString, expected);
        OptimizerPage page;
        QAbstractItemModelTester groupsTester(page.groupsModel());
        QAbstractItemModelTester momentsTester(page.momentsModel());
        QAbstractItemModelTester proxyTester(page.momentsProxy());
        QVERIFY(load(page, checkpoint));
        QStringList lines{QStringLiteral("# ") + page.headerText(), QStringLiteral("# groups")};
        QStringList header;
        for (int c = 0; c < page.groupsModel()->columnCount(); ++c)
            header.append(page.groupsModel()->headerData(c, Qt::Horizontal).toString());
        lines.append(header.join(QStringLiteral(" | ")));
        lines.append(UiTest::dumpModel(*page.groupsModel()));
        lines.append(QStringLiteral("# moments"));
        lines.append(UiTest::dumpModel(*page.momentsModel()));
        QVERIFY(PageTest::matchesExpected(lines, expected));
        QVERIFY(PageTest::everyHeaderHasTooltip(*page.groupsModel()));
        QVERIFY(PageTest::everyHeaderHasTooltip(*page.momentsModel()));
    }

    // The moments' statistics are those the Tensors page (checked against PyTorch) shows for
    // the same tensors.
    void momentsAgreeWithTensorsPage()
    {
        OptimizerPage page;
        QVERIFY(load(page, QStringLiteral("ddp4-mlp/checkpoint-0000200")));
        CheckpointTensorsPage tensors;
        QSignalSpy done(&tensors, &CheckpointTensorsPage::statsFinished);
        tensors.setCheckpoint(PageTest::state(QStringLiteral("ddp4-mlp/checkpoint-0000200")));
        QVERIFY(done.wait(20000));
        const MomentStateModel& moments = *page.momentsModel();
        QCOMPARE(moments.rowCount(), 12); // 6 parameters x (exp_avg, exp_avg_sq)
        for (const MomentRow& row : moments.rows()) {
            QVERIFY(row.stats && row.stats->problem.isEmpty());
            QCOMPARE(row.step, QStringLiteral("198"));
            const QString key = QStringLiteral("optimizer/state/%1/%2").arg(row.index, row.moment);
            bool found = false;
            for (const TensorRow& t : tensors.model()->tensors()) {
                if (t.name == key && t.file == QStringLiteral("optimizer.pt")) {
                    found = true;
                    QCOMPARE(row.stats->l2, t.stats->l2);
                    QCOMPARE(row.stats->absMax, t.stats->absMax);
                    QCOMPARE(row.shape, t.shape);
                }
            }
            QVERIFY2(found, qPrintable(key));
        }
    }

    void normsAcrossTheRun()
    {
        OptimizerPage page;
        QAbstractItemModelTester tester(page.momentsModel());
        QVERIFY(load(page, QStringLiteral("ddp4-mlp/checkpoint-0000300"), QStringLiteral("ddp4-mlp")));
        const MomentHistory& history = page.history();
        QVERIFY2(history.errors.isEmpty(), qPrintable(history.errors.join(QLatin1Char('\n'))));
        QCOMPARE(history.steps, (std::vector<double>{100, 200, 300}));
        QCOMPARE(history.totalNorm.size(), std::size_t(2));
        // the last point: the root of the summed squared norms in this checkpoint's table
        for (const QString& moment : {QStringLiteral("exp_avg"), QStringLiteral("exp_avg_sq")}) {
            double sum = 0;
            for (const MomentRow& row : page.momentsModel()->rows()) {
                if (row.moment == moment)
                    sum += row.stats->l2 * row.stats->l2;
            }
            const double last = history.totalNorm.at(moment).back();
            QVERIFY(std::abs(last - std::sqrt(sum)) <= 1e-12 * last);
            QCOMPARE(history.total(moment).x.size(), std::size_t(3));
        }
        QCOMPARE(history.byParameter.size(), std::size_t(6));
        QCOMPARE(history.of(QStringLiteral("3.weight"), QStringLiteral("exp_avg")).x.size(), std::size_t(3));

        CurvePlot* plot = page.normPlot();
        QCOMPARE(plot->curveCount(), 2);
        QCOMPARE(plot->markerCount(), 3);
        // selecting a parameter adds its own curves
        page.filterEdit()->setText(QStringLiteral("3.weight"));
        QCOMPARE(page.momentsProxy()->rowCount(), 2);
        page.momentsView()->setCurrentIndex(page.momentsProxy()->index(0, MomentStateModel::Parameter));
        QCOMPARE(plot->curveCount(), 4);
        QCOMPARE(plot->curveName(2), QStringLiteral("exp_avg, 3.weight"));
        QVERIFY(plot->leftRange().lower > 0); // logarithmic axis
        // In a narrow plot the legend wraps into rows: every entry whole, none cut at the edge.
        plot->setParent(nullptr);
        plot->resize(320, 300);
        plot->show();
        QTRY_VERIFY(!plot->legendEntryRects().isEmpty() && plot->legendEntryRects().first().width() > 0);
        QTRY_VERIFY(plot->legendEntryRects().size() == 4 && plot->legendEntryRects().last().width() > 0);
        int rows = 0, lastTop = -1;
        for (const QRect& entry : plot->legendEntryRects()) {
            QVERIFY2(entry.left() >= 0 && entry.right() < plot->width(), qPrintable(QStringLiteral("%1..%2 of %3").arg(entry.left()).arg(entry.right()).arg(plot->width())));
            rows += entry.top() != lastTop;
            lastTop = entry.top();
        }
        QVERIFY(rows >= 2);
        QVERIFY(plot->legendRect().top() >= plot->plotAreaRect().bottom());
        plot->hide();
        plot->setParent(&page);
        PageTest::grab(page, QStringLiteral("optimizer_ddp4"));

        // Ctrl+C copies the selected row, its norm in the Norm column
        page.momentsView()->setCurrentIndex(page.momentsProxy()->index(0, MomentStateModel::Norm));
        const QStringList copied = page.momentsView()->selectedText().split(QLatin1Char('\t'));
        QCOMPARE(copied.size(), int(MomentStateModel::ColumnCount));
        QCOMPARE(copied.at(MomentStateModel::Norm), cell(*page.momentsProxy(), 0, MomentStateModel::Norm));
    }

    void restartedOptimizerShowsItsStep()
    {
        OptimizerPage page;
        QVERIFY(load(page, QStringLiteral("broken/optimizer-not-restored/checkpoint-0000300")));
        for (int row = 0; row < page.momentsModel()->rowCount(); ++row)
            QCOMPARE(cell(*page.momentsModel(), row, MomentStateModel::Step), QStringLiteral("100")); // global step 300
        page.momentsView()->sortByColumn(MomentStateModel::Norm, Qt::AscendingOrder);
        const double smallest = page.momentsProxy()->index(0, MomentStateModel::Norm).data(MomentStateModel::SortRole).toDouble();
        QVERIFY(smallest > 0);
    }

    void lightningMomentumAndNoOptimizer()
    {
        OptimizerPage page;
        QVERIFY(load(page, QStringLiteral("lightning/checkpoints/epoch=0-step=25.ckpt"), QStringLiteral("lightning")));
        QCOMPARE(cell(*page.momentsModel(), 0, MomentStateModel::Moment), QStringLiteral("momentum_buffer"));
        QCOMPARE(cell(*page.momentsModel(), 0, MomentStateModel::Step), QString()); // SGD keeps no step
        QCOMPARE(page.history().steps, (std::vector<double>{25, 50}));
        QCOMPARE(page.normPlot()->curveCount(), 1);

        page.setCheckpoint(nullptr);
        QCOMPARE(page.momentsModel()->rowCount(), 0);
        QCOMPARE(page.groupsModel()->rowCount(), 0);
        QCOMPARE(page.normPlot()->curveCount(), 0);
    }
};

CKPT_UI_TEST_MAIN(TestOptimizerPage)
#include "tst_optimizerpage.moc"
