// SPDX-License-Identifier: MIT
// The Schedule data page on the real sample runs: the curves it draws (golden dumps), checked
// against the run's own logs, and the widget (curves, axes, markers, export).
#include "pagetestutil.h"

#include "ui/pages/schedulecurves.h"
#include "ui/pages/schedulepage.h"
#include "ui/plots/curveplot.h"

#include <QImage>
#include <QTemporaryDir>

namespace {

QString point(const PlotMath::Curve& c, std::size_t i)
{
    return QStringLiteral("(%1, %2)").arg(c.x[i]).arg(c.y[i], 0, 'g', 9);
}

QStringList describe(const ScheduleCurves& curves)
{
    QStringList out;
    auto curve = [&out](const ScheduleCurves::Named& n, const QString& what) {
        if (n.curve.x.empty()) {
            out.append(what + QStringLiteral(": none"));
            return;
        }
        const std::size_t last = n.curve.x.size() - 1;
        out.append(QStringLiteral("%1: %2 points, first %3, middle %4, last %5")
                       .arg(n.name)
                       .arg(n.curve.x.size())
                       .arg(point(n.curve, 0), point(n.curve, last / 2), point(n.curve, last)));
    };
    out.append(QStringLiteral("scheduler: ") + curves.schedulerText);
    for (const auto& lr : curves.lrGroups)
        curve(lr, {});
    curve(curves.loggedLr, QStringLiteral("logged LR"));
    curve(curves.loss, QStringLiteral("logged loss"));
    out.append(QStringLiteral("markers: ") + curves.markerLabels.join(QStringLiteral(", ")) + QStringLiteral("; current ")
               + QString::number(curves.currentMarker));
    for (const QString& note : curves.notes)
        out.append(QStringLiteral("note: ") + note);
    return out;
}

} // namespace

class TestSchedulePage : public QObject {
    Q_OBJECT

private slots:
    void curves_data()
    {
        QTest::addColumn<QString>("runDir");
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<QString>("expected");
        QTest::addRow("ddp4-mlp") << QStringLiteral("ddp4-mlp") << QStringLiteral("ddp4-mlp/checkpoint-0000200")
                                  << QStringLiteral("schedule_ddp4-mlp");
        QTest::addRow("tiny-mlp") << QStringLiteral("tiny-mlp") << QStringLiteral("tiny-mlp/checkpoint-0000150")
                                  << QStringLiteral("schedule_tiny-mlp");
        QTest::addRow("hf-trainer") << QStringLiteral("hf-trainer") << QStringLiteral("hf-trainer/checkpoint-40")
                                    << QStringLiteral("schedule_hf-trainer");
        QTest::addRow("lightning") << QStringLiteral("lightning")
                                   << QStringLiteral("lightning/checkpoints/epoch=0-step=25.ckpt")
                                   << QStringLiteral("schedule_lightning");
    }

    void curves()
    {
        QFETCH(QString, runDir);
        QFETCH(QString, checkpoint);
        QFETCH(QString, expected);
        const auto run = PageTest::run(runDir);
        const auto state = PageTest::state(checkpoint);
        const ScheduleCurves curves = buildScheduleCurves(*state, run.get());
        QVERIFY(PageTest::matchesExpected(describe(curves), expected));

        // The rebuilt curve reaches the run's last checkpoint, and the current checkpoint is marked.
        QCOMPARE(curves.lrGroups.size(), std::size_t(1));
        QCOMPARE(curves.lrGroups[0].curve.x.back(), PlotMath::checkpointSteps(*run).back());
        QVERIFY(curves.currentMarker >= 0);
        QCOMPARE(curves.markers.at(static_cast<std::size_t>(curves.currentMarker)), double(*state->globalStep));
        QCOMPARE(curves.markers, PlotMath::checkpointSteps(*run));
    }

    void checkpointWithoutRun()
    {
        const auto state = PageTest::state(QStringLiteral("tiny-mlp/checkpoint-0000100"));
        const ScheduleCurves curves = buildScheduleCurves(*state, nullptr);
        QCOMPARE(curves.markers, (std::vector<double>{100}));
        QCOMPARE(curves.currentMarker, 0);
        QVERIFY(curves.loggedLr.curve.x.empty());
        QCOMPARE(curves.lrGroups.at(0).curve.x.back(), 100.0);
    }

    void decimatesLongRuns()
    {
        const auto run = PageTest::run(QStringLiteral("ddp4-mlp"));
        const auto state = PageTest::state(QStringLiteral("ddp4-mlp/checkpoint-0000300"));
        const ScheduleCurves curves = buildScheduleCurves(*state, run.get(), 60);
        QVERIFY(curves.lrGroups.at(0).curve.x.size() <= 61);
        QCOMPARE(curves.lrGroups.at(0).curve.x.back(), 300.0);
        QVERIFY(curves.loss.curve.x.size() <= 61);
    }

    void pageDrawsAndExports()
    {
        SchedulePage page;
        page.setCheckpoint(PageTest::state(QStringLiteral("ddp4-mlp/checkpoint-0000300")),
                           PageTest::run(QStringLiteral("ddp4-mlp")));
        CurvePlot* plot = page.plot();
        QCOMPARE(plot->curveCount(), 3);
        // the logged points first, the rebuilt curve drawn over them
        QCOMPARE(plot->curveName(0), QStringLiteral("logged learning_rate"));
        QCOMPARE(plot->curvePointCount(0), 300);
        QCOMPARE(plot->curveName(1), QStringLiteral("LR from scheduler state"));
        QCOMPARE(plot->curvePointCount(1), 301);
        QCOMPARE(plot->curveName(2), QStringLiteral("logged loss"));
        QVERIFY(plot->curveAxis(2) == CurvePlot::Axis::Right);
        QVERIFY(plot->rightAxisVisible());
        QCOMPARE(plot->markerCount(), 3);
        QVERIFY(plot->xRange().lower < 0 && plot->xRange().upper > 300);
        QVERIFY(plot->leftRange().lower < 0 && plot->leftRange().upper > 3e-3); // lr 3e-3 down to 0
        QVERIFY(page.infoText().startsWith(QStringLiteral("CosineAnnealingLR, position 300")));
        // The legend has a row of its own under the axes: it covers neither the curves nor the
        // checkpoint labels drawn at the top of the plot area.
        page.resize(1000, 500);
        page.show();
        QTRY_VERIFY(plot->legendRect().height() > 0);
        QVERIFY(plot->plotAreaRect().height() > 200);
        QVERIFY(!plot->legendRect().intersects(plot->plotAreaRect()));
        QVERIFY(plot->legendRect().top() >= plot->plotAreaRect().bottom());

        QTemporaryDir dir;
        QVERIFY(page.exportPlot(dir.filePath(QStringLiteral("s.png"))));
        QCOMPARE(QImage(dir.filePath(QStringLiteral("s.png"))).size(), QSize(1600, 900));
        QVERIFY(page.exportPlot(dir.filePath(QStringLiteral("s.PDF"))));
        QFile pdf(dir.filePath(QStringLiteral("s.PDF")));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QVERIFY(pdf.read(5) == "%PDF-");
        QVERIFY(!page.exportPlot(dir.filePath(QStringLiteral("s.txt"))));
        QVERIFY(page.errorString().contains(QStringLiteral(".png or .pdf")));
        QVERIFY(!page.exportPlot(dir.filePath(QStringLiteral("missing/s.png"))));
        PageTest::grab(page, QStringLiteral("schedule_ddp4"));

        page.setCheckpoint(PageTest::state(QStringLiteral("lightning/checkpoints/epoch=1-step=50.ckpt")),
                           PageTest::run(QStringLiteral("lightning")));
        QCOMPARE(plot->curveCount(), 2); // StepLR rebuilt and train_loss; Lightning logs no LR here
        QVERIFY(page.infoText().contains(QStringLiteral("25 steps per position")));
        PageTest::grab(page, QStringLiteral("schedule_lightning"));

        page.setCheckpoint(nullptr);
        QCOMPARE(plot->curveCount(), 0);
        QCOMPARE(plot->markerCount(), 0);
    }
};

CKPT_UI_TEST_MAIN(TestSchedulePage)
#include "tst_schedulepage.moc"
