// SPDX-License-Identifier: MIT
// Plot math without a window: ranges, histogram bars, shard maps, markers, LR reconstruction,
// decimation and series choice.
#include "pagetestutil.h"

#include "ckpt/frameworks/framework_registry.h"
#include "ckpt/state/lr_schedule.h"
#include "ui/pages/pagecolors.h"
#include "ui/pages/tensorrows.h"
#include "ui/plots/plotcolors.h"
#include "ui/plots/plotmath.h"

#include <QPalette>

#include <algorithm>
#include <cmath>

using PlotMath::Range;

class TestPlotMath : public QObject {
    Q_OBJECT

private slots:
    void paddedRange_data()
    {
        QTest::addColumn<std::vector<double>>("values");
        QTest::addColumn<double>("lower");
        QTest::addColumn<double>("upper");
        const double nan = std::nan("");
        const double inf = INFINITY;
        QTest::addRow("spread") << std::vector<double>{0, 10} << -0.5 << 10.5;
        QTest::addRow("unordered") << std::vector<double>{10, -10, 0} << -11.0 << 11.0;
        QTest::addRow("single value") << std::vector<double>{5} << 4.5 << 5.5;
        QTest::addRow("single zero") << std::vector<double>{0} << -0.5 << 0.5;
        QTest::addRow("empty") << std::vector<double>{} << 0.0 << 1.0;
        QTest::addRow("only nan and inf") << std::vector<double>{nan, inf, -inf} << 0.0 << 1.0;
        QTest::addRow("nan ignored") << std::vector<double>{nan, 0, 10, inf} << -0.5 << 10.5;
    }

    void paddedRange()
    {
        QFETCH(std::vector<double>, values);
        QFETCH(double, lower);
        QFETCH(double, upper);
        const Range r = PlotMath::paddedRange(values);
        QCOMPARE(r.lower, lower);
        QCOMPARE(r.upper, upper);
    }

    void histogramBars()
    {
        const PlotMath::Bars bars = PlotMath::histogramBars(-1, 3, {1, 0, 5, 2});
        QCOMPARE(bars.width, 1.0);
        QCOMPARE(bars.centers, (std::vector<double>{-0.5, 0.5, 1.5, 2.5}));
        QCOMPARE(bars.heights, (std::vector<double>{1, 0, 5, 2}));
        // a constant tensor: every element in one bar at its value
        const PlotMath::Bars flat = PlotMath::histogramBars(0.25, 0.25, {0, 7, 0});
        QCOMPARE(flat.centers, (std::vector<double>{0.25}));
        QCOMPARE(flat.heights, (std::vector<double>{7}));
        QVERIFY(PlotMath::histogramBars(0, 1, {}).centers.empty());
    }

    void legendColumns()
    {
        // all in one row when they fit, then as many columns as fit, each as wide as its widest entry
        QCOMPARE(PlotMath::legendColumns({100, 120}, 12, 232), 2);
        QCOMPARE(PlotMath::legendColumns({100, 120}, 12, 231), 1);
        QCOMPARE(PlotMath::legendColumns({100, 50, 100, 150}, 10, 270), 2); // 100|150 and 100|50: 260
        QCOMPARE(PlotMath::legendColumns({100, 50, 100, 150}, 10, 259), 1);
        QCOMPARE(PlotMath::legendColumns({300}, 10, 100), 1);
        QCOMPARE(PlotMath::legendColumns({}, 10, 100), 1);
    }

    void shardMap()
    {
        // a [10, 4] tensor split in rows 0-5 (rank 1 listed first) and 6-9
        std::vector<TensorShard> shards{{1, {6, 0}, {4, 4}, QStringLiteral("__1_0.distcp")},
                                        {0, {0, 0}, {6, 4}, QStringLiteral("__0_0.distcp")}};
        PlotMath::ShardMap map = PlotMath::shardMap({10, 4}, shards);
        QCOMPARE(map.dimension, 0);
        QCOMPARE(map.extent, 10.0);
        QCOMPARE(map.bars.size(), std::size_t(2));
        QCOMPARE(map.bars[0].rank, 0);
        QCOMPARE(map.bars[0].start, 0.0);
        QCOMPARE(map.bars[0].end, 6.0);
        QCOMPARE(map.bars[0].lane, 0);
        QCOMPARE(map.bars[1].rank, 1);
        QCOMPARE(map.bars[1].lane, 1);
        QVERIFY(map.covers);

        // split along columns, with a gap [2, 3)
        shards = {{0, {0, 0}, {10, 2}, {}}, {1, {0, 3}, {10, 1}, {}}};
        map = PlotMath::shardMap({10, 4}, shards);
        QCOMPARE(map.dimension, 1);
        QCOMPARE(map.extent, 4.0);
        QVERIFY(!map.covers);
        QVERIFY(!PlotMath::shardMap({10}, {}).covers);
    }

    void checkpointMarkersOfRealRuns()
    {
        QCOMPARE(PlotMath::checkpointSteps(*PageTest::run(QStringLiteral("ddp4-mlp"))),
                 (std::vector<double>{100, 200, 300}));
        QCOMPARE(PlotMath::checkpointSteps(*PageTest::run(QStringLiteral("lightning"))), (std::vector<double>{25, 50}));
        const auto hf = PageTest::run(QStringLiteral("hf-trainer"));
        QCOMPARE(PlotMath::checkpointSteps(*hf), (std::vector<double>{20, 40, 60}));
        QCOMPARE(PlotMath::lastStepOf(hf.get(), 60), int64_t(60));
        QCOMPARE(PlotMath::lastStepOf(nullptr, 7), int64_t(7));
        QCOMPARE(PlotMath::lastStepOf(PageTest::run(QStringLiteral("ddp4-mlp")).get(), 100), int64_t(300));
    }

    void lrReconstructedMatchesLoggedLr_data()
    {
        QTest::addColumn<QString>("runDir");
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<int>("logLag"); // position of the logged LR = step - logLag
        // the recovery-guide loop logs the LR it trained the step with (before scheduler.step())
        QTest::addRow("ddp4-mlp cosine") << QStringLiteral("ddp4-mlp") << QStringLiteral("ddp4-mlp/checkpoint-0000100") << 1;
        QTest::addRow("tiny-mlp cosine") << QStringLiteral("tiny-mlp") << QStringLiteral("tiny-mlp/checkpoint-0000150") << 1;
        // the HF Trainer logs get_last_lr() after scheduler.step()
        QTest::addRow("hf-trainer linear") << QStringLiteral("hf-trainer") << QStringLiteral("hf-trainer/checkpoint-40") << 0;
    }

    // The curve rebuilt from one checkpoint's scheduler state reproduces the LR the training loop
    // logged at every step, before and after that checkpoint.
    void lrReconstructedMatchesLoggedLr()
    {
        QFETCH(QString, runDir);
        QFETCH(QString, checkpoint);
        QFETCH(int, logLag);
        const auto run = PageTest::run(runDir);
        const auto state = PageTest::state(checkpoint);
        QVERIFY(state->scheduler);
        const PlotMath::LrCurves curves = PlotMath::reconstructLr(state->scheduler->schedule, state->globalStep,
                                                                  PlotMath::lastStepOf(run.get(), state->globalStep));
        QCOMPARE(curves.stepsPerPosition, 1.0);
        QCOMPARE(curves.groups.size(), std::size_t(1));
        const std::string lrName = PlotMath::pickSeries(run->series, {"learning_rate", "lr"}, "lr");
        QCOMPARE(lrName, std::string("learning_rate"));
        const auto& logged = run->series.at(lrName);
        QVERIFY(!logged.empty());
        const PlotMath::Curve& lr = curves.groups[0];
        QCOMPARE(lr.x.back(), double(logged.back().first));
        for (const auto& [step, value] : logged) {
            const auto at = static_cast<std::size_t>(step - logLag);
            QVERIFY(at < lr.y.size());
            QVERIFY2(std::abs(lr.y[at] - value) <= 1e-9 * std::max(1e-12, std::abs(value)) + 1e-15,
                     qPrintable(QStringLiteral("step %1: %2 vs %3").arg(step).arg(lr.y[at]).arg(value)));
        }
    }

    void epochWiseSchedulerStretchesToSteps()
    {
        // Lightning: StepLR stepped once per epoch (last_epoch 2 at global step 50).
        const auto state = PageTest::state(QStringLiteral("lightning/checkpoints/epoch=1-step=50.ckpt"));
        QVERIFY(state->scheduler);
        QCOMPARE(state->scheduler->schedule.lastEpoch, int64_t(2));
        const PlotMath::LrCurves curves = PlotMath::reconstructLr(state->scheduler->schedule, state->globalStep, 50);
        QCOMPARE(curves.stepsPerPosition, 25.0);
        QCOMPARE(curves.groups.at(0).x, (std::vector<double>{0, 25, 50}));
        QCOMPARE(curves.groups.at(0).y.at(0), 0.05);
        QCOMPARE(curves.groups.at(0).y.at(2), state->scheduler->schedule.lastLr.at(0));
    }

    void notRecomputableShowsRecordedLr()
    {
        ckpt::LrSchedule lambda;
        lambda.kind = "LambdaLR";
        lambda.recomputable = false;
        lambda.why = "lr_lambda functions are not saved";
        lambda.lastEpoch = 10;
        lambda.lastLr = {0.1, 0.01};
        const PlotMath::LrCurves curves = PlotMath::reconstructLr(lambda, 20, 40);
        QCOMPARE(curves.groups.size(), std::size_t(2));
        QCOMPARE(curves.groups[1].x, (std::vector<double>{20}));
        QCOMPARE(curves.groups[1].y, (std::vector<double>{0.01}));
        QVERIFY(curves.note.contains(QStringLiteral("LambdaLR")));
        QVERIFY(curves.note.contains(QStringLiteral("not saved")));
    }

    void decimateKeepsExtremes()
    {
        PlotMath::Curve c;
        for (int i = 0; i < 1000; ++i) {
            c.x.push_back(i);
            c.y.push_back(i == 517 ? 100.0 : i == 733 ? -100.0 : std::sin(i / 50.0));
        }
        const PlotMath::Curve d = PlotMath::decimate(c, 50);
        QVERIFY(d.x.size() <= 151);
        QVERIFY(std::is_sorted(d.x.begin(), d.x.end()));
        QCOMPARE(d.x.front(), 0.0);
        QCOMPARE(d.x.back(), 999.0);
        QVERIFY(std::find(d.y.begin(), d.y.end(), 100.0) != d.y.end());
        QVERIFY(std::find(d.y.begin(), d.y.end(), -100.0) != d.y.end());
        QCOMPARE(PlotMath::decimate(c, 400).x.size(), c.x.size()); // short enough: unchanged
    }

    void coloursFollowThePalette()
    {
        QPalette light;
        light.setColor(QPalette::Base, Qt::white);
        light.setColor(QPalette::Text, Qt::black);
        QPalette dark;
        dark.setColor(QPalette::Base, QColor(30, 30, 30));
        dark.setColor(QPalette::Text, Qt::white);
        for (int i = 0; i < 7; ++i)
            QVERIFY(seriesColor(dark, i).lightnessF() > seriesColor(light, i).lightnessF());
        QVERIFY(seriesColor(light, 0) != seriesColor(light, 1));
        QCOMPARE(seriesColor(light, 7), seriesColor(light, 0)); // the set repeats
        QVERIFY(differenceBackground(dark).lightnessF() < 0.5);
        QVERIFY(differenceBackground(light).lightnessF() > 0.5);
        QCOMPARE(markerColor(dark).rgb(), QColor(Qt::white).rgb());
    }

    void pickSeries()
    {
        const std::map<std::string, std::vector<std::pair<int64_t, double>>> series{
            {"eval_loss", {}}, {"train/loss_step", {}}, {"train/lr-SGD", {}}, {"loss_scale", {}}};
        QCOMPARE(PlotMath::pickSeries(series, {"loss", "train_loss"}, "loss", {"eval", "scale"}),
                 std::string("train/loss_step"));
        QCOMPARE(PlotMath::pickSeries(series, {"learning_rate"}, "lr"), std::string("train/lr-SGD"));
        QCOMPARE(PlotMath::pickSeries(series, {"eval_loss"}, "loss"), std::string("eval_loss"));
        QCOMPARE(PlotMath::pickSeries(series, {}, "grad_norm"), std::string());
    }

    // Checkpoint labels along the step axis never overlap (issue 42): 2 to 1,000 checkpoints, plots from
    // 800 px wide, steps evenly spread or bunched, every fifth one latest/best (long labels).
    void markerLabelsNeverOverlap()
    {
        for (const double width : {800.0, 1000.0, 1400.0, 2000.0}) {
            for (const std::size_t n : {std::size_t(2), std::size_t(3), std::size_t(5), std::size_t(14), std::size_t(20),
                                        std::size_t(57), std::size_t(100), std::size_t(500), std::size_t(1000)}) {
                for (const bool bunched : {false, true}) {
                    std::vector<PlotMath::MarkerLabel> labels;
                    const double left = 60, right = width - 20;
                    for (std::size_t i = 0; i < n; ++i) {
                        const double f = n == 1 ? 0 : double(i) / double(n - 1);
                        const double x = left + (right - left) * (bunched ? f * f * f : f);
                        const int digits = 1 + int(std::log10(10.0 * double(i + 1) * 100));
                        const bool marked = i % 5 == 4 || i + 1 == n;
                        labels.push_back({x, 7.0 * (digits + (marked ? 12 : 0)), 7.0 * digits, marked && i + 1 == n});
                    }
                    const auto placed = PlotMath::layoutMarkerLabels(labels, left, right);
                    QCOMPARE(placed.size(), n);
                    std::vector<std::pair<double, double>> shown;
                    for (std::size_t i = 0; i < n; ++i) {
                        const auto& p = placed[i];
                        if (p.form == PlotMath::LabelForm::Hidden)
                            continue;
                        QVERIFY(p.left >= left && p.right <= right);
                        const double w = p.form == PlotMath::LabelForm::Full ? labels[i].fullWidth : labels[i].shortWidth;
                        QVERIFY(std::abs((p.right - p.left) - w) < 1e-9);
                        QVERIFY(p.left <= labels[i].x + 1e-9 && labels[i].x <= p.right + 1e-9); // at its line
                        shown.emplace_back(p.left, p.right);
                    }
                    std::sort(shown.begin(), shown.end());
                    for (std::size_t i = 1; i < shown.size(); ++i)
                        QVERIFY2(shown[i - 1].second < shown[i].first,
                                 qPrintable(QStringLiteral("%1 labels at %2 px overlap").arg(n).arg(width)));
                    // the latest (important) is always shown, and the first checkpoint too
                    QVERIFY(placed[n - 1].form != PlotMath::LabelForm::Hidden);
                    QVERIFY(placed[0].form != PlotMath::LabelForm::Hidden);
                    if (n <= 5 && !bunched) // a few checkpoints all fit, in full
                        for (const auto& p : placed)
                            QVERIFY(p.form == PlotMath::LabelForm::Full);
                    if (n >= 20 && !bunched) // many: evenly spread, so a good share is shown
                        QVERIFY(shown.size() >= std::min<std::size_t>(n, std::size_t((right - left) / 120)));
                }
            }
        }
    }

    // The main curve is the loss by the frameworks' own names for it (issue 42), never the column that
    // sorts first: Lightning's train_loss_step (on_step and on_epoch both set), Megatron's "lm loss",
    // NeMo's reduced_train_loss; a log with no loss draws none.
    void lossByTheFrameworksNames()
    {
        using Series = std::map<std::string, std::vector<std::pair<int64_t, double>>>;
        auto pick = [](const Series& s) { return PlotMath::pickSeries(s, ckpt::lossMetricNames(), "loss", {"eval", "val", "test", "scale"}); };
        QCOMPARE(pick(Series{{"epoch", {}}, {"first_sample", {}}, {"train_loss_epoch", {}}, {"train_loss_step", {}}, {"val_loss", {}}}),
                 std::string("train_loss_step"));
        QCOMPARE(pick(Series{{"a_first", {}}, {"grad-norm", {}}, {"lm loss", {}}, {"loss-scale", {}}}), std::string("lm loss"));
        QCOMPARE(pick(Series{{"lr", {}}, {"reduced_train_loss", {}}, {"val_loss", {}}}), std::string("reduced_train_loss"));
        QCOMPARE(pick(Series{{"first_sample", {}}, {"learning_rate", {}}}), std::string());
    }
};

CKPT_UI_TEST_MAIN(TestPlotMath)
#include "tst_plotmath.moc"
