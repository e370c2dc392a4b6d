// SPDX-License-Identifier: MIT
// The `ckpt` command-line contract, run as a user would: JSON shapes, exit codes, and one
// stderr line naming the file for anything unreadable.
#include "test_support.h"

#include <QProcess>
#include <QFileInfo>
#include <QTest>

using namespace testsupport;
using nlohmann::json;

namespace {

QString fixture(const char* name) { return QString::fromStdString(checkpointsDir() + "/" + name); }
QString hostile(const char* name) { return QString::fromStdString(hostileDir() + "/" + name); }

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void tensorsJson()
    {
        const CkptRun r = runCkpt({QStringLiteral("tensors"), fixture("full_checkpoint.pt"), QStringLiteral("--json")});
        QCOMPARE(r.code, 0);
        QVERIFY(r.err.isEmpty());
        const json j = json::parse(r.out.toStdString());
        QCOMPARE(q(j["format"].get<std::string>()), QByteArray("torch_zip"));
        QCOMPARE(q(j["file"].get<std::string>()), fixture("full_checkpoint.pt").toUtf8());
        QVERIFY(j["warnings"].is_array());
        const json expected = readJson(checkpointsDir() + "/full_checkpoint.pt.expected.json");
        QCOMPARE(j["tensors"].size(), expected["tensors"].size());
        bool sawOptimizerMoment = false;
        for (const auto& t : j["tensors"]) {
            for (const char* field : {"key", "dtype", "shape", "stride", "storage_offset", "nbytes"})
                QVERIFY2(t.contains(field), field);
            if (t["key"] == json::array({"optimizer", "state", 0, "exp_avg"})) {
                sawOptimizerMoment = true;
                QCOMPARE(q(t["dtype"].get<std::string>()), QByteArray("float32"));
                QVERIFY(t["key"][2].is_number_integer()); // int keys stay ints
            }
        }
        QVERIFY(sawOptimizerMoment);
    }

    void tensorsHuman()
    {
        const CkptRun r = runCkpt({QStringLiteral("tensors"), fixture("dtypes.pt")});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("bfloat16"));
        QVERIFY(r.out.contains("KEY"));
        QVERIFY(r.out.contains("12 tensors"));
    }

    void treeJson()
    {
        const CkptRun r = runCkpt({QStringLiteral("tree"), fixture("objects.pt"), QStringLiteral("--json")});
        QCOMPARE(r.code, 0);
        const json j = json::parse(r.out.toStdString());
        const std::string text = j.dump();
        QVERIFY(text.find("argparse.Namespace") != std::string::npos);
        QVERIFY(text.find("__main__.RunInfo") != std::string::npos);
        QCOMPARE(q(j["root"]["type"].get<std::string>()), QByteArray("dict"));
    }

    void treeHuman()
    {
        const CkptRun r = runCkpt({QStringLiteral("tree"), fixture("full_checkpoint.pt")});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("object argparse.Namespace"));
        QVERIFY(r.out.contains("ndarray uint32 [624]"));
    }

    void importsExitCodes_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("mustName");
        QTest::newRow("clean checkpoint") << fixture("full_checkpoint.pt") << 0 << QString();
        QTest::newRow("numpy rng via _codecs is fine") << fixture("rng_state.pth") << 0 << QString();
        QTest::newRow("OneCycleLR bound method is fine") << fixture("sched_onecycle.pt") << 0 << QString();
        QTest::newRow("os.system") << hostile("os_system_p2.pkl") << 1 << QStringLiteral("posix.system");
        QTest::newRow("eval in a torch zip") << hostile("torch_zip_eval.pt") << 1 << QStringLiteral("builtins.eval");
        QTest::newRow("payload after STOP") << hostile("trailing_second_pickle.pkl") << 1 << QString();
        QTest::newRow("empty file") << hostile("empty.pt") << 2 << QString();
        QTest::newRow("PNG") << hostile("png_header.pt") << 2 << QString();
    }

    void importsExitCodes()
    {
        QFETCH(QString, file);
        QFETCH(int, code);
        QFETCH(QString, mustName);
        const CkptRun r = runCkpt({QStringLiteral("imports"), file, QStringLiteral("--json")});
        QCOMPARE(r.code, code);
        if (code == 2) {
            QCOMPARE(r.err.count('\n'), 1);
            QVERIFY(r.err.contains(file.toUtf8()));
            return;
        }
        const json j = json::parse(r.out.toStdString());
        QCOMPARE(j["dangerous"].get<bool>(), code == 1);
        if (!mustName.isEmpty())
            QVERIFY(QByteArray::fromStdString(j.dump()).contains(mustName.toUtf8()));
    }

    void unreadableFiles_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("reason");
        QTest::newRow("missing") << QStringLiteral("/nonexistent/x.pt") << QStringLiteral("No such file");
        QTest::newRow("empty") << hostile("empty.pt") << QStringLiteral("empty file");
        QTest::newRow("truncated zip") << hostile("zip_truncated_half.pt") << QStringLiteral("truncated");
        QTest::newRow("not a checkpoint") << hostile("not_a_checkpoint.pt") << QStringLiteral("not a checkpoint");
        QTest::newRow("directory") << QString::fromStdString(checkpointsDir()) << QStringLiteral("directory");
    }

    void unreadableFiles()
    {
        QFETCH(QString, file);
        QFETCH(QString, reason);
        for (const char* command : {"tensors", "tree"}) {
            if (QFileInfo(file).isDir() && QByteArray(command) == "tensors")
                continue; // tensors lists a checkpoint folder (tst_model_folders)
            const CkptRun r = runCkpt({QString::fromLatin1(command), file});
            QCOMPARE(r.code, 2);
            QVERIFY(r.out.isEmpty());
            QCOMPARE(r.err.count('\n'), 1);
            QVERIFY2(r.err.contains(file.toUtf8()), r.err.constData());
            QVERIFY2(r.err.contains(reason.toUtf8()), r.err.constData());
        }
    }

    void usageErrors()
    {
        QCOMPARE(runCkpt({}).code, 2);
        QCOMPARE(runCkpt({QStringLiteral("frobnicate"), fixture("dtypes.pt")}).code, 2);
        QCOMPARE(runCkpt({QStringLiteral("tensors"), fixture("dtypes.pt"), QStringLiteral("--bogus")}).code, 2);
        const CkptRun v = runCkpt({QStringLiteral("--version")});
        QCOMPARE(v.code, 0);
        QVERIFY(v.out.startsWith("ckpt "));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
