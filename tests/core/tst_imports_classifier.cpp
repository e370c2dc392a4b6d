// SPDX-License-Identifier: MIT
// The imports classification: legitimate training state is never "dangerous", the usual
// payloads and the picklescan advisory gadgets always are.
#include "ckpt/pickle/imports_report.h"

#include <QTest>

using namespace ckpt;

Q_DECLARE_METATYPE(ckpt::ImportSafety)

class TestImportsClassifier : public QObject {
    Q_OBJECT
private slots:
    void classify_data()
    {
        QTest::addColumn<QString>("module");
        QTest::addColumn<QString>("name");
        QTest::addColumn<ImportSafety>("expected");
        auto row = [](const char* m, const char* n, ImportSafety s) {
            QTest::addRow("%s.%s", m, n) << QString::fromLatin1(m) << QString::fromLatin1(n) << s;
        };
        const auto safe = ImportSafety::Safe, unknown = ImportSafety::Unknown, dangerous = ImportSafety::Dangerous;
        // training state
        row("collections", "OrderedDict", safe);
        row("torch._utils", "_rebuild_tensor_v2", safe);
        row("torch._utils", "_rebuild_parameter", safe);
        row("torch", "BFloat16Storage", safe);
        row("torch.storage", "UntypedStorage", safe);
        row("torch", "float8_e4m3fn", safe);
        row("numpy.core.multiarray", "_reconstruct", safe);
        row("numpy._core.multiarray", "_reconstruct", safe);
        row("numpy", "dtype", safe);
        row("_codecs", "encode", safe);
        row("argparse", "Namespace", safe);
        row("collections", "Counter", safe);
        // not allowlisted, but not a payload either
        row("transformers.training_args", "TrainingArguments", unknown);
        row("__main__", "MyConfig", unknown);
        row("torch.optim.adam", "Adam", unknown);
        row("mylib.config", "Outer.Inner", unknown);
        row("functools", "partial", unknown);
        // payloads
        row("posix", "system", dangerous);
        row("os", "system", dangerous);
        row("nt", "system", dangerous);
        row("subprocess", "Popen", dangerous);
        row("builtins", "eval", dangerous);
        row("builtins", "exec", dangerous);
        row("builtins", "getattr", dangerous);
        row("builtins", "__import__", dangerous);
        row("runpy", "_run_code", dangerous);
        row("torch.serialization", "load", dangerous);
        row("torch.storage", "_load_from_bytes", dangerous);
        row("torch.hub", "load", dangerous);
        row("?", "?", dangerous);
        // picklescan advisory gadgets (GHSA-*), caught by rules rather than a list
        row("idlelib.pyshell", "ModifiedInterpreter.runcode", dangerous);
        row("cProfile", "run", dangerous);
        row("bdb", "Bdb.run", dangerous);
        row("torch.utils.collect_env", "run", dangerous);
        row("torch.utils.bottleneck.__main__", "run_cprofile", dangerous);
        row("uuid", "_get_command_stdout", dangerous);
        row("pkgutil", "resolve_name", dangerous);
        row("pydoc", "pipepager", dangerous);
        row("_pyrepl.pager", "pipe_pager", dangerous);
        row("test.support.script_helper", "assert_python_ok", dangerous);
        row("numpy.f2py.crackfortran", "getlincoef", dangerous);
        row("asyncio.unix_events", "_UnixSubprocessTransport._start", dangerous);
        row("operator", "attrgetter", dangerous);
        row("ctypes", "CDLL", dangerous);
        row("io", "FileIO", dangerous);
        row("logging", "FileHandler", dangerous);
        row("types", "CodeType", dangerous);
        row("requests.api", "get", dangerous);
        row("venv", "create", dangerous);
    }

    void classify()
    {
        QFETCH(QString, module);
        QFETCH(QString, name);
        QFETCH(ImportSafety, expected);
        std::string reason;
        const ImportSafety got = classifyGlobal(module.toStdString(), name.toStdString(), reason);
        QVERIFY2(got == expected, (std::string(safetyName(got)) + ": " + reason).c_str());
        QVERIFY(!reason.empty());
    }

    void getattrByUse_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<bool>("isGlobal");
        QTest::addColumn<QString>("attribute");
        QTest::addColumn<bool>("benign");
        QTest::newRow("enum member") << QStringLiteral("transformers.trainer_utils.IntervalStrategy") << true << QStringLiteral("STEPS") << true;
        QTest::newRow("bound method") << QStringLiteral("torch.optim.lr_scheduler.OneCycleLR") << false << QStringLiteral("_annealing_cos") << true;
        QTest::newRow("dunder") << QStringLiteral("__main__.Foo") << true << QStringLiteral("__globals__") << false;
        QTest::newRow("module object") << QStringLiteral("torch.os") << true << QStringLiteral("system") << false;
        QTest::newRow("on a dangerous global") << QStringLiteral("builtins.__import__") << false << QStringLiteral("system") << false;
        QTest::newRow("computed name") << QStringLiteral("__main__.Foo") << true << QString() << false;
    }

    void getattrByUse()
    {
        QFETCH(QString, target);
        QFETCH(bool, isGlobal);
        QFETCH(QString, attribute);
        QFETCH(bool, benign);
        GetattrUse use;
        use.target = target.toStdString();
        use.targetIsGlobal = isGlobal;
        use.targetIsObject = !isGlobal;
        use.attribute = attribute.toStdString();
        std::string reason;
        QCOMPARE(isBenignGetattr(use, reason), benign);
        if (!benign)
            QVERIFY(!reason.empty());
    }

    void referencedButNeverCalled()
    {
        // A standard-library function stored as a value is not a payload by itself...
        ImportsReport report;
        ImportsReport::CalledGlobals called;
        report.add("data.pkl", {PickleGlobal{"math", "pow", 0, true, {}}}, {}, &called);
        QCOMPARE(report.entries[0].safety, ImportSafety::Unknown);
        // ...but os.system stays dangerous, called or not.
        report.add("data.pkl", {PickleGlobal{"posix", "system", 0, true, {}}}, {}, &called);
        QCOMPARE(report.entries[1].safety, ImportSafety::Dangerous);
        called.emplace("math.pow", "called by REDUCE");
        ImportsReport calledReport;
        calledReport.add("data.pkl", {PickleGlobal{"math", "pow", 0, true, {}}}, {}, &called);
        QCOMPARE(calledReport.entries[0].safety, ImportSafety::Dangerous);
    }
};

QTEST_GUILESS_MAIN(TestImportsClassifier)
#include "tst_imports_classifier.moc"
