// SPDX-License-Identifier: MIT
// The validation panel and `ckpt validate` through real launchers: an OpenSSH server on 127.0.0.1
// and a one-node Slurm cluster (slurmctld + slurmd + munged), both started by this test under its own
// temporary folder (tests/launchers/start_*.sh) and stopped after. For each: a clean checkpoint passes,
// a resume fault is named, cancel ends the remote job, and a validator that crashes remotely gives a
// clear state while the panel stays usable. Skips loudly where the packages are not installed.
#include "ui/validationpanel.h"
#include "uitestutil.h"
#include "validationtestutil.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include <csignal>

using UiTest::runToEnd;

namespace {

const QString kScripts = QStringLiteral(CKPT_SOURCE_DIR "/tests/launchers/");

QString loopCheckpoint(const char* run)
{
    return QStringLiteral(CKPT_TESTDATA_DIR "/resume-loop/") + QLatin1String(run) + QStringLiteral("/checkpoint-0000010");
}

// Runs a start script; its last stdout line is what the test needs. Exit 77 means "not installed".
struct Started {
    bool ok = false, skipped = false;
    QString line, log;
};

Started startService(const QString& script, const QString& dir)
{
    QProcess p;
    p.start(kScripts + script, {dir});
    p.waitForFinished(120000);
    Started s;
    s.log = QString::fromLocal8Bit(p.readAllStandardError());
    s.skipped = p.exitStatus() == QProcess::NormalExit && p.exitCode() == 77;
    s.ok = p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    const QStringList lines = QString::fromLocal8Bit(p.readAllStandardOutput()).trimmed().split(QLatin1Char('\n'));
    s.line = lines.isEmpty() ? QString() : lines.last();
    return s;
}

bool processAlive(qint64 pid)
{
    return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0;
}

} // namespace

class TestLaunchers : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("ckpt-tests"));
        QVERIFY(m_dir.isValid());
        const Started ssh = startService(QStringLiteral("start_sshd.sh"), m_dir.filePath(QStringLiteral("ssh")));
        if (ssh.ok)
            m_ssh = ssh.line;
        else
            qWarning("SKIPPED (ssh launcher tests): %s", qPrintable(ssh.log.trimmed()));
        const Started slurm = startService(QStringLiteral("start_slurm.sh"), m_dir.filePath(QStringLiteral("slurm")));
        if (slurm.ok)
            qputenv("SLURM_CONF", slurm.line.toLocal8Bit()); // srun, and the panel's QProcess, find the cluster
        else
            qWarning("SKIPPED (Slurm launcher tests): %s", qPrintable(slurm.log.trimmed()));
        m_slurm = slurm.ok;
        // A failed start of an installed service is a failure, not a skip.
        QVERIFY2(ssh.ok || ssh.skipped, qPrintable(ssh.log));
        QVERIFY2(slurm.ok || slurm.skipped, qPrintable(slurm.log));
    }

    void cleanupTestCase()
    {
        QProcess::execute(kScripts + QStringLiteral("stop_services.sh"),
                          {m_dir.filePath(QStringLiteral("ssh")), m_dir.filePath(QStringLiteral("slurm"))});
        QSettings().remove(QStringLiteral("validation/launcher"));
    }

    void verdictsThroughTheLauncher_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::newRow("ssh") << QStringLiteral("ssh");
        QTest::newRow("srun") << QStringLiteral("srun");
    }

    void verdictsThroughTheLauncher()
    {
        QFETCH(QString, kind);
        const QString prefix = launcher(kind);
        if (prefix.isEmpty())
            QSKIP(qPrintable(QStringLiteral("SKIPPED: no %1 launcher on this machine (see the warning above)").arg(kind)));
        ValidationPanel panel;
        panel.setValidatorPath(QStringLiteral(CKPT_VALIDATE_BIN));
        panel.setDevice(QStringLiteral("cpu"));
        panel.setLauncher(prefix);
        panel.setCheckpoint(loopCheckpoint("optim-AdamW"));
        QCOMPARE(runToEnd(panel), ValidationPanel::State::Passed);
        QVERIFY(panel.commandLine().startsWith(prefix.section(QLatin1Char(' '), 0, 0)));
        panel.setCheckpoint(loopCheckpoint("resume-rng-not-restored"));
        QCOMPARE(runToEnd(panel), ValidationPanel::State::Differs);
        QCOMPARE(panel.report().value(QStringLiteral("first_difference")).toString(), QStringLiteral("rng"));
        panel.setCheckpoint(loopCheckpoint("optim-Rprop"));
        QCOMPARE(runToEnd(panel), ValidationPanel::State::Partial);

        // The CLI through the same launcher: the exit code and the report come back unchanged.
        QProcess cli;
        cli.start(QStringLiteral(CKPT_BIN), {QStringLiteral("validate"), loopCheckpoint("resume-cursor-reset"), QStringLiteral("--device"),
                                             QStringLiteral("cpu"), QStringLiteral("--launcher"), prefix, QStringLiteral("--validator"),
                                             QStringLiteral(CKPT_VALIDATE_BIN)});
        QVERIFY(cli.waitForFinished(120000));
        const QByteArray out = cli.readAllStandardOutput();
        QCOMPARE(cli.exitCode(), 1);
        QVERIFY2(out.contains("verdict: differs (first difference: batch)"), out.constData());
    }

    void cancelEndsTheRemoteJob_data() { verdictsThroughTheLauncher_data(); }

    void cancelEndsTheRemoteJob()
    {
        QFETCH(QString, kind);
        QString prefix = launcher(kind);
        if (prefix.isEmpty())
            QSKIP(qPrintable(QStringLiteral("SKIPPED: no %1 launcher on this machine (see the warning above)").arg(kind)));
        if (kind == QLatin1String("ssh"))
            prefix.replace(QStringLiteral("ssh "), QStringLiteral("ssh -tt ")); // docs/validation.md: a pty forwards the hang-up
        const QString fake = m_dir.filePath(QStringLiteral("slow-") + kind);
        ValidationPanel panel;
        panel.setValidatorPath(kScripts + QStringLiteral("slow_validator.sh"));
        panel.setLauncher(prefix);
        panel.setCheckpoint(fake);
        QSignalSpy progressed(&panel, &ValidationPanel::progressed);
        QSignalSpy done(&panel, &ValidationPanel::finished);
        panel.start();
        QVERIFY2(progressed.wait(60000) || !progressed.isEmpty(), "the remote validator never reported progress");
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(fake + QStringLiteral(".pid")), 10000);
        QFile pidFile(fake + QStringLiteral(".pid"));
        QVERIFY(pidFile.open(QIODevice::ReadOnly));
        const qint64 remote = pidFile.readAll().trimmed().toLongLong();
        QVERIFY(processAlive(remote));
        panel.cancel();
        QVERIFY(done.wait(20000));
        QCOMPARE(panel.state(), ValidationPanel::State::Cancelled);
        // the job on the far side ends too (the sleep the validator exec'd has the same pid)
        QTRY_VERIFY2_WITH_TIMEOUT(!processAlive(remote), qPrintable(QStringLiteral("remote pid %1 still runs").arg(remote)), 20000);
    }

    void remoteCrashIsReportedAndThePanelRecovers_data() { verdictsThroughTheLauncher_data(); }

    void remoteCrashIsReportedAndThePanelRecovers()
    {
        QFETCH(QString, kind);
        const QString prefix = launcher(kind);
        if (prefix.isEmpty())
            QSKIP(qPrintable(QStringLiteral("SKIPPED: no %1 launcher on this machine (see the warning above)").arg(kind)));
        ValidationPanel panel;
        panel.setValidatorPath(kScripts + QStringLiteral("crash_validator.sh"));
        panel.setLauncher(prefix);
        panel.setDevice(QStringLiteral("cpu"));
        panel.setCheckpoint(loopCheckpoint("optim-AdamW"));
        // ssh and srun turn the remote SIGSEGV into their own non-zero exit: no report came back
        const ValidationPanel::State crashed = runToEnd(panel);
        QVERIFY(crashed == ValidationPanel::State::CannotRun || crashed == ValidationPanel::State::Crashed);
        QVERIFY(!panel.isRunning());
        QVERIFY(panel.report().isEmpty());
        // the same panel runs the real validator next
        panel.setValidatorPath(QStringLiteral(CKPT_VALIDATE_BIN));
        QCOMPARE(runToEnd(panel), ValidationPanel::State::Passed);
    }

    void severalUpdatesShowPerUpdate()
    {
        // Locally (no launcher): a probe of three updates whose drift shows on update 2.
        ValidationPanel panel;
        panel.setValidatorPath(QStringLiteral(CKPT_VALIDATE_BIN));
        panel.setLauncher(QString());
        panel.setDevice(QStringLiteral("cpu"));
        panel.setCheckpoint(loopCheckpoint("updates3-eval-draws-random"));
        QCOMPARE(runToEnd(panel), ValidationPanel::State::Differs);
        auto* tree = panel.findChild<QTreeWidget*>();
        QVERIFY(tree);
        QCOMPARE(tree->topLevelItemCount(), 7 + 2); // update 1's components, then "update 2", "update 3"
        QCOMPARE(tree->topLevelItem(7)->text(0), QStringLiteral("update 2"));
        QCOMPARE(tree->topLevelItem(7)->text(1), QStringLiteral("differs: rng"));
        QCOMPARE(tree->topLevelItem(7)->childCount(), 7);
    }

private:
    QString launcher(const QString& kind) const
    {
        if (kind == QLatin1String("ssh"))
            return m_ssh;
        return m_slurm ? QStringLiteral("srun -N1 --unbuffered --") : QString();
    }

    QTemporaryDir m_dir;
    QString m_ssh;
    bool m_slurm = false;
};

CKPT_UI_TEST_MAIN(TestLaunchers)
#include "tst_launchers.moc"
