// SPDX-License-Identifier: MIT
// The timeline and the report model, without a window: resume points from pair findings, from
// probes a resume recorded and from logs that restart; which side of the resume each checkpoint is
// on; the first differing part in the guide's diagnosis order; where each strip breaks. Then a golden
// dump of `ckpt report` for two sample runs (CKPT_UPDATE_GOLDEN=1 rewrites it).
#include "ckpt/report/run_report.h"
#include "ckpt/report/timeline.h"
#include "ckpt/state/run_discovery.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

using testsupport::q;
using testsupport::runCkpt;

namespace {

std::string sample(const std::string& rel) { return std::string(CKPT_SOURCE_DIR) + "/sample_runs/" + rel; }

ckpt::Timeline timelineOf(const std::string& run)
{
    const auto runs = ckpt::discoverRuns(run);
    if (runs.size() != 1)
        throw std::runtime_error(run + ": not one run");
    ckpt::CheckOptions options;
    options.audit = false;
    return ckpt::buildTimeline(runs.front().history, ckpt::checkPaths({run}, options));
}

std::string name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

} // namespace

class TestTimeline : public QObject {
    Q_OBJECT

private slots:
    void resumeFaultsAt200_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::addColumn<QString>("component");
        QTest::addColumn<QString>("strip");
        QTest::newRow("data-cursor-wrong") << "data-cursor-wrong" << "data" << "data cursor";
        QTest::newRow("optimizer-not-restored") << "optimizer-not-restored" << "optimizer" << "optimizer step";
        QTest::newRow("rng-not-restored") << "rng-not-restored" << "rng" << "rng changed";
        QTest::newRow("scaler-reset") << "scaler-reset" << "scaler" << "loss scale";
        QTest::newRow("scheduler-stepped-twice") << "scheduler-stepped-twice" << "scheduler" << "lr";
    }

    void resumeFaultsAt200()
    {
        QFETCH(QString, fault);
        QFETCH(QString, component);
        QFETCH(QString, strip);
        const ckpt::Timeline t = timelineOf(sample("broken/" + fault.toStdString()));
        QCOMPARE(t.resumes.size(), std::size_t(1));
        const ckpt::ResumePoint& r = t.resumes.front();
        // the probe the resume recorded narrows the pair's band (200, 300) to the step itself
        QCOMPARE(r.from, int64_t(200));
        QCOMPARE(r.to, int64_t(200));
        QCOMPARE(q(name(r.before)), QByteArray("checkpoint-0000200"));
        QCOMPARE(q(name(r.after)), QByteArray("checkpoint-0000300"));
        QCOMPARE(q(r.firstComponent), component.toUtf8());
        QCOMPARE(r.evidence.size(), std::size_t(2)); // the pair's findings and the probe
        bool broke = false;
        for (const auto& s : t.strips) {
            if (q(s.name) == strip.toUtf8())
                broke = std::find(s.breaks.begin(), s.breaks.end(), 200) != s.breaks.end();
        }
        QVERIFY2(broke, qPrintable(strip + " does not break at 200"));
        // markers: both checkpoints, the later one coloured by the pair's worst finding
        QCOMPARE(t.checkpoints.size(), std::size_t(2));
        QVERIFY(t.checkpoints.back().worst.has_value());
        QVERIFY(t.checkpoints.back().latest);
    }

    void cleanRunsHaveNoResume_data()
    {
        QTest::addColumn<QString>("run");
        for (const char* r : {"tiny-mlp", "ddp4-mlp", "hf-trainer", "lightning", "deepspeed", "accelerate", "dcp"})
            QTest::newRow(r) << r;
    }

    void cleanRunsHaveNoResume()
    {
        QFETCH(QString, run);
        const ckpt::Timeline t = timelineOf(sample(run.toStdString()));
        QVERIFY2(t.resumes.empty(), t.resumes.empty() ? "" : t.resumes.front().evidence.front().c_str());
        QVERIFY(!t.checkpoints.empty());
        for (const auto& s : t.strips)
            QVERIFY2(s.breaks.empty(), s.name.c_str());
        if (run == "tiny-mlp" || run == "ddp4-mlp") { // CosineAnnealingLR: its curve is reconstructed
            const auto lr = std::find_if(t.strips.begin(), t.strips.end(), [](const ckpt::TimelineStrip& s) { return s.name == "lr"; });
            QVERIFY(lr != t.strips.end());
            QVERIFY(lr->reconstructed.size() >= 100);
            QCOMPARE(lr->reconstructed.front().first, int64_t(0));
        }
    }

    void logsThatRestart()
    {
        // make_resume_loop.py's logs-restart: saved at 10, 20; died at 25; resumed from 20 (its probe
        // says so) and logged 21-25 again; saved at 30
        const ckpt::Timeline t = timelineOf(std::string(CKPT_TESTDATA_DIR) + "/resume-loop/logs-restart");
        QCOMPARE(t.resumes.size(), std::size_t(1));
        const ckpt::ResumePoint& r = t.resumes.front();
        QCOMPARE(r.from, int64_t(20));
        QCOMPARE(q(name(r.before)), QByteArray("checkpoint-0000020"));
        QCOMPARE(q(name(r.after)), QByteArray("checkpoint-0000030"));
        QCOMPARE(r.evidence.size(), std::size_t(2));
        QVERIFY(r.evidence[1].find("restart at 21 after 25") != std::string::npos);
        QVERIFY(r.firstComponent.empty()); // a clean resume: nothing differs
        QCOMPARE(t.checkpoints.size(), std::size_t(3));
        QCOMPARE(t.logged.at("loss").size(), std::size_t(35)); // 25 + 10 steps, 21-25 twice
        QCOMPARE(*t.firstStep, int64_t(1));
        QCOMPARE(*t.lastStep, int64_t(30));
    }

    void reportPairFollowsTheResume()
    {
        ckpt::ReportOptions options;
        options.audit = false;
        const ckpt::RunReport r = ckpt::buildRunReport(sample("broken/optimizer-not-restored"), options);
        QVERIFY(r.pair);
        QCOMPARE(q(name(r.pair->a)), QByteArray("checkpoint-0000200"));
        QCOMPARE(q(r.pair->why), QByteArray("the two sides of the resume at step 200"));
        QVERIFY(!r.pair->tensors.empty());
        QVERIFY(!r.probes.empty());
        QCOMPARE(q(r.probes.front().recordedBy), QByteArray("resume"));
        const nlohmann::json j = ckpt::runReportToJson(r);
        for (const char* key : {"path", "kind", "check", "states", "timeline", "pair", "probes", "validations"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j["states"].size(), std::size_t(2));
    }

    void reportOfEverySampleRun()
    {
        for (const char* run : {"tiny-mlp", "ddp4-mlp", "hf-trainer", "lightning", "deepspeed", "accelerate", "dcp", "dcp-no-collectives",
                                "broken/data-cursor-wrong", "broken/hash-mismatch", "broken/missing-rank-rng", "broken/no-complete-marker",
                                "broken/optimizer-not-restored", "broken/rng-not-restored", "broken/scaler-reset",
                                "broken/scheduler-stepped-twice"}) {
            const auto md = runCkpt({"report", QString::fromStdString(sample(run))});
            QVERIFY2(md.code == 0 && md.out.startsWith("# Checkpoint report: "), run);
            const auto js = runCkpt({"report", QString::fromStdString(sample(run)), "--format", "json"});
            QVERIFY2(js.code == 0, run);
            const nlohmann::json j = nlohmann::json::parse(js.out.toStdString());
            QVERIFY2(j["kind"] == "run" && j["timeline"].is_object() && !j["states"].empty(), run);
        }
        // -o FILE, and a path that is not there
        QTemporaryDir tmp;
        const QString file = tmp.filePath("r.md");
        QCOMPARE(runCkpt({"report", QString::fromStdString(sample("tiny-mlp")), "-o", file}).code, 0);
        QVERIFY(QFileInfo(file).size() > 1000);
        const auto missing = runCkpt({"report", "/nonexistent/run"});
        QCOMPARE(missing.code, 2);
        QVERIFY(missing.err.contains("/nonexistent/run"));
    }

    void goldenReports_data()
    {
        QTest::addColumn<QString>("run");
        QTest::newRow("scaler-reset") << "broken/scaler-reset";
        QTest::newRow("tiny-mlp") << "tiny-mlp";
    }

    void goldenReports()
    {
        QFETCH(QString, run);
        QDir::setCurrent(QStringLiteral(CKPT_SOURCE_DIR)); // paths in the report relative to the repository
        const auto result = runCkpt({"report", "sample_runs/" + run});
        QCOMPARE(result.code, 0);
        const QString golden = QStringLiteral(CKPT_SOURCE_DIR "/tests/core/golden/report_") + run.section('/', -1) + ".md";
        if (qEnvironmentVariableIsSet("CKPT_UPDATE_GOLDEN")) {
            QFile f(golden);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(result.out);
            QSKIP("golden file rewritten");
        }
        QFile f(golden);
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(golden + " is missing (CKPT_UPDATE_GOLDEN=1 writes it)"));
        const QByteArray want = f.readAll();
        if (result.out != want) {
            const QList<QByteArray> a = result.out.split('\n'), b = want.split('\n');
            for (int i = 0; i < std::min(a.size(), b.size()); ++i) {
                if (a[i] != b[i])
                    QFAIL(qPrintable(QStringLiteral("line %1 differs:\n got: %2\nwant: %3").arg(i + 1).arg(QString(a[i]), QString(b[i]))));
            }
            QFAIL("the report has a different number of lines than the golden file");
        }
    }
};

QTEST_GUILESS_MAIN(TestTimeline)
#include "tst_timeline.moc"
