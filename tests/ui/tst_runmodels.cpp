// SPDX-License-Identifier: MIT
// The run-level models on the checked-in sample runs, loaded the way the window loads them
// (RunLoader in the background): each model is wrapped in QAbstractItemModelTester before it gets
// data, then printed and compared with what the sample runs are known to hold (sample_runs/README.md,
// sample_runs/broken/README.md, `ckpt audit`).
#include "ckpt/compare/checkpoint_diff.h"
#include "uitestutil.h"

#include "ui/models/checkpointfilesmodel.h"
#include "ui/models/comparisonmodel.h"
#include "ui/models/findingsmodel.h"
#include "ui/models/findingsproxymodel.h"
#include "ui/models/runbrowsermodel.h"
#include "ui/models/statefieldsmodel.h"
#include "ui/models/tensordiffmodel.h"
#include "ui/runloader.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>

namespace {

QString samples(const char* relative)
{
    return QStringLiteral(CKPT_SAMPLE_RUNS "/") + QLatin1String(relative);
}

// Evidence names files by absolute path: the dumps name them below sample_runs/, wherever the checkout is.
QStringList dump(const QAbstractItemModel& model)
{
    QStringList lines = UiTest::dumpModel(model);
    for (QString& line : lines)
        line.replace(samples(""), QString());
    return lines;
}

} // namespace

class TestRunModels : public QObject {
    Q_OBJECT

private:
    RunBrowserModel m_runs;
    std::unique_ptr<QAbstractItemModelTester> m_runsTester;

    RunDataPtr runNamed(const QString& name) const
    {
        for (const RunDataPtr& run : m_runs.runs()) {
            if (run->name == name)
                return run;
        }
        return nullptr;
    }

    static void loadInto(RunLoader& loader, RunBrowserModel& model, const QStringList& paths)
    {
        QObject::connect(&loader, &RunLoader::runAvailable, &model, &RunBrowserModel::addRun);
        QObject::connect(&loader, &RunLoader::stateAvailable, &model,
                         [&model](int runId, int index, const std::shared_ptr<const ckpt::TrainingState>& state, const QString& error,
                                  const std::vector<std::pair<std::string, uint64_t>>& sizes) {
                             model.applyState(runId, index, state, error, sizes);
                         });
        QObject::connect(&loader, &RunLoader::auditAvailable, &model,
                         [&model](int runId, const std::shared_ptr<PlacedFindings>& findings, const QString& note) {
                             model.applyAudit(runId, findings.get(), note);
                         });
        loader.open(paths);
    }

private slots:
    void initTestCase()
    {
        m_runsTester = std::make_unique<QAbstractItemModelTester>(&m_runs);
        RunLoader loader;
        QSignalSpy idle(&loader, &RunLoader::idle);
        QSignalSpy failed(&loader, &RunLoader::openFailed);
        loadInto(loader, m_runs,
                 {samples("ddp4-mlp"), samples("broken/hash-mismatch"), samples("broken/scheduler-stepped-twice"),
                  samples("lightning/checkpoints/epoch=0-step=25.ckpt"), samples("no-such-run")});
        QTRY_VERIFY_WITH_TIMEOUT(!loader.isBusy(), 30000);
        QVERIFY(idle.count() >= 1);
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.first().at(0).toString(), samples("no-such-run"));
        QVERIFY(failed.first().at(1).toString().endsWith(QStringLiteral("no-such-run: no such file or directory")));
    }

    void runBrowser()
    {
        const QStringList expected{
            QStringLiteral("ddp4-mlp | 100–300 |  | 3 info"),
            QStringLiteral("  checkpoint-0000100 | 100 |  | 1 info"),
            QStringLiteral("  checkpoint-0000200 | 200 |  | 1 info"),
            QStringLiteral("  checkpoint-0000300 | 300 | latest | 1 info"),
            QStringLiteral("hash-mismatch | 200–300 |  | 2 err 2 info"),
            QStringLiteral("  checkpoint-0000200 | 200 |  | 1 info"),
            QStringLiteral("  checkpoint-0000300 | 300 | latest | 2 err 1 info"),
            QStringLiteral("scheduler-stepped-twice | 200–300 |  | 3 err 3 warn 2 info"),
            QStringLiteral("  checkpoint-0000200 | 200 |  | 1 err 1 warn 1 info"),
            QStringLiteral("  checkpoint-0000300 | 300 | latest | 2 err 2 warn 1 info"),
            QStringLiteral("epoch=0-step=25.ckpt | 25 |  | 2 info"),
            QStringLiteral("  epoch=0-step=25.ckpt | 25 | latest | 2 info"),
        };
        QVERIFY(UiTest::compareLines(dump(m_runs), expected));
        // The findings dot of a checkpoint is its worst severity.
        const RunDataPtr broken = runNamed(QStringLiteral("hash-mismatch"));
        QVERIFY(broken);
        QCOMPARE(m_runs.checkpointIndex(broken->id, 1).data(RunBrowserModel::WorstSeverityRole).toInt(), int(ckpt::Severity::Error));
        QCOMPARE(m_runs.checkpointIndex(broken->id, 0).data(RunBrowserModel::WorstSeverityRole).toInt(), int(ckpt::Severity::Info));
    }

    void findingsAndFilters()
    {
        FindingsModel model;
        QAbstractItemModelTester tester(&model);
        FindingsProxyModel proxy;
        QAbstractItemModelTester proxyTester(&proxy);
        proxy.setSourceModel(&model);
        std::vector<FindingRow> rows;
        for (const RunDataPtr& run : m_runs.runs()) {
            for (const ckpt::Finding& finding : run->runFindings)
                rows.push_back({run->id, -1, QString(), finding});
            for (std::size_t i = 0; i < run->checkpoints.size(); ++i) {
                for (const ckpt::Finding& finding : run->checkpoints[i].findings)
                    rows.push_back({run->id, int(i), run->name + QStringLiteral("/") + QString::number(i), finding});
            }
        }
        model.setFindings(rows);
        const QStringList expected{
            QStringLiteral("info | scaler | ddp4-mlp/0 | scaler.skipped-steps | ddp4-mlp/checkpoint-0000100/optimizer.pt: optimizer/state/0/step | the optimizer's step 99 is 1 behind global step 100; if GradScaler started at its default init_scale 65536, scale 32768 = 65536 × 0.5^1; with at most 0 growth(s) possible in 100 steps (one per 2000 clean steps), 1 update(s) were skipped by overflows"),
            QStringLiteral("info | scaler | ddp4-mlp/1 | scaler.skipped-steps | ddp4-mlp/checkpoint-0000200/optimizer.pt: optimizer/state/0/step | the optimizer's step 198 is 2 behind global step 200; if GradScaler started at its default init_scale 65536, scale 16384 = 65536 × 0.5^2; with at most 0 growth(s) possible in 200 steps (one per 2000 clean steps), 2 update(s) were skipped by overflows"),
            QStringLiteral("info | scaler | ddp4-mlp/2 | scaler.skipped-steps | ddp4-mlp/checkpoint-0000300/optimizer.pt: optimizer/state/0/step | the optimizer's step 298 is 2 behind global step 300; if GradScaler started at its default init_scale 65536, scale 16384 = 65536 × 0.5^2; with at most 0 growth(s) possible in 300 steps (one per 2000 clean steps), 2 update(s) were skipped by overflows"),
            QStringLiteral("info | scaler | hash-mismatch/0 | scaler.skipped-steps | broken/hash-mismatch/checkpoint-0000200/optimizer.pt: optimizer/state/0/step | the optimizer's step 198 is 2 behind global step 200; if GradScaler started at its default init_scale 65536, scale 16384 = 65536 × 0.5^2; with at most 0 growth(s) possible in 200 steps (one per 2000 clean steps), 2 update(s) were skipped by overflows"),
            QStringLiteral("error | integrity | hash-mismatch/1 | integrity.hash-mismatch | checkpoint-0000300/manifest.json: files.optimizer.pt.sha256 | checkpoint-0000300: the SHA-256 of optimizer.pt does not match manifest.json"),
            QStringLiteral("error | integrity | hash-mismatch/1 | integrity.latest-incomplete | latest | `latest` points at checkpoint-0000300, which fails verification (1 error above): a resume from it is not safe"),
            QStringLiteral("info | scaler | hash-mismatch/1 | scaler.skipped-steps | broken/hash-mismatch/checkpoint-0000300/optimizer.pt: optimizer/state/0/step | the optimizer's step 298 is 2 behind global step 300; if GradScaler started at its default init_scale 65536, scale 16384 = 65536 × 0.5^2; with at most 0 growth(s) possible in 300 steps (one per 2000 clean steps), 2 update(s) were skipped by overflows"),
            QStringLiteral("error | scheduler | scheduler-stepped-twice/0 | scheduler.step-delta | broken/scheduler-stepped-twice/checkpoint-0000200/optimizer.pt: scheduler/last_epoch | the scheduler moved 200 position(s) while the global step advanced 100 (2 scheduler steps per update)"),
            QStringLiteral("warning | scheduler | scheduler-stepped-twice/0 | scheduler.lr-log-departs | broken/scheduler-stepped-twice (metrics log) | from step 202 the logged learning rate 0.0007229594859403045 departs from the schedule saved at step 200 (0.0007364378763744426)"),
            QStringLiteral("info | scaler | scheduler-stepped-twice/0 | scaler.skipped-steps | broken/scheduler-stepped-twice/checkpoint-0000200/optimizer.pt: optimizer/state/0/step | the optimizer's step 198 is 2 behind global step 200; if GradScaler started at its default init_scale 65536, scale 16384 = 65536 × 0.5^2; with at most 0 growth(s) possible in 200 steps (one per 2000 clean steps), 2 update(s) were skipped by overflows"),
            QStringLiteral("error | scheduler | scheduler-stepped-twice/1 | scheduler.position | broken/scheduler-stepped-twice/checkpoint-0000300/optimizer.pt: scheduler/last_epoch | the scheduler is at position 400 but training is at global step 300 or epoch 4 (ahead by 100)"),
            QStringLiteral("error | scheduler | scheduler-stepped-twice/1 | scheduler.step-delta | broken/scheduler-stepped-twice/checkpoint-0000200/optimizer.pt: scheduler/last_epoch | the scheduler moved 200 position(s) while the global step advanced 100 (2 scheduler steps per update)"),
            QStringLiteral("warning | scheduler | scheduler-stepped-twice/1 | scheduler.lr-log-departs | broken/scheduler-stepped-twice (metrics log) | from step 202 the logged learning rate 0.0007229594859403045 departs from the schedule saved at step 200 (0.0007364378763744426)"),
            // Stepped twice per update, its cosine (T_max 300) is at position 400: past its minimum, rising.
            QStringLiteral("warning | scheduler | scheduler-stepped-twice/1 | scheduler.lr-past-minimum | computed from broken/scheduler-stepped-twice/checkpoint-0000300/optimizer.pt: scheduler | CosineAnnealingLR brought the learning rate of param group 0 down to 0 at scheduler step 300, then its own formula raised it again, to 0.00075 at step 400"),
            QStringLiteral("info | scaler | scheduler-stepped-twice/1 | scaler.skipped-steps | broken/scheduler-stepped-twice/checkpoint-0000300/optimizer.pt: optimizer/state/0/step | the optimizer's step 298 is 2 behind global step 300; if GradScaler started at its default init_scale 65536, scale 16384 = 65536 × 0.5^2; with at most 0 growth(s) possible in 300 steps (one per 2000 clean steps), 2 update(s) were skipped by overflows"),
            QStringLiteral("info | rng | epoch=0-step=25.ckpt/0 | rng.missing | lightning/checkpoints/epoch=0-step=25.ckpt | no RNG state in this training checkpoint: a resume cannot continue the random streams"),
            QStringLiteral("info | environment | epoch=0-step=25.ckpt/0 | environment.not-recorded | lightning/checkpoints/epoch=0-step=25.ckpt | not recorded in this checkpoint: precision (fp32/fp16/bf16)"),
        };
        QVERIFY(UiTest::compareLines(dump(model), expected));

        proxy.setMinimumSeverity(int(ckpt::Severity::Error));
        for (int row = 0; row < proxy.rowCount(); ++row)
            QCOMPARE(proxy.index(row, FindingsModel::Severity).data().toString(), QStringLiteral("error"));
        QVERIFY(proxy.rowCount() > 0);
        proxy.setMinimumSeverity(0);
        proxy.setComponent(int(ckpt::Component::Security));
        QCOMPARE(proxy.rowCount(), 0);
        proxy.setComponent(int(ckpt::Component::Integrity));
        QCOMPARE(proxy.rowCount(), 2); // hash-mismatch and the latest pointer naming it
        for (int row = 0; row < proxy.rowCount(); ++row)
            QCOMPARE(proxy.index(row, FindingsModel::Component).data().toString(), QStringLiteral("integrity"));
    }

    // The Findings dock's tree (issue 42): each group of findings that say the same thing once, worst
    // first, its instances below it; a group of one is its finding; the filters keep whole groups.
    void findingsGrouped()
    {
        FindingsModel model;
        model.setGrouped(true);
        QAbstractItemModelTester tester(&model);
        FindingsProxyModel proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester proxyTester(&proxy);
        std::vector<FindingRow> rows;
        for (const RunDataPtr& run : m_runs.runs()) {
            for (std::size_t i = 0; i < run->checkpoints.size(); ++i) {
                for (const ckpt::Finding& finding : run->checkpoints[i].findings)
                    rows.push_back({run->id, int(i), run->name + QStringLiteral("/") + QString::number(i), finding});
            }
        }
        model.setFindings(rows);
        int told = 0;
        int skipped = -1;
        for (int row = 0; row < model.rowCount(); ++row) {
            const QModelIndex group = model.index(row, 0);
            const int members = group.data(FindingsModel::MemberCountRole).toInt();
            told += members;
            QCOMPARE(model.rowCount(group), members > 1 ? members : 0);
            for (int child = 0; child < model.rowCount(group); ++child) {
                const QModelIndex c = model.index(child, FindingsModel::Rule, group);
                QCOMPARE(c.data().toString(), model.index(row, FindingsModel::Rule).data().toString());
                QCOMPARE(c.parent(), group);
            }
            if (model.index(row, FindingsModel::Rule).data().toString() == QStringLiteral("scaler.skipped-steps")
                && model.index(row, FindingsModel::Checkpoint).data().toString().startsWith(QStringLiteral("3 findings: ddp4-mlp/0")))
                skipped = row;
        }
        QCOMPARE(told, int(rows.size())); // every finding told once
        QVERIFY(model.rowCount() < int(rows.size()));
        QVERIFY2(skipped >= 0, "ddp4-mlp's three scaler.skipped-steps are one group");
        QVERIFY(model.index(skipped, FindingsModel::Message).data().toString().endsWith(QStringLiteral("(×3)")));
        QCOMPARE(model.rowAt(model.index(skipped, 0)).checkpointIndex, 0); // a group jumps to its first checkpoint
        // A pair's finding, listed under both of its checkpoints, is one finding about the pair.
        int pair = -1;
        for (int row = 0; row < model.rowCount(); ++row) {
            if (model.index(row, FindingsModel::Rule).data().toString() == QStringLiteral("scheduler.step-delta"))
                pair = row;
        }
        QVERIFY(pair >= 0);
        QCOMPARE(model.index(pair, FindingsModel::Checkpoint).data().toString(),
                 QStringLiteral("pair: scheduler-stepped-twice/0 → scheduler-stepped-twice/1"));
        QCOMPARE(model.index(pair, 0).data(FindingsModel::FindingCountRole).toInt(), 1);
        QCOMPARE(model.index(pair, 0).data(FindingsModel::MemberCountRole).toInt(), 2);
        QVERIFY(!model.index(pair, FindingsModel::Message).data().toString().contains(QStringLiteral("(×")));
        proxy.sort(FindingsModel::Severity, Qt::DescendingOrder); // as the dock shows them: worst first
        QCOMPARE(proxy.index(0, FindingsModel::Severity).data().toString(), QStringLiteral("error"));

        proxy.setMinimumSeverity(int(ckpt::Severity::Error));
        QVERIFY(proxy.rowCount() > 0);
        for (int row = 0; row < proxy.rowCount(); ++row)
            QCOMPARE(proxy.index(row, FindingsModel::Severity).data().toString(), QStringLiteral("error"));
    }

    void checkpointFiles()
    {
        CheckpointFilesModel model;
        QAbstractItemModelTester tester(&model);
        const RunDataPtr run = runNamed(QStringLiteral("hash-mismatch"));
        QVERIFY(run);
        model.setCheckpoint(&run->checkpoints[1], run->audited, run->auditNote);
        const QStringList expected{
            QStringLiteral("COMPLETE | complete |  | 0 B | present"),
            QStringLiteral("manifest.json | manifest |  | 1.30 KiB | present"),
            QStringLiteral("model.pt | model |  | 22.6 KiB | verified (size, sha256)"),
            QStringLiteral("optimizer.pt | optimizer |  | 46.7 KiB | integrity.hash-mismatch"),
            QStringLiteral("rng-rank-0.pt | rng | 0 | 13.4 KiB | verified (size, sha256)"),
            QStringLiteral("rng-rank-1.pt | rng | 1 | 13.4 KiB | verified (size, sha256)"),
            QStringLiteral("rng-rank-2.pt | rng | 2 | 13.4 KiB | verified (size, sha256)"),
            QStringLiteral("rng-rank-3.pt | rng | 3 | 13.4 KiB | verified (size, sha256)"),
        };
        QVERIFY(UiTest::compareLines(dump(model), expected));
        model.setCheckpoint(nullptr, false, QString());
        QCOMPARE(model.rowCount(), 0);
    }

    void stateFields()
    {
        StateFieldsModel model;
        QAbstractItemModelTester tester(&model);
        const RunDataPtr run = runNamed(QStringLiteral("ddp4-mlp"));
        QVERIFY(run);
        model.setState(run->checkpoints[2].state);
        const QStringList expected{
            QStringLiteral("Progress counters (C) |  | "),
            QStringLiteral("  epoch (manifest.json) | 4 | manifest.json: epoch"),
            QStringLiteral("  global_step (manifest.json) | 300 | manifest.json: global_step"),
            QStringLiteral("  epoch (optimizer.pt) | 4 | optimizer.pt: epoch"),
            QStringLiteral("  global_step (optimizer.pt) | 300 | optimizer.pt: global_step"),
            QStringLiteral("Data cursor (D) |  | "),
            QStringLiteral("  data.batches_per_epoch | 64 | manifest.json: data/batches_per_epoch"),
            QStringLiteral("  data.per_rank_batch_size | 8 | manifest.json: data/per_rank_batch_size"),
            QStringLiteral("  data.sampler_seed | 4321 | manifest.json: data/sampler_seed"),
            QStringLiteral("  data.samples | 2048 | manifest.json: data/samples"),
            QStringLiteral("  batch_pos | 44 | optimizer.pt: batch_pos"),
            QStringLiteral("  data_seed | 4321 | optimizer.pt: data_seed"),
            QStringLiteral("  sampler.epoch (rng-rank-0.pt) | 4 | rng-rank-0.pt: sampler/epoch"),
            QStringLiteral("  sampler.position (rng-rank-0.pt) | 44 | rng-rank-0.pt: sampler/position"),
            QStringLiteral("  sampler.seed (rng-rank-0.pt) | 4321 | rng-rank-0.pt: sampler/seed"),
            QStringLiteral("  sampler.epoch (rng-rank-1.pt) | 4 | rng-rank-1.pt: sampler/epoch"),
            QStringLiteral("  sampler.position (rng-rank-1.pt) | 44 | rng-rank-1.pt: sampler/position"),
            QStringLiteral("  sampler.seed (rng-rank-1.pt) | 4321 | rng-rank-1.pt: sampler/seed"),
            QStringLiteral("  sampler.epoch (rng-rank-2.pt) | 4 | rng-rank-2.pt: sampler/epoch"),
            QStringLiteral("  sampler.position (rng-rank-2.pt) | 44 | rng-rank-2.pt: sampler/position"),
            QStringLiteral("  sampler.seed (rng-rank-2.pt) | 4321 | rng-rank-2.pt: sampler/seed"),
            QStringLiteral("  sampler.epoch (rng-rank-3.pt) | 4 | rng-rank-3.pt: sampler/epoch"),
            QStringLiteral("  sampler.position (rng-rank-3.pt) | 44 | rng-rank-3.pt: sampler/position"),
            QStringLiteral("  sampler.seed (rng-rank-3.pt) | 4321 | rng-rank-3.pt: sampler/seed"),
            QStringLiteral("Environment (E) |  | "),
            QStringLiteral("  config_sha256 | ae694783115d939ced0697c6b81a25e24e2d5305024aa0488041ba05b859f9a0 | manifest.json: config_sha256"),
            QStringLiteral("  dataset_version | sha256:7b3e6de1a235440205050c0377b8ea904f857ede75aff1122419de6d0bc0f537 | manifest.json: dataset_version"),
            QStringLiteral("  format_version (manifest.json) | 3 | manifest.json: format_version"),
            QStringLiteral("  model_arch | mlp-16-64-64-1-dropout0.1 | manifest.json: model_arch"),
            QStringLiteral("  rank_seed | seed + rank | manifest.json: rank_seed"),
            QStringLiteral("  seed | 1234 | manifest.json: seed"),
            QStringLiteral("  torch_version | 1.13.0a0 | manifest.json: torch_version"),
            QStringLiteral("  world_size (manifest.json) | 4 | manifest.json: world_size"),
            QStringLiteral("  format_version (optimizer.pt) | 1 | optimizer.pt: format_version"),
            QStringLiteral("  world_size (rng-rank-0.pt) | 4 | rng-rank-0.pt: world_size"),
            QStringLiteral("  world_size (rng-rank-1.pt) | 4 | rng-rank-1.pt: world_size"),
            QStringLiteral("  world_size (rng-rank-2.pt) | 4 | rng-rank-2.pt: world_size"),
            QStringLiteral("  world_size (rng-rank-3.pt) | 4 | rng-rank-3.pt: world_size"),
        };
        QVERIFY(UiTest::compareLines(dump(model), expected));
    }

    void comparison()
    {
        ComparisonModel model;
        QAbstractItemModelTester tester(&model);
        const RunDataPtr run = runNamed(QStringLiteral("scheduler-stepped-twice"));
        QVERIFY(run);
        model.setComparison(compareStates(*run->checkpoints[0].state, *run->checkpoints[1].state));
        model.setDifferencesOnly(true);
        const QStringList expected{
            QStringLiteral("Progress counters (C) |  |  | 4 of 4 differ"),
            QStringLiteral("  epoch (manifest.json) | 3 | 4 | changed"),
            QStringLiteral("  global_step (manifest.json) | 200 | 300 | changed"),
            QStringLiteral("  epoch (optimizer.pt) | 3 | 4 | changed"),
            QStringLiteral("  global_step (optimizer.pt) | 200 | 300 | changed"),
            QStringLiteral("Data cursor (D) |  |  | 9 of 18 differ"),
            QStringLiteral("  batch_pos | 8 | 44 | changed"),
            QStringLiteral("  sampler.epoch (rng-rank-0.pt) | 3 | 4 | changed"),
            QStringLiteral("  sampler.position (rng-rank-0.pt) | 8 | 44 | changed"),
            QStringLiteral("  sampler.epoch (rng-rank-1.pt) | 3 | 4 | changed"),
            QStringLiteral("  sampler.position (rng-rank-1.pt) | 8 | 44 | changed"),
            QStringLiteral("  sampler.epoch (rng-rank-2.pt) | 3 | 4 | changed"),
            QStringLiteral("  sampler.position (rng-rank-2.pt) | 8 | 44 | changed"),
            QStringLiteral("  sampler.epoch (rng-rank-3.pt) | 3 | 4 | changed"),
            QStringLiteral("  sampler.position (rng-rank-3.pt) | 8 | 44 | changed"),
            QStringLiteral("Scheduler (L) |  |  | 2 of 4 differ"),
            QStringLiteral("  last_epoch | 200 | 400 | inconsistent"),
            QStringLiteral("  last_lr | [0.0007499999999999993] | [0.000750000000000001] | changed"),
            QStringLiteral("Grad scaler (A) |  |  | 1 of 6 differ"),
            QStringLiteral("  growth_tracker | 59 | 159 | changed"),
            QStringLiteral("Optimizer (O) |  |  | 2 of 13 differ"),
            QStringLiteral("  step (first parameter) | 198 | 298 | changed"),
            QStringLiteral("  group 0 lr | 0.0007499999999999993 | 0.000750000000000001 | changed"),
            QStringLiteral("RNG fingerprints (R) |  |  | 12 of 12 differ"),
            QStringLiteral("  rank 0 numpy (rng/numpy) | cb8f24d81b7f4b3f | 684c552c63261875 | changed"),
            QStringLiteral("  rank 0 python (rng/python) | 60108e26d38e0c24 | 557ddec845f087fd | changed"),
            QStringLiteral("  rank 0 torch_cpu (rng/torch) | 61da67fbaa1e5e4a | d22bccce5946e10f | changed"),
            QStringLiteral("  rank 1 numpy (rng/numpy) | 6c08db4f22c4c03a | 154746774832d428 | changed"),
            QStringLiteral("  rank 1 python (rng/python) | 0e3ff1dc438ceb7a | 7a45652b137ef3b7 | changed"),
            QStringLiteral("  rank 1 torch_cpu (rng/torch) | d9aac8f2927eb74c | 3fe92fc9b031af17 | changed"),
            QStringLiteral("  rank 2 numpy (rng/numpy) | 474fb2f097de4828 | 83f5aa4ec017d821 | changed"),
            QStringLiteral("  rank 2 python (rng/python) | c6e8c787c17c779f | af1b8e3e9e6dfa72 | changed"),
            QStringLiteral("  rank 2 torch_cpu (rng/torch) | 16131769d012db2a | 161b1ddd5a45e1e6 | changed"),
            QStringLiteral("  rank 3 numpy (rng/numpy) | 7db571e90bda3524 | 9d45de58d676613a | changed"),
            QStringLiteral("  rank 3 python (rng/python) | 06c6f05df0148833 | 3c834d3c873ed876 | changed"),
            QStringLiteral("  rank 3 torch_cpu (rng/torch) | 6091e0b997828b5d | 8cb4cd2e70721ba8 | changed"),
            QStringLiteral("Model (W) |  |  | all 2 same"),
            QStringLiteral("Environment (E) |  |  | all 13 same"),
        };
        QVERIFY(UiTest::compareLines(dump(model), expected));
        const QModelIndex scheduler = model.index(2, 0);
        QCOMPARE(scheduler.data().toString(), QStringLiteral("Scheduler (L)"));
        QCOMPARE(scheduler.data(ComparisonModel::StatusRole).toInt(), int(CompareStatus::Inconsistent));
        model.setDifferencesOnly(false);
        QVERIFY(model.rowCount(scheduler) == 4);
    }

    void tensorDiff()
    {
        TensorDiffModel model;
        QAbstractItemModelTester tester(&model);
        const RunDataPtr run = runNamed(QStringLiteral("ddp4-mlp"));
        const RunDataPtr lightning = runNamed(QStringLiteral("epoch=0-step=25.ckpt"));
        QVERIFY(run && lightning);
        model.setStates(run->checkpoints[0].state, run->checkpoints[2].state);
        const QStringList expected{
            QStringLiteral("0.weight | same shape | float32 [64, 16] | float32 [64, 16] | … | … | …"),
            QStringLiteral("0.bias | same shape | float32 [64] | float32 [64] | … | … | …"),
            QStringLiteral("3.weight | same shape | float32 [64, 64] | float32 [64, 64] | … | … | …"),
            QStringLiteral("3.bias | same shape | float32 [64] | float32 [64] | … | … | …"),
            QStringLiteral("6.weight | same shape | float32 [1, 64] | float32 [1, 64] | … | … | …"),
            QStringLiteral("6.bias | same shape | float32 [1] | float32 [1] | … | … | …"),
        };
        QVERIFY(UiTest::compareLines(dump(model), expected));
        model.setStates(lightning->checkpoints[0].state, run->checkpoints[2].state);
        const QStringList mixed{
            QStringLiteral("model.0.weight | only in A | float32 [16, 8] | — | … | … | …"),
            QStringLiteral("model.0.bias | only in A | float32 [16] | — | … | … | …"),
            QStringLiteral("model.2.weight | only in A | float32 [1, 16] | — | … | … | …"),
            QStringLiteral("model.2.bias | only in A | float32 [1] | — | … | … | …"),
            QStringLiteral("0.weight | only in B | — | float32 [64, 16] | … | … | …"),
            QStringLiteral("0.bias | only in B | — | float32 [64] | … | … | …"),
            QStringLiteral("3.weight | only in B | — | float32 [64, 64] | … | … | …"),
            QStringLiteral("3.bias | only in B | — | float32 [64] | … | … | …"),
            QStringLiteral("6.weight | only in B | — | float32 [1, 64] | … | … | …"),
            QStringLiteral("6.bias | only in B | — | float32 [1] | … | … | …"),
        };
        QVERIFY(UiTest::compareLines(dump(model), mixed));

        // With the core's diff: every tensor aligned (model and optimizer), the figures shown as computed.
        const ckpt::CheckpointDiff diff = ckpt::diffCheckpoints(run->checkpoints[0].info.path, run->checkpoints[2].info.path);
        model.setDiff(diff);
        QVERIFY(model.hasValues());
        QCOMPARE(model.rowCount(), int(diff.tensors.size()));
        QVERIFY(diff.tensors.size() > 6);
        // every tensor once, with its figures; what changed most first (relative L2 descending)
        std::map<QString, const ckpt::TensorDiff*> byKey;
        for (const auto& t : diff.tensors)
            byKey[QString::fromStdString(t.key)] = &t;
        double previous = std::numeric_limits<double>::infinity();
        bool changedPart = true;
        for (int row = 0; row < model.rowCount(); ++row) {
            const QString key = model.index(row, TensorDiffModel::Tensor).data().toString();
            QVERIFY2(byKey.count(key), qPrintable(key));
            const ckpt::TensorDiff& t = *byKey[key];
            byKey.erase(key);
            QCOMPARE(model.index(row, TensorDiffModel::Status).data().toString(), QString::fromLatin1(ckpt::diffStatusName(t.status)));
            if (t.status == ckpt::DiffStatus::Changed) {
                QVERIFY2(changedPart, "a changed tensor below an equal one");
                QVERIFY(t.relL2 <= previous);
                previous = t.relL2;
                QCOMPARE(model.index(row, TensorDiffModel::RelL2).data().toString(), QString::number(t.relL2, 'g', 6));
            } else {
                changedPart = false;
            }
        }
        QVERIFY(byKey.empty());
    }

    void cancelStopsTheScans()
    {
        RunBrowserModel model;
        QAbstractItemModelTester tester(&model);
        RunLoader loader;
        QSignalSpy idle(&loader, &RunLoader::idle);
        loadInto(loader, model, {samples("ddp4-mlp"), samples("tiny-mlp")});
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 2, 10000);
        loader.cancel();
        QVERIFY(!loader.isBusy());
        QVERIFY(idle.count() >= 1);
        const int statesSoFar = [&] {
            int n = 0;
            for (const RunDataPtr& run : model.runs())
                for (const RunCheckpointData& c : run->checkpoints)
                    n += c.scanned;
            return n;
        }();
        loader.waitForWorkers(); // what was still running has ended ...
        UiTest::deliverPostedEvents(); // ... and what it posted after the cancel has been delivered or dropped
        int statesAfter = 0;
        for (const RunDataPtr& run : model.runs())
            for (const RunCheckpointData& c : run->checkpoints)
                statesAfter += c.scanned;
        QCOMPARE(statesAfter, statesSoFar);
    }

    void closedRunResultsAreDropped()
    {
        RunBrowserModel model;
        QAbstractItemModelTester tester(&model);
        RunLoader loader;
        loadInto(loader, model, {samples("tiny-mlp")});
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, 10000);
        const int id = model.runs().front()->id;
        loader.forget(id);
        model.removeRun(id);
        QVERIFY(!loader.isBusy());
        loader.waitForWorkers();
        UiTest::deliverPostedEvents();
        QCOMPARE(model.rowCount(), 0);
    }
};

CKPT_UI_TEST_MAIN(TestRunModels)
#include "tst_runmodels.moc"
