// SPDX-License-Identifier: MIT
// Issue 33, ground truth from the frameworks themselves: runs written by accelerate, Lightning and
// transformers' own save and resume code (tests/fixtures/real_libraries/generate.py, at the commits
// of its lock.json), committed under tests/fixtures/real_libraries/runs/. RUNS.json beside them says,
// for each run, whether it is healthy and which findings must catch its mistake. Each run is checked
// as a user would, `ckpt check PATH --json`:
//   - a healthy run gets no warning and no error;
//   - a mistake gets exactly the warnings and errors it expects, by rule id, component and severity,
//     and every info it lists;
//   - a mistake not caught yet is listed in known_gaps.json with the reason, and must still fail.
#include "test_support.h"

#include <QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

using namespace testsupport;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path& runsRoot()
{
    static const fs::path root = fs::path(CKPT_SOURCE_DIR) / "tests/fixtures/real_libraries/runs";
    return root;
}

json runIndex()
{
    std::ifstream in(runsRoot() / "RUNS.json");
    return in ? json::parse(in) : json();
}

using Triple = std::tuple<std::string, std::string, std::string>; // rule, component, severity

std::string describe(const std::set<Triple>& triples)
{
    if (triples.empty())
        return "nothing";
    std::string out;
    for (const auto& [rule, component, severity] : triples)
        out += (out.empty() ? "" : ", ") + severity + " " + rule + " [" + component + "]";
    return out;
}

} // namespace

class TestRealLibraryRuns : public QObject {
    Q_OBJECT
private slots:
    void indexIsComplete()
    {
        const json index = runIndex();
        QVERIFY2(index.contains("runs"), "tests/fixtures/real_libraries/runs/RUNS.json is missing or has no runs: "
                                         "run tests/fixtures/real_libraries/generate.py (see its README)");
        std::set<std::string> libraries;
        for (const auto& [name, run] : index["runs"].items()) {
            libraries.insert(name.substr(0, name.find('/')));
            QVERIFY2(fs::exists(runsRoot() / name / run["path"].get<std::string>()), name.c_str());
            // A probes run's mistake may be caught by `ckpt validate` alone (its "validate" says where).
            QVERIFY2(run["clean"].get<bool>() || !run["expect"].empty() || run.contains("validate"),
                     (name + ": a mistake with no expected finding").c_str());
        }
        // "probes": the three libraries again, under packaging/python/ckpt_callbacks.py (runs_probes.py).
        // The older set (lock.json variants.older, its own site folder): a library key each, whose versions
        // entry names its set and version. DeepSpeed (variants.deepspeed) likewise, in a site of its own.
        QCOMPARE(libraries, (std::set<std::string>{"accelerate", "accelerate-0.19", "deepspeed-0.14", "lightning", "probes",
                                                   "pytorch_lightning-1.9", "transformers", "transformers-4.26"}));
        for (const char* lib : {"accelerate", "lightning", "transformers"})
            QVERIFY2(index["versions"].contains(lib), lib);
        for (const char* lib : {"accelerate-0.19", "pytorch_lightning-1.9", "transformers-4.26"})
            QVERIFY2(index["versions"].contains(lib) && index["versions"][lib].value("variant", "") == "older", lib);
        QVERIFY2(index["versions"].contains("deepspeed-0.14") && index["versions"]["deepspeed-0.14"].value("variant", "") == "deepspeed",
                 "deepspeed-0.14");
    }

    void findingsAreTheExpectedOnes_data()
    {
        QTest::addColumn<QString>("name");
        const json index = runIndex();
        if (!index.contains("runs"))
            return;
        for (const auto& [name, run] : index["runs"].items())
            QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }
    void findingsAreTheExpectedOnes()
    {
        QFETCH(QString, name);
        const json run = runIndex()["runs"][name.toStdString()];
        const fs::path path = runsRoot() / name.toStdString() / run["path"].get<std::string>();
        const CkptRun r = runCkpt({QStringLiteral("check"), QString::fromStdString(path.string()), QStringLiteral("--json")});
        const json report = json::parse(r.out.toStdString(), nullptr, false);
        QVERIFY2(!report.is_discarded(), ("ckpt check exited " + std::to_string(r.code) + " without a report: " + r.err.right(2000).toStdString()).c_str());
        QVERIFY2(!report["checkpoints"].empty(), r.out.constData());

        std::set<Triple> loud, infos, wantLoud, wantInfos;
        std::string messages;
        for (const auto& f : report["findings"]) {
            Triple t{f["rule"], f["component"], f["severity"]};
            (std::get<2>(t) == "info" ? infos : loud).insert(t);
            if (std::get<2>(t) != "info")
                messages += "\n  " + std::get<2>(t) + " " + std::get<0>(t) + ": " + f["message"].get<std::string>();
        }
        for (const auto& e : run["expect"]) {
            Triple t{e[0], e[1], e[2]};
            (std::get<2>(t) == "info" ? wantInfos : wantLoud).insert(t);
        }
        std::set<Triple> missingInfos;
        for (const Triple& t : wantInfos) {
            if (!infos.count(t))
                missingInfos.insert(t);
        }
        const std::string got = "got " + describe(loud) + ", want " + describe(wantLoud)
                              + (missingInfos.empty() ? "" : ", missing info " + describe(missingInfos)) + messages;
        // A mistake the catalogue does not catch yet (known_gaps.json says why) must still fail here:
        // when a rule starts catching it, this XPASSes and the gap's line is to be deleted.
        if (run.contains("gap"))
            QEXPECT_FAIL("", run["gap"].get<std::string>().c_str(), Abort);
        QVERIFY2(loud == wantLoud && missingInfos.empty(), got.c_str());
        QCOMPARE(r.code, wantLoud.empty() ? 0 : 1);

        // Issue 42: the groups tell every finding exactly once, and a clean run's text report opens
        // with its verdict and fits on one screen.
        std::vector<int> told(report["findings"].size(), 0);
        for (const auto& g : report["groups"]) {
            QCOMPARE(g["count"].get<std::size_t>(), g["findings"].size());
            for (const auto& i : g["findings"])
                ++told.at(i.get<std::size_t>());
        }
        QVERIFY2(std::all_of(told.begin(), told.end(), [](int n) { return n == 1; }), report["groups"].dump().c_str());
        if (run["clean"].get<bool>()) {
            const CkptRun text = runCkpt({QStringLiteral("check"), QString::fromStdString(path.string())});
            const QList<QByteArray> lines = text.out.split('\n');
            QVERIFY2(lines.size() <= 41, text.out.constData()); // 40 lines and the final newline
            QVERIFY2(lines.size() > 2 && lines[2].startsWith("Verdict: nothing inconsistent found"), text.out.constData());
        }
    }

    // Issue 33 point 5: packaging/python/ckpt_callbacks.py under the real libraries (runs_probes.py). Every
    // probes run's "audit" folder passes `ckpt audit` (manifest.json and COMPLETE in every save folder, exit 0),
    // and `ckpt validate` of each checkpoint in its "validate" gives what it says: "pass" (exit 0), or
    // "differs:<component>" (exit 1, that component the first difference). Healthy probes runs are also
    // quiet under `ckpt check`, which findingsAreTheExpectedOnes asserts with every other run.
    void probesValidate_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<QString>("want");
        const json index = runIndex();
        if (!index.contains("runs"))
            return;
        for (const auto& [name, run] : index["runs"].items()) {
            if (!run.contains("validate"))
                continue;
            for (const auto& [checkpoint, want] : run["validate"].items())
                QTest::newRow((name + " " + checkpoint).c_str()) << QString::fromStdString(name)
                                                                 << QString::fromStdString(checkpoint)
                                                                 << QString::fromStdString(want.get<std::string>());
        }
    }
    void probesValidate()
    {
        QFETCH(QString, name);
        QFETCH(QString, checkpoint);
        QFETCH(QString, want);
        const json run = runIndex()["runs"][name.toStdString()];
        const fs::path root = runsRoot() / name.toStdString();

        const fs::path audited = root / run["audit"].get<std::string>();
        const CkptRun audit = runCkpt({QStringLiteral("audit"), QString::fromStdString(audited.string())});
        QVERIFY2(audit.code == 0, (audit.out.right(3000) + audit.err.right(1000)).constData());

        const fs::path ckpt = root / checkpoint.toStdString();
        const CkptRun r = runCkpt({QStringLiteral("validate"), QString::fromStdString(ckpt.string()), QStringLiteral("--device"),
                                   QStringLiteral("cpu"), QStringLiteral("--json")});
        json report;
        for (const QByteArray& line : r.out.split('\n')) {
            if (line.trimmed().isEmpty())
                continue;
            const json event = json::parse(line.toStdString(), nullptr, false);
            if (event.is_object() && event.value("event", "") == "report")
                report = event;
        }
        QVERIFY2(report.is_object(), (r.out.right(2000) + r.err.right(1000)).constData());
        const std::string detail = report.dump().substr(0, 3000);
        if (want == QLatin1String("pass")) {
            QVERIFY2(report["verdict"] == "pass" && report["first_difference"].is_null(), detail.c_str());
            QCOMPARE(r.code, 0);
            QCOMPARE(q(report["optimizer_mode"].get<std::string>()), QByteArray("step"));
        } else {
            QVERIFY2(want.startsWith(QLatin1String("differs:")), qPrintable(want));
            const std::string part = want.mid(8).toStdString();
            QVERIFY2(report["verdict"] == "differs", detail.c_str());
            QVERIFY2(report["first_difference"] == part, detail.c_str());
            QCOMPARE(r.code, 1);
        }
    }
};

QTEST_GUILESS_MAIN(TestRealLibraryRuns)
#include "tst_real_library_runs.moc"
