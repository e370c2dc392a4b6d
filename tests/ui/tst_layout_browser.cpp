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

    // Megatron-LM's other layouts and NeMo's (make_layout_runs.py, make_nemo_runs.py): virtual stages,
    // experts, the distributed optimizer and torch_dist as one checkpoint per iteration; NeMo's -last
    // saves as the latest mark, its per-rank folders as one checkpoint per step, the .nemo after the
    // steps, and a folder of .nemo files as separate models.
    void megatronAndNemoLayouts()
    {
        RunBrowserModel runs;
        QAbstractItemModelTester tester(&runs);
        RunLoader loader;
        QObject::connect(&loader, &RunLoader::runAvailable, &runs, &RunBrowserModel::addRun);
        QSignalSpy failed(&loader, &RunLoader::openFailed);
        loader.open({data("layout_runs/megatron-vpp"), data("layout_runs/megatron-moe-ep2"), data("layout_runs/megatron-distopt"),
                     data("layout_runs/megatron-torch-dist"), data("nemo_runs/nemo1-gpt"), data("nemo_runs/nemo1-gpt-tp2"),
                     data("nemo_runs/nemo2-gpt"), data("nemo_runs/nemo-archive")});
        QTRY_VERIFY_WITH_TIMEOUT(!loader.isBusy(), 60000);
        QCOMPARE(failed.count(), 0);
        const QStringList expected{
            QStringLiteral("megatron-vpp | 10–30 | "),
            QStringLiteral("  iter_0000010 | 10 | "),
            QStringLiteral("  iter_0000020 | 20 | "),
            QStringLiteral("  iter_0000030 | 30 | latest"),
            QStringLiteral("megatron-moe-ep2 | 10–20 | "),
            QStringLiteral("  iter_0000010 | 10 | "),
            QStringLiteral("  iter_0000020 | 20 | latest"),
            QStringLiteral("megatron-distopt | 10–30 | "),
            QStringLiteral("  iter_0000010 | 10 | "),
            QStringLiteral("  iter_0000020 | 20 | "),
            QStringLiteral("  iter_0000030 | 30 | latest"),
            QStringLiteral("megatron-torch-dist | 20–30 | "),
            QStringLiteral("  iter_0000020 | 20 | "),
            QStringLiteral("  iter_0000030 | 30 | latest"),
            QStringLiteral("nemo1-gpt | 20–40 | "),
            QStringLiteral("  megatron_gpt--val_loss=3.67-step=20-consumed_samples=160.0.ckpt | 20 | "),
            QStringLiteral("  megatron_gpt--val_loss=3.56-step=30-consumed_samples=240.0.ckpt | 30 | "),
            QStringLiteral("  megatron_gpt--val_loss=3.52-step=40-consumed_samples=320.0.ckpt | 40 | latest · best"),
            QStringLiteral("  megatron_gpt.nemo | ? | "),
            QStringLiteral("nemo1-gpt-tp2 | 10–20 | "),
            QStringLiteral("  megatron_gpt--val_loss=4.02-step=10-consumed_samples=80.0.ckpt | 10 | "),
            QStringLiteral("  megatron_gpt--val_loss=3.94-step=20-consumed_samples=160.0.ckpt | 20 | latest · best"),
            QStringLiteral("  megatron_gpt.nemo | ? | "),
            QStringLiteral("nemo2-gpt | 20–30 | "),
            QStringLiteral("  default--reduced_train_loss=3.5741-epoch=0-consumed_samples=160.0 | 20 | "),
            QStringLiteral("  default--reduced_train_loss=3.5172-epoch=0-consumed_samples=240.0 | 30 | latest"),
            QStringLiteral("megatron_gpt_tiny.nemo |  | "),
            QStringLiteral("  megatron_gpt_tiny.nemo | ? | latest"),
            QStringLiteral("megatron_gpt_tiny_dist.nemo |  | "),
            QStringLiteral("  megatron_gpt_tiny_dist.nemo | ? | latest"),
            QStringLiteral("megatron_gpt_tiny_gz.nemo |  | "),
            QStringLiteral("  megatron_gpt_tiny_gz.nemo | ? | latest"),
            QStringLiteral("megatron_gpt_tiny_tp2.nemo |  | "),
            QStringLiteral("  megatron_gpt_tiny_tp2.nemo | ? | latest"),
        };
        QVERIFY(UiTest::compareLines(stepsAndMarks(runs), expected));
    }
};

QTEST_MAIN(TestLayoutBrowser)
#include "tst_layout_browser.moc"
