// SPDX-License-Identifier: MIT
// The validation panel drives the real ckpt-validate on the bundled sample runs: progress streams
// in, the report shows beside the checkpoint, cancel stops it, and a validator that crashes (or a
// launcher that dies) leaves the application running with a clear state.
#include "ui/validationpanel.h"
#include "uitestutil.h"
#include "validationtestutil.h"

#include <QElapsedTimer>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTreeWidget>
#include <QtTest>

using UiTest::runToEnd;

namespace {

QString sample(const char* rel)
{
    return QStringLiteral(CKPT_SOURCE_DIR "/sample_runs/") + QLatin1String(rel);
}

} // namespace

class TestValidationPanel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings in a test location
        QCoreApplication::setOrganizationName(QStringLiteral("ckpt-tests"));
    }

    void cleanRunPasses()
    {
        ValidationPanel panel;
        panel.setValidatorPath(QStringLiteral(CKPT_VALIDATE_BIN));
        panel.setLauncher(QString());
        panel.setDevice(QStringLiteral("cpu"));
        panel.setCheckpoint(sample("tiny-mlp/checkpoint-0000050"));
        QSignalSpy progress(&panel, &ValidationPanel::progressed);
        QCOMPARE(runToEnd(panel), ValidationPanel::State::Passed);
        QVERIFY(progress.count() >= 7);
        QCOMPARE(panel.report().value(QStringLiteral("verdict")).toString(), QStringLiteral("pass"));
        auto* tree = panel.findChild<QTreeWidget*>();
        QVERIFY(tree);
        QCOMPARE(tree->topLevelItemCount(), 7);
        QCOMPARE(tree->topLevelItem(0)->text(0), QStringLiteral("batch"));
        QCOMPARE(tree->topLevelItem(6)->text(1), QStringLiteral("exact"));
    }

    void brokenRunShowsItsFaultAndReportStaysWithTheCheckpoint()
    {
        ValidationPanel panel;
        panel.setValidatorPath(QStringLiteral(CKPT_VALIDATE_BIN));
        panel.setDevice(QStringLiteral("cpu"));
        // Through a launcher prefix (env standing in for ssh/srun), persisted in the settings.
        panel.setLauncher(QStringLiteral("env CKPT_VIA=panel"));
        const QString broken = sample("broken/optimizer-not-restored/checkpoint-0000200");
        panel.setCheckpoint(broken);
        QCOMPARE(runToEnd(panel), ValidationPanel::State::Differs);
        QVERIFY(panel.commandLine().startsWith(QStringLiteral("env CKPT_VIA=panel ")));
        QCOMPARE(panel.report().value(QStringLiteral("first_difference")).toString(), QStringLiteral("optimizer"));
        QCOMPARE(QSettings().value(QStringLiteral("validation/launcher")).toString(), QStringLiteral("env CKPT_VIA=panel"));
        panel.setCheckpoint(sample("tiny-mlp/checkpoint-0000100")); // another checkpoint: no report yet
        QVERIFY(panel.report().isEmpty());
        panel.setCheckpoint(broken); // back: its report is shown again
        QCOMPARE(panel.report().value(QStringLiteral("first_difference")).toString(), QStringLiteral("optimizer"));
        QSettings().remove(QStringLiteral("validation/launcher"));
    }

    void crashingValidatorLeavesTheAppRunning()
    {
        ValidationPanel panel;
        panel.setValidatorPath(QStringLiteral(CKPT_VALIDATE_BIN));
        // The "launcher" kills itself with SIGSEGV: what a LibTorch crash looks like from here.
        panel.setLauncher(QStringLiteral("sh -c 'kill -SEGV $$'"));
        panel.setCheckpoint(sample("tiny-mlp/checkpoint-0000050"));
        QCOMPARE(runToEnd(panel), ValidationPanel::State::Crashed);
        QVERIFY(!panel.isRunning());
        QSettings().remove(QStringLiteral("validation/launcher"));
    }

    void cancelStopsTheRun()
    {
        ValidationPanel panel;
        panel.setLauncher(QStringLiteral("sh -c 'exec sleep 30'"));
        panel.setCheckpoint(sample("tiny-mlp/checkpoint-0000050"));
        QSignalSpy done(&panel, &ValidationPanel::finished);
        panel.start();
        QVERIFY(panel.isRunning());
        QTest::qWait(200);
        QElapsedTimer clock;
        clock.start();
        panel.cancel();
        QVERIFY(done.wait(10000));
        QVERIFY(clock.elapsed() < 10000);
        QCOMPARE(panel.state(), ValidationPanel::State::Cancelled);
        QSettings().remove(QStringLiteral("validation/launcher"));
    }

    void missingValidatorCannotRun()
    {
        ValidationPanel panel;
        panel.setLauncher(QString());
        panel.setValidatorPath(QStringLiteral("/nonexistent/ckpt-validate"));
        panel.setCheckpoint(sample("tiny-mlp/checkpoint-0000050"));
        QCOMPARE(runToEnd(panel, 10000), ValidationPanel::State::CannotRun);
    }

    void badLauncherCannotRun()
    {
        ValidationPanel panel;
        panel.setLauncher(QStringLiteral("ssh 'gpu01"));
        panel.setCheckpoint(sample("tiny-mlp/checkpoint-0000050"));
        QCOMPARE(runToEnd(panel, 10000), ValidationPanel::State::CannotRun);
        QSettings().remove(QStringLiteral("validation/launcher"));
    }
};

CKPT_UI_TEST_MAIN(TestValidationPanel)
#include "tst_validationpanel.moc"
