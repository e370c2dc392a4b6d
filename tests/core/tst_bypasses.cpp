// SPDX-License-Identifier: MIT
// The published pickle-scanner bypasses (issue 17): tests/fixtures/make_bypasses.py builds, from
// opcode bytes and never executing them, one or more files per technique studied (advisories of
// picklescan, fickling, modelscan, ModelAudit; tests/fixtures/bypasses.md lists the sources), plus
// benign files that must never be called dangerous. Each is scanned in-process, in the default and
// in --strict mode, against the verdict the generator recorded; no payload marker may appear.
#include "test_support.h"

#include "ckpt/formats/imports_scan.h"

#include <QProcess>
#include <QTest>

#include <filesystem>

using namespace ckpt;
using namespace testsupport;
using nlohmann::json;

namespace {

std::string bypassDir() { return std::string(CKPT_TESTDATA_DIR) + "/bypasses"; }

std::string describe(const ImportsReport& r)
{
    std::string out;
    for (const auto& e : r.entries)
        out += std::string(safetyName(e.safety)) + " " + e.path() + " [" + e.record + "]: " + e.reason + "\n";
    for (const auto& n : r.notes)
        out += "note: " + n + "\n";
    return out;
}

} // namespace

class TestBypasses : public QObject {
    Q_OBJECT
private slots:
    void bypass_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expect");
        QTest::addColumn<bool>("strict");
        QTest::addColumn<QStringList>("mustName");
        QTest::addColumn<QString>("marker");
        const json manifest = readJson(bypassDir() + "/bypasses.json");
        QVERIFY2(manifest.size() >= 660, "make_bypasses.py writes 664 files: none may go missing");
        for (const auto& e : manifest) {
            QStringList names;
            for (const auto& n : e["must_name"])
                names << QString::fromStdString(n.get<std::string>());
            const QString marker = e["marker"].is_string() ? QString::fromStdString(e["marker"].get<std::string>()) : QString();
            const std::string file = e["file"].get<std::string>();
            QTest::newRow(file.c_str()) << QString::fromStdString(file) << QString::fromStdString(e["expect"].get<std::string>())
                                        << false << names << marker;
            const std::string strictExpect = e.contains("strict_expect") && e["strict_expect"].is_string()
                                                 ? e["strict_expect"].get<std::string>() : e["expect"].get<std::string>();
            QTest::newRow((file + " --strict").c_str())
                << QString::fromStdString(file) << QString::fromStdString(strictExpect == "dangerous_strict" ? "dangerous" : strictExpect)
                << true << names << marker;
        }
    }

    void bypass()
    {
        QFETCH(QString, file);
        QFETCH(QString, expect);
        QFETCH(bool, strict);
        QFETCH(QStringList, mustName);
        QFETCH(QString, marker);
        const std::string path = bypassDir() + "/" + file.toStdString();
        ImportsReport report;
        std::string error;
        try {
            report = scanImports(path, strict);
        } catch (const OpenError& e) {
            error = e.what();
        }
        const std::string seen = error.empty() ? describe(report) : error;
        if (expect == QLatin1String("dangerous")) {
            QVERIFY2(error.empty() && report.anyDangerous(), seen.c_str());
            for (const QString& g : mustName) {
                const bool named = std::any_of(report.entries.begin(), report.entries.end(), [&](const ImportEntry& e) {
                    return e.path() == g.toStdString() && e.safety == ImportSafety::Dangerous;
                });
                QVERIFY2(named, ("must name " + g.toStdString() + " as dangerous:\n" + seen).c_str());
            }
        } else if (expect == QLatin1String("dangerous_strict")) {
            QVERIFY2(error.empty(), error.c_str()); // default mode: unknown or dangerous, never unreadable
        } else if (expect == QLatin1String("safe")) {
            QVERIFY2(error.empty() && !report.anyDangerous() && !report.malformed, seen.c_str());
        } else if (expect == QLatin1String("unanalysable")) {
            // Fail closed: never a clean verdict (exit 2, or 1 when something dangerous was seen).
            QVERIFY2(!error.empty() || report.malformed || report.anyDangerous(), seen.c_str());
        } else {
            QFAIL(qPrintable("unknown expectation " + expect));
        }
        if (!marker.isEmpty())
            QVERIFY2(!std::filesystem::exists(marker.toStdString()), "the payload ran");
    }

    // The CLI's contract on a pickle it cannot fully analyse: the globals it saw on stdout (JSON),
    // one line on stderr naming the file, exit 2 — never exit 0.
    void unanalysableExitCode()
    {
        for (const auto& e : readJson(bypassDir() + "/bypasses.json")) {
            if (e["expect"] != "unanalysable")
                continue;
            const std::string path = bypassDir() + "/" + e["file"].get<std::string>();
            const CkptRun r = runCkpt({QStringLiteral("imports"), QString::fromStdString(path), QStringLiteral("--json")});
            QVERIFY2(r.code == 1 || r.code == 2, (path + ": exit " + std::to_string(r.code)).c_str());
            if (r.code == 2) {
                const QList<QByteArray> lines = r.err.trimmed().split('\n');
                QCOMPARE(lines.size(), 1);
                QVERIFY2(lines[0].contains(q(path)), r.err.constData());
                if (lines[0].contains("no pickle")) // bytes with no pickle in them at all: nothing to list
                    continue;
                QVERIFY2(lines[0].contains("could not be fully analysed"), r.err.constData());
                const json j = json::parse(r.out.toStdString());
                QCOMPARE(j["fully_analysed"].get<bool>(), false);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestBypasses)
#include "tst_bypasses.moc"
