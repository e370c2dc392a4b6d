// SPDX-License-Identifier: MIT
// ckpt validate / ckpt-validate on the sample runs, on the CPU: the clean runs' probes replay
// exactly; each broken run's resume fault is named first, in the guide's diagnosis order; the
// launcher prefix path (with `env` standing in for ssh/srun) streams the same events.
#include "ckpt/io/launcher.h"
#include "test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <set>

using testsupport::q;
using testsupport::runCkpt;

namespace fs = std::filesystem;

namespace {

QString sample(const char* rel)
{
    return QString::fromStdString(std::string(CKPT_SOURCE_DIR) + "/sample_runs/" + rel);
}

std::vector<nlohmann::json> lines(const QByteArray& out)
{
    std::vector<nlohmann::json> events;
    for (const QByteArray& line : out.split('\n')) {
        if (!line.trimmed().isEmpty())
            events.push_back(nlohmann::json::parse(line.toStdString()));
    }
    return events;
}

nlohmann::json componentOf(const nlohmann::json& report, const std::string& name)
{
    for (const auto& c : report["components"])
        if (c["name"] == name)
            return c;
    return {};
}

} // namespace

class TestValidate : public QObject {
    Q_OBJECT

private slots:
    void cleanRunsReplayExactly_data()
    {
        QTest::addColumn<QString>("checkpoint");
        QTest::newRow("tiny-mlp 50") << sample("tiny-mlp/checkpoint-0000050");
        QTest::newRow("tiny-mlp 100") << sample("tiny-mlp/checkpoint-0000100");
        QTest::newRow("ddp4-mlp 100") << sample("ddp4-mlp/checkpoint-0000100");
        QTest::newRow("ddp4-mlp 200") << sample("ddp4-mlp/checkpoint-0000200");
    }

    void cleanRunsReplayExactly()
    {
        QFETCH(QString, checkpoint);
        const auto run = runCkpt({"validate", checkpoint, "--device", "cpu", "--json"});
        QVERIFY2(run.code == 0, run.out.right(2000).constData());
        const auto events = lines(run.out);
        QVERIFY(events.size() > 2);
        QCOMPARE(q(events.front()["event"].get<std::string>()), QByteArray("progress"));
        const nlohmann::json& report = events.back();
        QCOMPARE(q(report["event"].get<std::string>()), QByteArray("report"));
        QCOMPARE(q(report["verdict"].get<std::string>()), QByteArray("pass"));
        QVERIFY(report["first_difference"].is_null());
        QCOMPARE(q(report["device"].get<std::string>()), QByteArray("cpu"));
        QCOMPARE(q(report["optimizer_mode"].get<std::string>()), QByteArray("step"));
        // Bit for bit: every compared check is exact, the update's results included.
        for (const auto& c : report["components"]) {
            for (const auto& ch : c["checks"])
                QVERIFY2(ch["verdict"] == "exact" || ch["verdict"] == "not compared", ch.dump().c_str());
        }
        const auto numerics = componentOf(report, "numerics");
        QCOMPARE(q(numerics["verdict"].get<std::string>()), QByteArray("exact"));
        bool paramsChecked = false;
        for (const auto& ch : numerics["checks"]) {
            if (ch["name"] == "parameters after the update") {
                paramsChecked = true;
                QVERIFY(ch["measured"]["tensors"].get<int>() >= 4);
                QCOMPARE(ch["measured"]["exact"].get<int>(), ch["measured"]["tensors"].get<int>());
            }
        }
        QVERIFY(paramsChecked);
    }

    void brokenRunsNameTheirFaultFirst_data()
    {
        QTest::addColumn<QString>("run");
        QTest::addColumn<QString>("component");
        QTest::addColumn<QString>("check");
        QTest::newRow("data cursor wrong") << "data-cursor-wrong" << "batch" << "cursor batch_pos";
        QTest::newRow("optimizer not restored") << "optimizer-not-restored" << "optimizer" << "per-parameter step";
        QTest::newRow("scheduler stepped twice") << "scheduler-stepped-twice" << "lr_scheduler" << "scheduler position after the update";
        QTest::newRow("scaler reset") << "scaler-reset" << "scaler" << "scale";
        QTest::newRow("rng not restored") << "rng-not-restored" << "rng" << "rank 0 torch_cpu before";
    }

    void brokenRunsNameTheirFaultFirst()
    {
        QFETCH(QString, run);
        QFETCH(QString, component);
        QFETCH(QString, check);
        const QString ckpt = sample("broken/") + run + QStringLiteral("/checkpoint-0000200");
        const auto result = runCkpt({"validate", ckpt, "--device", "cpu", "--json"});
        QCOMPARE(result.code, 1);
        const nlohmann::json report = lines(result.out).back();
        QCOMPARE(q(report["verdict"].get<std::string>()), QByteArray("differs"));
        QCOMPARE(QString::fromStdString(report["first_difference"].get<std::string>()), component);
        // Everything before it in the diagnosis order is exact.
        for (const auto& c : report["components"]) {
            if (c["name"] == component.toStdString())
                break;
            QVERIFY2(c["verdict"] == "exact" || c["verdict"] == "not compared", c.dump().c_str());
        }
        bool found = false;
        const nlohmann::json named = componentOf(report, component.toStdString());
        for (const auto& ch : named["checks"]) {
            if (ch["name"] == check.toStdString()) {
                found = true;
                QCOMPARE(q(ch["verdict"].get<std::string>()), QByteArray("differs"));
                QVERIFY(ch.contains("measured"));
            }
        }
        QVERIFY2(found, report.dump().substr(0, 2000).c_str());
    }

    void realDdpRunReplaysExactly()
    {
        // Two gloo processes (tests/fixtures/make_ddp_probe.py): DDP's all-reduce, each rank's dropout
        // stream, SGD with nesterov momentum, StepLR; each rank wrote its own batch and generators.
        const QString ckpt = QStringLiteral(CKPT_TESTDATA_DIR "/ddp-probe/checkpoint-0000003");
        const auto run = runCkpt({"validate", ckpt, "--device", "cpu", "--json"});
        QVERIFY2(run.code == 0, run.out.right(2000).constData());
        const nlohmann::json report = lines(run.out).back();
        QCOMPARE(q(report["verdict"].get<std::string>()), QByteArray("pass"));
        QCOMPARE(q(report["optimizer_mode"].get<std::string>()), QByteArray("step"));
        int rankChecks = 0;
        const nlohmann::json rng = componentOf(report, "rng");
        for (const auto& ch : rng["checks"])
            rankChecks += ch["name"].get<std::string>().find("torch_cpu after") != std::string::npos && ch["verdict"] == "exact";
        QCOMPARE(rankChecks, 2);
        for (const auto& c : report["components"])
            QVERIFY2(c["verdict"] == "exact" || c["verdict"] == "not compared", c.dump().c_str());
    }

    void humanOutputNamesTheFault()
    {
        const auto run = runCkpt({"validate", sample("broken/scaler-reset/checkpoint-0000200"), "--device", "cpu"});
        QCOMPARE(run.code, 1);
        QVERIFY(run.out.contains("verdict: differs (first difference: scaler)"));
        QVERIFY(run.out.contains("scale: differs - checkpoint 16384.0, probe 65536.0"));
    }

    void missingProbeCannotRun()
    {
        const auto run = runCkpt({"validate", sample("ddp4-mlp/checkpoint-0000300"), "--device", "cpu", "--json"});
        QCOMPARE(run.code, 2);
        const nlohmann::json report = lines(run.out).back();
        QCOMPARE(q(report["verdict"].get<std::string>()), QByteArray("cannot run"));
        QVERIFY(report["error"].get<std::string>().find("probes/after-checkpoint-0000300/probe.json") != std::string::npos);
    }

    void strictLoadReportsKeysAndShapes()
    {
        // tiny-mlp's W (8-32-1) into ddp4-mlp's module (16-64-64-1): no silent strict=False.
        const auto run = runCkpt({"validate", sample("tiny-mlp/checkpoint-0000100"), "--probe",
                                  sample("ddp4-mlp/probes/after-checkpoint-0000100"), "--device", "cpu", "--json"});
        QCOMPARE(run.code, 2);
        const nlohmann::json report = lines(run.out).back();
        std::set<std::string> kinds;
        for (const auto& issue : report["load"])
            kinds.insert(issue["kind"].get<std::string>());
        QVERIFY(kinds.contains("shape"));
        QVERIFY(kinds.contains("missing")); // 3.weight, 3.bias, 6.* are not in tiny-mlp's W
        QVERIFY(report["error"].get<std::string>().find("strictly") != std::string::npos);
    }

    void unknownDeviceCannotRun()
    {
        const auto run = runCkpt({"validate", sample("tiny-mlp/checkpoint-0000050"), "--device", "tpu", "--json"});
        QCOMPARE(run.code, 2);
        QVERIFY(lines(run.out).back().contains("error"));
    }

    void launcherPrefixStreamsThrough()
    {
        // `env` stands in for `ssh HOST --` / `srun ... --`: a command that runs the rest of its argv.
        // The checkpoint's path has a space in it and must arrive unchanged.
        QTemporaryDir tmp;
        const fs::path root = fs::path(tmp.path().toStdString()) / "run with space";
        fs::create_directories(root / "probes");
        fs::copy(sample("tiny-mlp/checkpoint-0000050").toStdString(), root / "checkpoint-0000050", fs::copy_options::recursive);
        fs::copy(sample("tiny-mlp/probes/after-checkpoint-0000050").toStdString(), root / "probes/after-checkpoint-0000050",
                 fs::copy_options::recursive);
        const QString ckpt = QString::fromStdString((root / "checkpoint-0000050").string());
        const auto run = runCkpt({"validate", ckpt, "--device", "cpu", "--json", "--launcher", "env CKPT_VIA_LAUNCHER='a b'"});
        QVERIFY2(run.code == 0, run.out.right(1500).constData());
        const auto events = lines(run.out);
        int progress = 0;
        for (const auto& e : events)
            progress += e["event"] == "progress";
        QVERIFY(progress >= 7);
        QCOMPARE(QString::fromStdString(events.back()["checkpoint"].get<std::string>()), ckpt);
        QCOMPARE(q(events.back()["verdict"].get<std::string>()), QByteArray("pass"));

        // The same through the environment variable a site sets once.
        qputenv("CKPT_LAUNCHER", "env");
        const auto viaEnv = runCkpt({"validate", ckpt, "--device", "cpu", "--json"});
        qunsetenv("CKPT_LAUNCHER");
        QCOMPARE(viaEnv.code, 0);
    }

    void badLauncherIsAnError()
    {
        const auto run = runCkpt({"validate", sample("tiny-mlp/checkpoint-0000050"), "--launcher", "ssh 'gpu01 --"});
        QCOMPARE(run.code, 2);
        QVERIFY(run.err.contains("unterminated single quote"));
        const auto missing = runCkpt({"validate", sample("tiny-mlp/checkpoint-0000050"), "--launcher", "no-such-launcher-xyz --"});
        QCOMPARE(missing.code, 2);
        QVERIFY(missing.err.contains("no-such-launcher-xyz"));
    }

    void splitCommandLine()
    {
        using ckpt::splitCommandLine;
        QCOMPARE(splitCommandLine("srun --gres=gpu:1 --time=10 --").size(), std::size_t(4));
        const auto words = splitCommandLine("ssh -o \"ProxyJump a b\" 'x y'\\ z \"q\\\"uote\" --");
        QCOMPARE(words.size(), std::size_t(6));
        QCOMPARE(q(words[2]), QByteArray("ProxyJump a b"));
        QCOMPARE(q(words[3]), QByteArray("x y z"));
        QCOMPARE(q(words[4]), QByteArray("q\"uote"));
        QVERIFY(splitCommandLine("  ").empty());
        QVERIFY_THROWS_EXCEPTION(ckpt::LauncherError, splitCommandLine("a \"b"));
        QVERIFY_THROWS_EXCEPTION(ckpt::LauncherError, splitCommandLine("a\\"));
        const auto argv = ckpt::launchCommand("env A=1", "/opt/bin/ckpt-validate", {"/runs/x y/checkpoint-1", "--json"});
        QCOMPARE(argv.size(), std::size_t(5));
        QCOMPARE(q(argv[3]), QByteArray("/runs/x y/checkpoint-1"));
        QCOMPARE(splitCommandLine(ckpt::quoteCommandLine(argv)), argv);
    }
};

QTEST_GUILESS_MAIN(TestValidate)
#include "tst_validate.moc"
