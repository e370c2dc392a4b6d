// SPDX-License-Identifier: MIT
// The rule catalogue, rule by rule: each rule fires on a real PyTorch checkpoint made to break it
// (tests/fixtures/make_rule_cases.py, the broken sample runs, or a copy of a sample run changed
// here) and stays quiet on the good one. Every rule of the catalogue must appear in these tables.
#include "test_support.h"

#include "ckpt/rules/check.h"
#include "ckpt/rules/rule_catalogue.h"
#include "ckpt/state/training_state.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

using namespace ckpt;
using namespace testsupport;
namespace fs = std::filesystem;

namespace {

std::string sample(const std::string& rel) { return std::string(CKPT_SOURCE_DIR) + "/sample_runs/" + rel; }
std::string rcase(const std::string& rel) { return std::string(CKPT_TESTDATA_DIR) + "/rule_cases/" + rel; }

std::set<std::string>& testedRules()
{
    static std::set<std::string> rules;
    return rules;
}

std::vector<Finding> checkOne(const std::string& path, bool audit = false)
{
    return checkCheckpoint(gatherFacts(path, {audit, true}));
}

std::vector<Finding> checkTwo(const std::string& a, const std::string& b)
{
    return checkPair(gatherFacts(a, {false, true}), gatherFacts(b, {false, true}));
}

std::vector<Finding> checkRunDir(const std::string& dir, bool audit = true)
{
    CheckOptions options;
    options.audit = audit;
    return checkPaths({dir}, options).findings;
}

const Finding* find(const std::vector<Finding>& findings, const std::string& rule)
{
    for (const auto& f : findings) {
        if (f.rule == rule)
            return &f;
    }
    return nullptr;
}

QByteArray listRules(const std::vector<Finding>& findings)
{
    QByteArray out;
    for (const auto& f : findings)
        out += QByteArray(severityName(f.severity)) + " " + q(f.rule) + "; ";
    return out;
}

/// A temporary copy of a sample run folder (tests never write into sample_runs/).
std::string copyOf(const QTemporaryDir& tmp, const std::string& from, const std::string& name)
{
    const std::string to = tmp.path().toStdString() + "/" + name;
    fs::create_directories(fs::path(to).parent_path());
    fs::copy(from, to, fs::copy_options::recursive);
    return to;
}

} // namespace

class TestRules : public QObject {
    Q_OBJECT
private slots:
    // ---- one checkpoint: the rule fires on `positive` (at `severity`) and not on `negative` ----
    void singleCheckpointRules_data()
    {
        QTest::addColumn<QString>("rule");
        QTest::addColumn<QString>("positive");
        QTest::addColumn<QString>("negative");
        QTest::addColumn<QString>("severity");
        auto row = [](const char* rule, const std::string& pos, const std::string& neg, const char* sev) {
            QTest::newRow((std::string(rule) + " " + fs::path(pos).filename().string()).c_str())
                << rule << QString::fromStdString(pos) << QString::fromStdString(neg) << sev;
        };
        const std::string good = rcase("good.pt");
        row("model.missing", rcase("optimizer_only.pt"), good, "info");
        row("model.nonfinite", rcase("nan_weight.pt"), good, "error");
        row("optimizer.state-missing", rcase("fresh_optimizer.pt"), good, "error");
        row("optimizer.param-without-state", rcase("unused_param.pt"), good, "warning");
        row("optimizer.unmatched-params", rcase("superset_optimizer.pt"), good, "warning");
        row("optimizer.unmatched-params", rcase("subset_optimizer.pt"), good, "info"); // frozen, or left out: undecidable
        row("optimizer.unmatched-params", rcase("decay_groups_swapped.pt"), rcase("decay_groups.pt"), "warning");
        row("optimizer.moment-shape", rcase("swapped_state.pt"), good, "error");
        row("optimizer.steps-differ", rcase("uneven_steps.pt"), good, "warning");
        // With an enabled GradScaler the gap may be overflow skips: undecidable without init_scale
        // (the pair rule optimizer.reset proves the restart from two checkpoints).
        row("optimizer.step-vs-global-step", sample("broken/optimizer-not-restored/checkpoint-0000300"),
            sample("ddp4-mlp/checkpoint-0000300"), "info");
        row("optimizer.step-vs-global-step", rcase("later_lost_steps.pt"), rcase("later.pt"), "error");
        row("optimizer.nonfinite", rcase("inf_moment.pt"), good, "error");
        row("optimizer.negative-second-moment", rcase("negative_sq.pt"), good, "error");
        row("scheduler.missing", rcase("no_scheduler.pt"), good, "info");
        row("scheduler.position", sample("broken/scheduler-stepped-twice/checkpoint-0000300"),
            sample("ddp4-mlp/checkpoint-0000300"), "error");
        row("scheduler.step-count", rcase("step_count.pt"), good, "warning");
        row("scheduler.lr-formula", rcase("lr_edited.pt"), good, "warning");
        row("scheduler.lr-optimizer", rcase("group_lr.pt"), good, "error");
        row("scheduler.initial-lr-missing", rcase("no_initial_lr.pt"), good, "error");
        // A scaler reset on resume is not provable from one checkpoint (another init_scale gives the
        // same figures): quiet here, scaler.unreachable proves it from the pair.
        row("scaler.state", rcase("scaler_inf.pt"), sample("broken/scaler-reset/checkpoint-0000300"), "error");
        row("scaler.state", rcase("scaler_past_interval.pt"), rcase("scaler_custom_init.pt"), "warning");
        row("scaler.skipped-steps", sample("ddp4-mlp/checkpoint-0000300"), sample("tiny-mlp/checkpoint-0000150"), "info");
        row("scaler.missing", rcase("fp16_no_scaler.pt"), good, "warning");
        row("scaler.counters-missing", std::string(CKPT_TESTDATA_DIR) + "/story_runs/loss-scaler-counters/global_step20",
            sample("deepspeed/global_step40"), "warning");
        // ZeRO's fp32 masters against the fp16 module: a fine-tune's module over the initialisation's masters,
        // and a healthy DeepSpeed save whose module is the masters' rounding.
        row("optimizer.master-weights-differ", std::string(CKPT_TESTDATA_DIR) + "/story_runs/zero-master-differs/global_step20",
            sample("deepspeed/global_step40"), "error");
        row("model.config-disagrees", std::string(CKPT_TESTDATA_DIR) + "/model_folders/config-mismatch",
            std::string(CKPT_TESTDATA_DIR) + "/model_folders/llama-sharded", "error");
        // A peft adapter against its adapter_config.json (a rank_pattern the healthy folder keeps) and the base beside it.
        const std::string folders = std::string(CKPT_TESTDATA_DIR) + "/model_folders/";
        row("model.tokenizer-disagrees", folders + "tokenizer-grown", folders + "llama-sharded", "warning");
        row("model.adapter-disagrees", folders + "peft-lora-rank-lost", folders + "peft-lora", "error");
        row("model.adapter-disagrees", folders + "peft-lora-wrong-base", folders + "peft-lora", "error");
        row("model.adapter-untargeted", folders + "peft-lora-untargeted", folders + "peft-lora", "warning");
        // Written by Lightning 2.1 itself: CosineAnnealingLR(T_max=12) trained 24 steps, and T_max=24 for 24 (issue 42).
        const std::string lightningRuns = std::string(CKPT_SOURCE_DIR) + "/tests/fixtures/real_libraries/runs/lightning/";
        row("scheduler.lr-past-minimum", lightningRuns + "cosine-past-tmax/checkpoints/epoch=2-step=24.ckpt",
            lightningRuns + "clean-cosine/checkpoints/epoch=2-step=24.ckpt", "warning");
        row("rng.missing", sample("lightning/checkpoints/epoch=1-step=50.ckpt"), sample("ddp4-mlp/checkpoint-0000300"), "info");
        row("rng.invalid", rcase("bad_rng.pt"), good, "error");
        row("rng.rank-missing", rcase("ranks3"), sample("ddp4-mlp/checkpoint-0000300"), "error");
        row("rng.kinds-differ", rcase("ranks3"), sample("ddp4-mlp/checkpoint-0000300"), "warning");
        row("rng.ranks-identical", sample("broken/rng-not-restored/checkpoint-0000300"), sample("ddp4-mlp/checkpoint-0000300"), "error");
        row("data.cursor-missing", rcase("no_cursor.pt"), good, "info");
        row("data.cursor-vs-step", sample("broken/data-cursor-wrong/checkpoint-0000300"), sample("ddp4-mlp/checkpoint-0000300"), "error");
        row("progress.loop-counters", rcase("lightning_mid_batch.ckpt"), rcase("lightning_batch_end_25.ckpt"), "warning");
        row("progress.loop-counters", rcase("lightning_off_by_one.ckpt"), sample("lightning/checkpoints/epoch=1-step=50.ckpt"), "info");
        row("environment.not-recorded", rcase("no_env.pt"), sample("ddp4-mlp/checkpoint-0000300"), "info");
        row("environment.mixed", rcase("mixed_env"), sample("ddp4-mlp/checkpoint-0000300"), "error");
        row("integrity.file-unreadable", rcase("truncated"), good, "error");
        row("integrity.shared-storage", rcase("shared_moments.pt"), good, "error");
        row("security.unknown-import", rcase("custom_class.pt"), good, "info");
        row("security.dangerous-import", std::string(CKPT_TESTDATA_DIR) + "/hostile/os_system_literal.pkl", good, "error");
    }
    void singleCheckpointRules()
    {
        QFETCH(QString, rule);
        QFETCH(QString, positive);
        QFETCH(QString, negative);
        QFETCH(QString, severity);
        testedRules().insert(rule.toStdString());
        const auto pos = checkOne(positive.toStdString());
        const Finding* f = find(pos, rule.toStdString());
        QVERIFY2(f, listRules(pos).constData());
        QCOMPARE(QString(severityName(f->severity)), severity);
        if (f->severity == Severity::Warning) // a warning names the convention it rests on
            QVERIFY2(!f->assumes.empty(), (f->rule + " has no assumes").c_str());
        QVERIFY(!f->message.empty());
        QVERIFY(!f->hint.empty());
        QVERIFY2(!f->evidence.empty(), "every finding shows its evidence");
        QCOMPARE(componentName(f->component), componentName(ruleInfo(f->rule).component));
        QCOMPARE(f->checkpoints, std::vector<std::string>{positive.toStdString()});
        const auto neg = checkOne(negative.toStdString());
        QVERIFY2(!find(neg, rule.toStdString()), listRules(neg).constData());
    }

    // Weight decay / no decay groups (the HF Trainer's and nanoGPT's set-up): optimizer indices run
    // over the groups in order, not over the model. Every index gets the name torch gave it, and
    // the clean checkpoint raises no warning or error (it used to raise four moment-shape errors).
    void decayGroupsNamedAsTorchNumbersThem()
    {
        std::ifstream in(rcase("decay_groups.names.json"));
        QVERIFY2(in, "decay_groups.names.json missing: run fixtures.rule_cases");
        const auto expected = nlohmann::json::parse(in);
        const TrainingState s = readTrainingState(rcase("decay_groups.pt"));
        QVERIFY(s.optimizer);
        QVERIFY2(s.optimizer->nameMapping.starts_with("within 2 param groups"), s.optimizer->nameMapping.c_str());
        QCOMPARE(s.optimizer->paramState.size(), expected.size());
        for (const auto& ps : s.optimizer->paramState)
            QCOMPARE(ps.name, expected.at(ps.index).get<std::string>());
        for (const auto& f : checkOne(rcase("decay_groups.pt")))
            QVERIFY2(f.severity == Severity::Info, (f.rule + ": " + f.message).c_str());
    }

    // GradScaler(init_scale=4096) with a tracker that counts every clean step: healthy, whatever
    // the default init_scale would imply (it used to be "cannot be reached in 10 steps", an error).
    void customInitScaleIsQuiet()
    {
        const auto found = checkOne(rcase("scaler_custom_init.pt"));
        for (const auto& f : found)
            QVERIFY2(f.severity == Severity::Info, (f.rule + ": " + f.message).c_str());
    }

    // ---- pairs: A then B ----
    void pairRules_data()
    {
        QTest::addColumn<QString>("rule");
        QTest::addColumn<QString>("posA");
        QTest::addColumn<QString>("posB");
        QTest::addColumn<QString>("negA");
        QTest::addColumn<QString>("negB");
        QTest::addColumn<QString>("severity");
        auto row = [](const char* rule, const std::string& pa, const std::string& pb, const std::string& na, const std::string& nb,
                      const char* sev) {
            QTest::newRow((std::string(rule) + " " + fs::path(pb).filename().string()).c_str())
                << rule << QString::fromStdString(pa) << QString::fromStdString(pb) << QString::fromStdString(na)
                << QString::fromStdString(nb) << sev;
        };
        const std::string good = rcase("good.pt"), later = rcase("later.pt");
        const std::string d200 = sample("ddp4-mlp/checkpoint-0000200"), d300 = sample("ddp4-mlp/checkpoint-0000300");
        auto broken = [](const char* fault) { return sample(std::string("broken/") + fault + "/checkpoint-0000300"); };
        row("model.keys-differ", good, rcase("renamed_layer.pt"), good, later, "error");
        row("model.prefix-differs", good, rcase("module_prefix.pt"), good, later, "warning");
        row("model.shape-changed", good, rcase("wider.pt"), good, later, "error");
        row("model.dtype-changed", good, rcase("half_model.pt"), good, later, "warning");
        row("optimizer.reset", d200, broken("optimizer-not-restored"), d200, d300, "error");
        row("optimizer.step-delta", good, rcase("later_lost_steps.pt"), d200, d300, "warning");
        row("optimizer.moments-frozen", good, rcase("later_frozen.pt"), good, later, "error");
        row("scheduler.step-delta", d200, broken("scheduler-stepped-twice"), d200, d300, "error");
        row("scaler.unreachable", d200, broken("scaler-reset"), d200, d300, "error");
        row("rng.unchanged", sample("tiny-mlp/checkpoint-0000100"), sample("tiny-mlp/checkpoint-0000150"), d200, d300, "info");
        row("rng.changed-same-step", good, rcase("rng_other.pt"), good, rcase("good_copy.pt"), "error");
        row("rng.ranks-collapsed", d200, broken("rng-not-restored"), d200, d300, "error");
        row("data.cursor-delta", d200, broken("data-cursor-wrong"), d200, d300, "error");
        row("data.sampler-changed", good, rcase("later_reseeded.pt"), good, later, "error");
        row("progress.step-order", d300, d200, d200, d300, "warning");
        row("environment.changed", good, rcase("env_later.pt"), good, later, "warning");
    }
    void pairRules()
    {
        QFETCH(QString, rule);
        QFETCH(QString, posA);
        QFETCH(QString, posB);
        QFETCH(QString, negA);
        QFETCH(QString, negB);
        QFETCH(QString, severity);
        testedRules().insert(rule.toStdString());
        const auto pos = checkTwo(posA.toStdString(), posB.toStdString());
        const Finding* f = find(pos, rule.toStdString());
        QVERIFY2(f, listRules(pos).constData());
        QCOMPARE(QString(severityName(f->severity)), severity);
        if (f->severity == Severity::Warning) // a warning names the convention it rests on
            QVERIFY2(!f->assumes.empty(), (f->rule + " has no assumes").c_str());
        QVERIFY2(!f->evidence.empty(), "every finding shows its evidence");
        QCOMPARE(f->checkpoints, (std::vector<std::string>{posA.toStdString(), posB.toStdString()}));
        const auto neg = checkTwo(negA.toStdString(), negB.toStdString());
        QVERIFY2(!find(neg, rule.toStdString()), listRules(neg).constData());
    }

    // ---- rules needing a changed copy of a sample run ----
    void rngRepeated()
    {
        testedRules().insert("rng.repeated");
        QTemporaryDir tmp;
        const std::string b = copyOf(tmp, sample("ddp4-mlp/checkpoint-0000300"), "checkpoint-0000300");
        // rank 0 of B restored from rank 1's file of A: a stream another rank already drew
        fs::copy_file(sample("ddp4-mlp/checkpoint-0000200/rng-rank-1.pt"), b + "/rng-rank-0.pt", fs::copy_options::overwrite_existing);
        const auto pos = checkTwo(sample("ddp4-mlp/checkpoint-0000200"), b);
        const Finding* f = find(pos, "rng.repeated");
        QVERIFY2(f, listRules(pos).constData());
        QCOMPARE(f->severity, Severity::Error);
        QVERIFY(f->message.find("rank 1") != std::string::npos);
        QVERIFY(!find(checkTwo(sample("ddp4-mlp/checkpoint-0000200"), sample("ddp4-mlp/checkpoint-0000300")), "rng.repeated"));
    }

    void dataRanksDisagree()
    {
        testedRules().insert("data.ranks-disagree");
        QTemporaryDir tmp;
        const std::string c = copyOf(tmp, sample("ddp4-mlp/checkpoint-0000300"), "checkpoint-0000300");
        fs::copy_file(sample("ddp4-mlp/checkpoint-0000200/rng-rank-1.pt"), c + "/rng-rank-1.pt", fs::copy_options::overwrite_existing);
        const auto pos = checkOne(c);
        const Finding* f = find(pos, "data.ranks-disagree");
        QVERIFY2(f, listRules(pos).constData());
        QCOMPARE(f->component, Component::Data);
        bool rank1 = false;
        for (const auto& e : f->evidence)
            rank1 = rank1 || (e.where.find("rng-rank-1.pt: sampler/") != std::string::npos && e.value == "8");
        QVERIFY2(rank1, "the evidence names rank 1's file and its stale position");
        QVERIFY(!find(checkOne(sample("ddp4-mlp/checkpoint-0000300")), "data.ranks-disagree"));
    }

    void progressCountersDisagree()
    {
        testedRules().insert("progress.counters-disagree");
        QTemporaryDir tmp;
        const std::string c = copyOf(tmp, sample("tiny-mlp/checkpoint-0000150"), "checkpoint-0000175");
        const auto pos = checkOne(c);
        const Finding* f = find(pos, "progress.counters-disagree");
        QVERIFY2(f, listRules(pos).constData());
        QVERIFY(f->message.find("175") != std::string::npos);
        QVERIFY(!find(checkOne(sample("tiny-mlp/checkpoint-0000150")), "progress.counters-disagree"));
    }

    void runStepsOrderAndInterval()
    {
        testedRules().insert("run.steps-order");
        testedRules().insert("run.save-interval");
        QTemporaryDir tmp;
        // names say 100, 200, 300, 400; the recorded steps say 100, 300, 200, 50
        copyOf(tmp, sample("ddp4-mlp/checkpoint-0000100"), "run/checkpoint-0000100");
        copyOf(tmp, sample("ddp4-mlp/checkpoint-0000300"), "run/checkpoint-0000200");
        copyOf(tmp, sample("ddp4-mlp/checkpoint-0000200"), "run/checkpoint-0000300");
        copyOf(tmp, sample("tiny-mlp/checkpoint-0000050"), "run/checkpoint-0000400");
        const auto pos = checkRunDir(tmp.path().toStdString() + "/run", false);
        QVERIFY2(find(pos, "run.steps-order"), listRules(pos).constData());
        QVERIFY2(find(pos, "run.save-interval"), listRules(pos).constData());
        const auto neg = checkRunDir(sample("ddp4-mlp"));
        QVERIFY(!find(neg, "run.steps-order"));
        QVERIFY(!find(neg, "run.save-interval"));
    }

    // A rank's generators back in the state of an earlier save after moving in between: the resume
    // re-seeded (the story runs in tst_story_runs reproduce the training loops that do it).
    void rngRestarted()
    {
        testedRules().insert("rng.restarted");
        QTemporaryDir tmp;
        copyOf(tmp, sample("ddp4-mlp/checkpoint-0000100"), "run/checkpoint-0000100");
        copyOf(tmp, sample("ddp4-mlp/checkpoint-0000200"), "run/checkpoint-0000200");
        const std::string c = copyOf(tmp, sample("ddp4-mlp/checkpoint-0000300"), "run/checkpoint-0000300");
        fs::copy_file(sample("ddp4-mlp/checkpoint-0000100/rng-rank-2.pt"), c + "/rng-rank-2.pt", fs::copy_options::overwrite_existing);
        const auto pos = checkRunDir(tmp.path().toStdString() + "/run", false);
        const Finding* f = find(pos, "rng.restarted");
        QVERIFY2(f, listRules(pos).constData());
        QCOMPARE(f->severity, Severity::Warning);
        QVERIFY(f->assumes.find("re-seed") != std::string::npos);
        QCOMPARE(f->component, Component::Rng);
        QVERIFY2(f->message.find("rank 2 at step 300 is back in the state it had at step 100") != std::string::npos, f->message.c_str());
        QCOMPARE(f->checkpoints.size(), std::size_t(2));
        QVERIFY(!find(checkRunDir(sample("ddp4-mlp"), false), "rng.restarted"));

        // Not seen again, but gone back: checkpoint-0000300's rank 0 holds the state rank 0 had at step
        // 100 (210,113 words drawn since seed 1234), in a run that keeps only steps 200 (414,913) and 300.
        QTemporaryDir back;
        copyOf(back, sample("ddp4-mlp/checkpoint-0000200"), "run/checkpoint-0000200");
        const std::string c3 = copyOf(back, sample("ddp4-mlp/checkpoint-0000300"), "run/checkpoint-0000300");
        fs::copy_file(sample("ddp4-mlp/checkpoint-0000100/rng-rank-0.pt"), c3 + "/rng-rank-0.pt", fs::copy_options::overwrite_existing);
        const auto wentBack = checkRunDir(back.path().toStdString() + "/run", false);
        const Finding* g = find(wentBack, "rng.restarted");
        QVERIFY2(g, listRules(wentBack).constData());
        QCOMPARE(g->severity, Severity::Warning);
        QVERIFY2(g->message.find("has drawn 210113 words since its seed at step 300, fewer than the 414913 it had drawn at step 200")
                     != std::string::npos, g->message.c_str());
        QCOMPARE(g->evidence.size(), std::size_t(2));
    }

    // Lightning 2.1.4 itself resumed with accumulate_grad_batches 2 instead of 1 (the real-library run):
    // the batches per optimizer step between saves with no restore between them change from 1 to 2. A
    // healthy mid-epoch resume (its restore pair skipped) and a run with one accumulation are quiet.
    void accumulationChanged()
    {
        testedRules().insert("data.accumulation-changed");
        const std::string runs = std::string(CKPT_SOURCE_DIR) + "/tests/fixtures/real_libraries/runs/lightning/";
        const auto pos = checkRunDir(runs + "accumulation-changed", false);
        const Finding* f = find(pos, "data.accumulation-changed");
        QVERIFY2(f, listRules(pos).constData());
        QCOMPARE(f->severity, Severity::Warning);
        QCOMPARE(f->component, Component::Data);
        QVERIFY2(f->message.find("changed: 1 from") != std::string::npos && f->message.find("then 2 (8 batches for 4 steps)") != std::string::npos,
                 f->message.c_str());
        QVERIFY(f->assumes.find("accumulate_grad_batches") != std::string::npos);
        QVERIFY(!find(checkRunDir(runs + "clean-resume", false), "data.accumulation-changed"));
        QVERIFY(!find(checkRunDir(runs + "clean-by-epoch", false), "data.accumulation-changed"));
    }

    // Lightning 2.1.4 itself: the resumed module declares its two same-shape layers in the other order;
    // the weights load by name, the optimizer by position, so from step 12 each layer trains with the
    // other's moments. The run before the resume, and every healthy resume, are quiet.
    void paramOrderChanged()
    {
        testedRules().insert("optimizer.param-order-changed");
        const std::string runs = std::string(CKPT_SOURCE_DIR) + "/tests/fixtures/real_libraries/runs/lightning/";
        const auto pos = checkRunDir(runs + "param-order-changed", false);
        const Finding* f = find(pos, "optimizer.param-order-changed");
        QVERIFY2(f, listRules(pos).constData());
        QCOMPARE(f->severity, Severity::Warning);
        QCOMPARE(f->component, Component::Optimizer);
        QVERIFY2(f->message.find("net.second.weight <- net.first.weight") != std::string::npos, f->message.c_str());
        QVERIFY(f->checkpoints[1].find("step=18") != std::string::npos);
        for (const char* clean : {"clean-resume", "clean-by-step", "weights-only-resume"})
            QVERIFY2(!find(checkRunDir(runs + clean, false), "optimizer.param-order-changed"), clean);
    }

    // transformers 4.34 itself: a second Trainer built from checkpoint-12's weights without
    // resume_from_checkpoint rewrote checkpoint-4 beside the first run's checkpoint-8 and -12; their
    // log_history disagree at the steps both logged. Healthy resumes, from the latest or from an older
    // checkpoint replayed exactly, continue the log and are quiet.
    void lineageDiverges()
    {
        testedRules().insert("run.lineage-diverges");
        const std::string runs = std::string(CKPT_SOURCE_DIR) + "/tests/fixtures/real_libraries/runs/transformers/";
        const auto pos = checkRunDir(runs + "weights-only", false);
        const Finding* f = find(pos, "run.lineage-diverges");
        QVERIFY2(f, listRules(pos).constData());
        QCOMPARE(f->severity, Severity::Error);
        QCOMPARE(f->component, Component::Progress);
        QCOMPARE(f->checkpoints.size(), std::size_t(2));
        QVERIFY2(f->checkpoints[0].ends_with("checkpoint-4") && f->checkpoints[1].ends_with("checkpoint-8"), f->message.c_str());
        QCOMPARE(f->evidence.size(), std::size_t(4)); // the two steps' log entries, then each side's writer
        QVERIFY(f->evidence[0].value != f->evidence[1].value);
        QCOMPARE(q(f->evidence[2].value), QByteArray("transformers 4.34.0.dev0"));
        for (const char* clean : {"clean-resume", "older-checkpoint", "clean-rotation"})
            QVERIFY2(!find(checkRunDir(runs + clean, false), "run.lineage-diverges"), clean);
    }

    // No scheduler state saved and the optimizer's lr fell, then rose: a schedule rebuilt at a resume.
    // The same checkpoints with their scheduler state are judged by the scheduler rules instead.
    void lrRoseWithoutScheduler()
    {
        testedRules().insert("scheduler.lr-rose");
        const auto pos = checkRunDir(std::string(CKPT_TESTDATA_DIR) + "/story_runs/scheduler-rebuilt", false);
        const Finding* f = find(pos, "scheduler.lr-rose");
        QVERIFY2(f, listRules(pos).constData());
        QCOMPARE(f->severity, Severity::Warning);
        QCOMPARE(f->component, Component::Scheduler);
        QVERIFY(f->assumes.find("warm restarts") != std::string::npos);
        QCOMPARE(f->checkpoints.size(), std::size_t(2));
        QVERIFY2(f->checkpoints[1].find("checkpoint-0000030") != std::string::npos, f->checkpoints[1].c_str());
        // a warm-up's rise before any fall, and a decay alone, are not one
        QVERIFY(!find(checkRunDir(sample("ddp4-mlp"), false), "scheduler.lr-rose"));
        QVERIFY(!find(checkRunDir(std::string(CKPT_TESTDATA_DIR) + "/story_runs/loss-scaler-counters", false), "scheduler.lr-rose"));
    }

    // torchtitan's per-dp-rank data loader entries: 4 at step 10, 2 after a resume at dp 2.
    void dpRanksChanged()
    {
        testedRules().insert("data.dp-ranks-changed");
        const std::string story = std::string(CKPT_TESTDATA_DIR) + "/story_runs/dp-rank-dropped/";
        const auto pos = checkTwo(story + "step-10", story + "step-20");
        const Finding* f = find(pos, "data.dp-ranks-changed");
        QVERIFY2(f, listRules(pos).constData());
        QCOMPARE(f->severity, Severity::Warning);
        QVERIFY(!f->assumes.empty());
        const std::string clean = std::string(CKPT_TESTDATA_DIR) + "/convention_runs/torchtitan-hf-export/";
        QVERIFY(!find(checkTwo(clean + "step-10", clean + "step-20"), "data.dp-ranks-changed"));
    }

    void runLatest()
    {
        testedRules().insert("run.latest");
        const auto pos = checkRunDir(sample("broken/no-complete-marker"), false); // without the audit
        const Finding* f = find(pos, "run.latest");
        QVERIFY2(f, listRules(pos).constData());
        QCOMPARE(f->severity, Severity::Error);
        // with the audit, its own latest-incomplete finding is reported instead of a duplicate
        const auto audited = checkRunDir(sample("broken/no-complete-marker"));
        QVERIFY(find(audited, "integrity.latest-incomplete"));
        QVERIFY(!find(audited, "run.latest"));
        QVERIFY(!find(checkRunDir(sample("ddp4-mlp"), false), "run.latest"));
    }

    void runBestMissing()
    {
        testedRules().insert("run.best-missing");
        QTemporaryDir tmp;
        const std::string run = copyOf(tmp, sample("hf-trainer"), "hf-trainer");
        for (const char* c : {"checkpoint-20", "checkpoint-40", "checkpoint-60"}) {
            const std::string path = run + "/" + c + "/trainer_state.json";
            auto doc = readJson(path);
            doc["best_model_checkpoint"] = "hf-trainer/checkpoint-10";
            std::ofstream(path) << doc.dump(2);
        }
        const auto pos = checkRunDir(run);
        QVERIFY2(find(pos, "run.best-missing"), listRules(pos).constData());
        QVERIFY(!find(checkRunDir(sample("hf-trainer")), "run.best-missing"));
    }

    void schedulerLrLogDeparts()
    {
        testedRules().insert("scheduler.lr-log-departs");
        const CheckReport pos = checkPaths({sample("broken/scheduler-stepped-twice")});
        const Finding* f = find(pos.findings, "scheduler.lr-log-departs");
        QVERIFY2(f, listRules(pos.findings).constData());
        QVERIFY(f->message.find("step 202") != std::string::npos);
        bool marked = false;
        for (const auto& d : pos.discontinuities)
            marked = marked || (d.rule == "scheduler.lr-log-departs" && d.step == 202 && d.series == "scheduler.lr");
        QVERIFY2(marked, "the run's LR series is marked where the log departs");
        QVERIFY(!find(checkRunDir(sample("ddp4-mlp")), "scheduler.lr-log-departs"));
        QVERIFY(!find(checkRunDir(sample("hf-trainer")), "scheduler.lr-log-departs"));
    }

    // ---- acceptance over the sample runs ----
    void brokenRunsCaught_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::addColumn<QString>("component");
        QTest::addColumn<QString>("rule");
        QTest::newRow("optimizer") << "optimizer-not-restored" << "optimizer" << "optimizer.reset";
        QTest::newRow("scheduler") << "scheduler-stepped-twice" << "scheduler" << "scheduler.step-delta";
        QTest::newRow("scaler") << "scaler-reset" << "scaler" << "scaler.unreachable";
        QTest::newRow("rng") << "rng-not-restored" << "rng" << "rng.ranks-collapsed";
        QTest::newRow("data") << "data-cursor-wrong" << "data" << "data.cursor-delta";
        QTest::newRow("missing rank rng") << "missing-rank-rng" << "rng" << "integrity.missing-file";
        QTest::newRow("hash") << "hash-mismatch" << "integrity" << "integrity.hash-mismatch";
        QTest::newRow("complete") << "no-complete-marker" << "integrity" << "integrity.no-complete-marker";
    }
    void brokenRunsCaught()
    {
        QFETCH(QString, fault);
        QFETCH(QString, component);
        QFETCH(QString, rule);
        const CheckReport r = checkPaths({sample("broken/" + fault.toStdString())});
        QVERIFY(r.hasProblems());
        const Finding* f = find(r.findings, rule.toStdString());
        QVERIFY2(f, listRules(r.findings).constData());
        QCOMPARE(QString(componentName(f->component)), component);
        QVERIFY(f->severity == Severity::Error);
        // the most severe finding concerns the faulty checkpoint
        QVERIFY(r.findings.front().severity == Severity::Error);
        bool about300 = false;
        for (const auto& c : f->checkpoints)
            about300 = about300 || c.ends_with("checkpoint-0000300");
        QVERIFY(about300);
        // and nothing is said about the good checkpoint alone
        for (const auto& other : r.findings) {
            if (other.checkpoints.size() == 1 && other.checkpoints[0].ends_with("checkpoint-0000200"))
                QVERIFY2(other.severity == Severity::Info, q(other.rule).constData());
        }
    }

    void cleanRunsSilent_data()
    {
        QTest::addColumn<QString>("run");
        for (const char* run : {"tiny-mlp", "ddp4-mlp", "hf-trainer", "lightning", "accelerate", "dcp", "dcp-no-collectives", "deepspeed"})
            QTest::newRow(run) << run;
        QTest::newRow("ddp4 checkpoint") << "ddp4-mlp/checkpoint-0000200";
        QTest::newRow("lightning file") << "lightning/checkpoints/epoch=0-step=25.ckpt";
    }
    void cleanRunsSilent()
    {
        QFETCH(QString, run);
        const CheckReport r = checkPaths({sample(run.toStdString())});
        QVERIFY2(!r.hasProblems(), listRules(r.findings).constData());
        QVERIFY(!r.checkpoints.empty());
    }

    void ddpSkippedStepsExplainedByScaler()
    {
        const auto found = checkOne(sample("ddp4-mlp/checkpoint-0000300"));
        const Finding* f = find(found, "scaler.skipped-steps");
        QVERIFY(f);
        QCOMPARE(f->severity, Severity::Info);
        QVERIFY(f->message.find("298") != std::string::npos && f->message.find("2 behind") != std::string::npos);
        QVERIFY(f->message.find("0.5^2") != std::string::npos);
        std::set<std::string> what;
        for (const auto& e : f->evidence) {
            what.insert(e.what);
            QVERIFY2(e.where.find("checkpoint-0000300/") != std::string::npos, e.where.c_str());
        }
        for (const char* needed : {"optimizer step", "global step", "scale", "growth_interval"})
            QVERIFY2(what.contains(needed), needed);
        QVERIFY(!find(found, "optimizer.step-vs-global-step"));
    }

    void deepSpeedSkippedStepsCounted()
    {
        // DeepSpeed's loss scaler has hysteresis; the loop's own skipped_steps explains the gap
        const auto found = checkOne(sample("deepspeed/global_step40"));
        const Finding* f = find(found, "scaler.skipped-steps");
        QVERIFY2(f, listRules(found).constData());
        bool counted = false;
        for (const auto& e : f->evidence)
            counted = counted || (e.what == "skipped_steps" && e.value == "2");
        QVERIFY(counted);
        QVERIFY(!find(found, "optimizer.step-vs-global-step"));
    }

    void evidenceHasProvenance()
    {
        const auto found = checkOne(sample("broken/scheduler-stepped-twice/checkpoint-0000300"));
        const Finding* f = find(found, "scheduler.position");
        QVERIFY(f);
        bool lastEpoch = false;
        for (const auto& e : f->evidence)
            lastEpoch = lastEpoch || (e.what == "last_epoch" && e.value == "400" && e.where.ends_with("optimizer.pt: scheduler/last_epoch"));
        QVERIFY(lastEpoch);
        QVERIFY(f->hint.find("§2.3") != std::string::npos);
        QVERIFY(f->hint.find("Next (in the recovery guide's order for a loss jump after a resume, §10.1)") != std::string::npos);
    }

    void runSeries()
    {
        const CheckReport r = checkPaths({sample("broken/optimizer-not-restored")});
        QCOMPARE(r.kind, std::string("run"));
        const auto& steps = r.series.at("optimizer.step");
        QCOMPARE(steps.size(), std::size_t(2));
        QCOMPARE(steps[0].value, 198.0);
        QCOMPARE(steps[1].value, 100.0);
        QVERIFY(r.series.contains("optimizer.first_moment_norm"));
        QVERIFY(r.series.contains("scaler.scale"));
        QVERIFY(r.series.contains("data.cursor"));
        bool marked = false;
        for (const auto& d : r.discontinuities)
            marked = marked || (d.series == "optimizer.step" && d.step == 300);
        QVERIFY(marked);
    }

    void progressAndCancel()
    {
        CheckOptions options;
        std::vector<CheckProgress> seen;
        options.progress = [&](const CheckProgress& p) {
            seen.push_back(p);
            return true;
        };
        const CheckReport full = checkPaths({sample("ddp4-mlp")}, options);
        QVERIFY(!full.cancelled);
        QCOMPARE(seen.size(), std::size_t(3 + 3 + 2 + 1)); // read, audit, check, compare
        QCOMPARE(seen.back().total, seen.size());
        options.progress = [](const CheckProgress& p) { return p.done < 4; };
        const CheckReport partial = checkPaths({sample("broken/optimizer-not-restored")}, options);
        QVERIFY(partial.cancelled);
        QVERIFY(!find(partial.findings, "optimizer.reset")); // the pair was never compared
    }

    void unreadableInputThrows()
    {
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, checkPaths({"/nonexistent/checkpoint.pt"}));
        QTemporaryDir tmp;
        const std::string text = tmp.path().toStdString() + "/notes.pt";
        std::ofstream(text) << "not a checkpoint\n";
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, checkPaths({text}));
    }


    // ---- ckpt check: the command-line contract ----
    void cliJsonContract()
    {
        const CkptRun run = runCkpt({"check", "--json", q(sample("broken/scaler-reset")).constData()});
        QCOMPARE(run.code, 1);
        const auto doc = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(doc["kind"].get<std::string>(), std::string("run"));
        QVERIFY(doc["findings"].is_array());
        bool scaler = false;
        for (const auto& f : doc["findings"]) {
            for (const char* key : {"rule", "severity", "component", "message", "evidence", "checkpoints", "file", "hint"})
                QVERIFY2(f.contains(key), key);
            for (const auto& e : f["evidence"])
                QVERIFY(e.contains("what") && e.contains("value") && e.contains("where"));
            scaler = scaler || (f["rule"] == "scaler.unreachable" && f["component"] == "scaler" && f["severity"] == "error");
        }
        QVERIFY(scaler);
        QVERIFY(doc["series"].contains("scaler.scale"));
        QCOMPARE(doc["counts"]["error"].get<int>() > 0, true);
    }

    void cliExitCodes()
    {
        QCOMPARE(runCkpt({"check", q(sample("ddp4-mlp")).constData()}).code, 0);
        QCOMPARE(runCkpt({"check", q(sample("tiny-mlp/checkpoint-0000100/optimizer.pt")).constData()}).code, 0);
        QCOMPARE(runCkpt({"check", q(sample("broken/hash-mismatch/checkpoint-0000300")).constData()}).code, 1);
        // a pair: A before B
        QCOMPARE(runCkpt({"check", q(sample("ddp4-mlp/checkpoint-0000200")).constData(),
                          q(sample("broken/optimizer-not-restored/checkpoint-0000300")).constData()}).code, 1);
        const CkptRun missing = runCkpt({"check", "/nonexistent/run"});
        QCOMPARE(missing.code, 2);
        QVERIFY(missing.err.contains("/nonexistent/run"));
        QCOMPARE(runCkpt({"check"}).code, 2);
    }

    void manualListsEveryRule()
    {
        std::ifstream in(std::string(CKPT_SOURCE_DIR) + "/docs/rules.md");
        QVERIFY2(in, "docs/rules.md is missing");
        const std::string manual((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        for (const auto& r : ruleCatalogue())
            QVERIFY2(manual.find("| `" + std::string(r.id) + "` |") != std::string::npos, std::string(r.id).c_str());
        const std::string count = "`ckpt check --list-rules` (" + std::to_string(ruleCatalogue().size()) + " rules)";
        QVERIFY2(manual.find(count) != std::string::npos, ("docs/rules.md should say " + count).c_str());
    }

    // Last: every rule of the catalogue has a positive and a negative test above.
    void zzEveryRuleTested()
    {
        for (const auto& r : ruleCatalogue()) {
            const std::string id(r.id);
            if (id.starts_with("integrity.") && id != "integrity.file-unreadable" && id != "integrity.shared-storage")
                continue; // the manifest audit's rules: tst_manifest_audit and tst_manifest_audit_layouts test each one
            QVERIFY2(testedRules().contains(id), ("no test for " + id).c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestRules)
#include "tst_rules.moc"
