// SPDX-License-Identifier: MIT
// Issue 15's done-when: the run browser shows each layout as the right number of checkpoints, with
// their steps and marks, loaded the way the window loads them (RunLoader in the background). The
// runs follow the frameworks' save code (tests/fixtures/make_layout_runs.py, make_model_folders.py);
// the expected lines are the golden dump of the run-browser model.
#include "uitestutil.h"

#include "ui/models/runbrowsermodel.h"
#include "ui/runloader.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>

namespace {

QString data(const char* relative) { return QStringLiteral(CKPT_TESTDATA_DIR "/") + QLatin1String(relative); }

// Step, name and marks only: the findings column has its own tests.
QStringList stepsAndMarks(const QAbstractItemModel& model)
{
    QStringList lines;
    for (const QString& line : UiTest::dumpModel(model)) {
        QStringList cells = line.split(QStringLiteral(" | "));
        while (cells.size() > 3)
            cells.removeLast();
        lines << cells.join(QStringLiteral(" | "));
    }
    return lines;
}

} // namespace

class TestLayoutBrowser : public QObject {
    Q_OBJECT

private slots:
    void eachLayoutIsItsCheckpoints()
    {
        RunBrowserModel runs;
        QAbstractItemModelTester tester(&runs);
        RunLoader loader;
        QObject::connect(&loader, &RunLoader::runAvailable, &runs, &RunBrowserModel::addRun);
        QSignalSpy failed(&loader, &RunLoader::openFailed);
        loader.open({data("layout_runs/megatron-tp2-pp2"), data("layout_runs/fairseq"), data("layout_runs/composer"),
                     data("layout_runs/torchtune"), data("model_folders/llama-sharded"), data("model_folders/trainer-sharded")});
        QTRY_VERIFY_WITH_TIMEOUT(!loader.isBusy(), 60000);
        QCOMPARE(failed.count(), 0);
        const QStringList expected{
            QStringLiteral("megatron-tp2-pp2 | 10–30 | "),
            QStringLiteral("  iter_0000010 | 10 | "),
            QStringLiteral("  iter_0000020 | 20 | "),
            QStringLiteral("  iter_0000030 | 30 | latest"),
            QStringLiteral("fairseq | 20–60 | "),
            QStringLiteral("  checkpoint_1_20.pt | 20 | "),
            QStringLiteral("  checkpoint1.pt | 30 | "),
            QStringLiteral("  checkpoint_2_40.pt | 40 | "),
            QStringLiteral("  checkpoint2.pt | 60 | latest · best"),
            QStringLiteral("composer | 4–12 | "),
            QStringLiteral("  ep1-ba4-rank0.pt | 4 | "),
            QStringLiteral("  ep2-ba8-rank0.pt | 8 | "),
            QStringLiteral("  ep3-ba12-rank0.pt | 12 | latest"),
            QStringLiteral("torchtune | 4 | "),
            QStringLiteral("  epoch_0 | 4 | latest"),
            QStringLiteral("  epoch_1 | ? | "),
            QStringLiteral("llama-sharded |  | "),
            QStringLiteral("  llama-sharded | ? | latest"),
            QStringLiteral("trainer-sharded | 10–20 | "),
            QStringLiteral("  checkpoint-10 | 10 | "),
            QStringLiteral("  checkpoint-20 | 20 | latest"),
        };
        QVERIFY(UiTest::compareLines(stepsAndMarks(runs), expected));
    }
};

QTEST_MAIN(TestLayoutBrowser)
#include "tst_layout_browser.moc"
