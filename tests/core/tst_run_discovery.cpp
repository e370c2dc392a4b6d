// SPDX-License-Identifier: MIT
// discoverRuns on the checked-in sample runs: what a path the user opens stands for, the same for
// every command and the desktop app.
#include "ckpt/state/run_discovery.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

using namespace ckpt;

namespace {

bool writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

QString samples(const char* relative = "")
{
    return QDir::cleanPath(QStringLiteral(CKPT_SOURCE_DIR "/sample_runs/") + QLatin1String(relative));
}

QStringList summary(const std::vector<DiscoveredRun>& runs)
{
    QStringList lines;
    const std::filesystem::path root(samples().toStdString());
    for (const DiscoveredRun& run : runs) {
        QStringList checkpoints;
        for (const RunCheckpoint& c : run.history.checkpoints) {
            QString text = QString::fromStdString(std::filesystem::path(c.path).filename().string());
            if (c.latest)
                text += QStringLiteral("[latest]");
            if (c.best)
                text += QStringLiteral("[best]");
            if (!c.complete)
                text += QStringLiteral("[incomplete]");
            checkpoints.append(text);
        }
        lines.append(QString::fromStdString(std::filesystem::path(run.path).lexically_relative(root).string())
                     + (run.singleCheckpoint ? QStringLiteral(" (single): ") : QStringLiteral(": ")) + checkpoints.join(QLatin1Char(' ')));
    }
    return lines;
}

} // namespace

class TestRunDiscovery : public QObject {
    Q_OBJECT

private slots:
    void folderOfRunsOpensEachRun()
    {
        const QStringList expected{
            QStringLiteral("accelerate: checkpoint_0 checkpoint_1[latest]"),
            QStringLiteral("broken/data-cursor-wrong: checkpoint-0000200 checkpoint-0000300[latest]"),
            QStringLiteral("broken/hash-mismatch: checkpoint-0000200 checkpoint-0000300[latest]"),
            QStringLiteral("broken/missing-rank-rng: checkpoint-0000200 checkpoint-0000300[latest]"),
            QStringLiteral("broken/no-complete-marker: checkpoint-0000200 checkpoint-0000300[latest][incomplete]"),
            QStringLiteral("broken/optimizer-not-restored: checkpoint-0000200 checkpoint-0000300[latest]"),
            QStringLiteral("broken/rng-not-restored: checkpoint-0000200 checkpoint-0000300[latest]"),
            QStringLiteral("broken/scaler-reset: checkpoint-0000200 checkpoint-0000300[latest]"),
            QStringLiteral("broken/scheduler-stepped-twice: checkpoint-0000200 checkpoint-0000300[latest]"),
            QStringLiteral("dcp: step-15 step-30[latest]"),
            QStringLiteral("dcp-no-collectives: step-30[latest]"),
            QStringLiteral("ddp4-mlp: checkpoint-0000100 checkpoint-0000200 checkpoint-0000300[latest]"),
            QStringLiteral("deepspeed: global_step20 global_step40[latest]"),
            QStringLiteral("hf-trainer: checkpoint-20 checkpoint-40 checkpoint-60[latest][best]"),
            QStringLiteral("lightning: epoch=0-step=25.ckpt epoch=1-step=50.ckpt[latest][best]"),
            QStringLiteral("tiny-mlp: checkpoint-0000050 checkpoint-0000100 checkpoint-0000150[latest]"),
        };
        QCOMPARE(summary(discoverRuns(samples().toStdString())), expected);
    }

    void runFolderIsOneRunWithItsMetrics()
    {
        const auto runs = discoverRuns(samples("ddp4-mlp/").toStdString()); // a trailing slash as shells complete it
        QCOMPARE(runs.size(), std::size_t(1));
        QCOMPARE(summary(runs).first(), QStringLiteral("ddp4-mlp: checkpoint-0000100 checkpoint-0000200 checkpoint-0000300[latest]"));
        QVERIFY(runs.front().history.series.contains("loss"));
    }

    void checkpointsInASubfolderBelongToTheRun()
    {
        const auto runs = discoverRuns(samples("lightning").toStdString());
        QCOMPARE(runs.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(runs.front().path), samples("lightning"));
        QVERIFY(runs.front().history.series.contains("train_loss")); // metrics.csv beside checkpoints/
    }

    void checkpointFolderAndFileOpenAlone()
    {
        QCOMPARE(summary(discoverRuns(samples("hf-trainer/checkpoint-40").toStdString())),
                 QStringList{QStringLiteral("hf-trainer/checkpoint-40 (single): checkpoint-40[latest]")});
        const auto file = discoverRuns(samples("lightning/checkpoints/epoch=0-step=25.ckpt").toStdString());
        QCOMPARE(file.size(), std::size_t(1));
        QVERIFY(file.front().singleCheckpoint);
        QCOMPARE(file.front().history.checkpoints.front().step, std::optional<int64_t>(25));
    }

    void looseFilesAreOneRun()
    {
        QTemporaryDir folder;
        QVERIFY(folder.isValid());
        QVERIFY(QFile::copy(samples("hf-trainer/checkpoint-20/pytorch_model.bin"), folder.filePath(QStringLiteral("weights.bin"))));
        QVERIFY(writeFile(folder.filePath(QStringLiteral("broken.pt")), "not a checkpoint"));
        QVERIFY(writeFile(folder.filePath(QStringLiteral("notes.txt")), "not a checkpoint either"));
        const auto runs = discoverRuns(folder.path().toStdString());
        QCOMPARE(runs.size(), std::size_t(1));
        QCOMPARE(runs.front().history.checkpoints.size(), std::size_t(2));
        QVERIFY(runs.front().history.checkpoints.front().path.ends_with("broken.pt"));
        QVERIFY(runs.front().history.checkpoints.back().path.ends_with("weights.bin"));
    }

    void nothingThereIsAnErrorNamingThePath()
    {
        QTemporaryDir empty;
        QVERIFY(empty.isValid());
        try {
            discoverRuns(empty.path().toStdString());
            QFAIL("an empty folder opened as a run");
        } catch (const std::runtime_error& e) {
            QVERIFY2(QString::fromUtf8(e.what()).startsWith(empty.path() + QStringLiteral(": no checkpoints found")), e.what());
        }
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, discoverRuns(empty.filePath(QStringLiteral("absent")).toStdString()));
    }
};

QTEST_GUILESS_MAIN(TestRunDiscovery)
#include "tst_run_discovery.moc"
