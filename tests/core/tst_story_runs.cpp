// SPDX-License-Identifier: MIT
// Issue 14, "every story": runs that reproduce the failure stories of anchors.md §3 the files can
// reveal (tests/fixtures/make_story_runs.py, each a healthy run plus the story's one mistake), and
// the rule, component and severity that catch each, with a message naming its mechanism.
#include "test_support.h"

#include <QTest>

using namespace testsupport;
using nlohmann::json;

class TestStoryRuns : public QObject {
    Q_OBJECT
private slots:
    void storyCaught_data()
    {
        QTest::addColumn<QString>("run");
        QTest::addColumn<QString>("rule");
        QTest::addColumn<QString>("component");
        QTest::addColumn<QString>("severity");
        QTest::addColumn<QString>("says");
        auto row = [](const char* run, const char* rule, const char* component, const char* severity, const char* says) {
            QTest::newRow(run) << run << rule << component << severity << says;
        };
        row("rng-not-loaded", "rng.restarted", "rng", "warning", "restarted from its seed");            // story 8
        row("rng-except", "rng.restarted", "rng", "warning", "back in the state it had at step 10");    // more: Relax PR#317
        row("accum-skip", "data.cursor-vs-step", "data", "error", "global step × accumulation is 60"); // story 11
        row("sam-no-momentum", "optimizer.state-missing", "optimizer", "warning", "none of its momentum_buffer (only old_p)"); // story 18
        row("param-order", "optimizer.moment-shape", "optimizer", "error", "but the parameter has");  // story 19
        row("epoch-skipped", "data.cursor-delta", "data", "error", "16 batch(es) skipped");           // more: verl#7401
        row("dp-rank-dropped", "data.dp-ranks-changed", "data", "warning", "dp rank(s) 2, 3 were dropped"); // story 14
        row("loss-scaler-counters", "scaler.counters-missing", "scaler", "warning", "but not the counter of clean steps"); // story 7
        row("scaler-not-saved", "scaler.missing", "scaler", "warning", "fp16 mixed precision is recorded"); // story 5
        row("batches-yielded-reset", "data.cursor-delta", "data", "error", "8 batch(es) trained twice"); // more: KempnerForge#57
        row("multisteplr-lag", "scheduler.position", "scheduler", "error", "position 1 but training is at global step 12 or epoch 2"); // story 3
        row("hf-export-empty-entry", "integrity.safetensors-index", "integrity", "error", "unknown dtype ''"); // story 20
        row("hf-export-empty-entry/step-30", "integrity.safetensors-index", "integrity", "error", "unknown dtype ''"); // the folder alone
        row("scheduler-rebuilt", "scheduler.lr-rose", "scheduler", "warning", "and neither saved scheduler state"); // story 4
        row("amp-scale-lost", "scaler.unreachable", "scaler", "error", "cannot follow from A's");            // story 6
        row("sampler-epoch-reset", "data.sampler-changed", "data", "warning", "the epoch went back from 2 to 1"); // story 10
        row("zero-master-differs", "optimizer.master-weights-differ", "optimizer", "error",
            "module weights are not the rounding of the optimizer's fp32 master copy");                     // story 17
        row("dcp-initial-lr", "scheduler.position", "scheduler", "error", "position 10 but training is at global step 20"); // story 1
    }
    void storyCaught()
    {
        QFETCH(QString, run);
        QFETCH(QString, rule);
        QFETCH(QString, component);
        QFETCH(QString, severity);
        QFETCH(QString, says);
        const QString path = QStringLiteral(CKPT_TESTDATA_DIR "/story_runs/") + run;
        const CkptRun r = runCkpt({QStringLiteral("check"), path, QStringLiteral("--json")});
        QCOMPARE(r.code, 1); // a warning or an error
        const json report = json::parse(r.out.toStdString());
        bool found = false, named = false;
        for (const auto& f : report["findings"]) {
            if (f["rule"] != rule.toStdString())
                continue;
            found = true;
            QCOMPARE(QString::fromStdString(f["component"].get<std::string>()), component);
            QCOMPARE(QString::fromStdString(f["severity"].get<std::string>()), severity);
            named = named || f["message"].get<std::string>().find(says.toStdString()) != std::string::npos;
        }
        QVERIFY2(found, r.out.constData());
        QVERIFY2(named, ("no " + rule + " finding says: " + says).toUtf8().constData());
    }
};

QTEST_GUILESS_MAIN(TestStoryRuns)
#include "tst_story_runs.moc"
