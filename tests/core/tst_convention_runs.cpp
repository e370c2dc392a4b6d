// SPDX-License-Identifier: MIT
// Issue 14, "clean runs quiet": healthy runs written in the conventions the frameworks' own save
// code follows (tests/fixtures/make_convention_runs.py, docs/conventions.md), each of which used to
// get false warnings or errors. Every one is checked as a user would, `ckpt check RUN --json`: no
// warning and no error. Then what each convention changed is asserted where the report shows it.
#include "test_support.h"

#include "ckpt/state/run_history.h"
#include "ckpt/state/training_state.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

using namespace ckpt;
using namespace testsupport;
using nlohmann::json;

namespace {

std::string run(const std::string& name) { return std::string(CKPT_TESTDATA_DIR) + "/convention_runs/" + name; }
std::string sample(const std::string& name) { return std::string(CKPT_SOURCE_DIR) + "/sample_runs/" + name; }

json check(const std::string& path)
{
    const CkptRun r = runCkpt({QStringLiteral("check"), QString::fromStdString(path), QStringLiteral("--json")});
    return json::parse(r.out.toStdString());
}

std::vector<json> withRule(const json& report, const std::string& rule)
{
    std::vector<json> out;
    for (const auto& f : report["findings"])
        if (f["rule"] == rule)
            out.push_back(f);
    return out;
}

} // namespace

class TestConventionRuns : public QObject {
    Q_OBJECT
private slots:
    void cleanRunsAreQuiet_data()
    {
        QTest::addColumn<QString>("path");
        for (const char* name : {"hf-fp16-custom-scale", "torch2.6-named-param-groups", "ddp-samples-cursor", "ddp-sampler-only-cursor", "accelerate-2proc-accum", "lightning-2.4-steps",
                                 "lightning-2.5-steps", "lightning-1.9-steps", "torchtitan-hf-export",
                                 "deepspeed-past-scale-window"})
            QTest::newRow(name) << QString::fromStdString(run(name));
        // DCP with a process group (one .metadata) and without (__0.metadata, __1.metadata).
        QTest::newRow("dcp-with-pg") << QString::fromStdString(sample("dcp"));
        QTest::newRow("dcp-no-pg") << QString::fromStdString(sample("dcp-no-collectives"));
    }
    void cleanRunsAreQuiet()
    {
        QFETCH(QString, path);
        const CkptRun r = runCkpt({QStringLiteral("check"), path, QStringLiteral("--json")});
        const json report = json::parse(r.out.toStdString());
        QVERIFY2(!report["checkpoints"].empty(), r.out.constData());
        std::string loud;
        for (const auto& f : report["findings"]) {
            if (f["severity"] != "info")
                loud += f["severity"].get<std::string>() + " " + f["rule"].get<std::string>() + ": " + f["message"].get<std::string>() + "\n";
        }
        QVERIFY2(loud.empty(), loud.c_str());
        QCOMPARE(r.code, 0);
    }

    // GradScaler(init_scale=4096), one overflow: the skipped update is info resting on the
    // default init_scale, and says so; trainer_state.json with bare Infinity is read.
    void hfCustomScaleAndInfinity()
    {
        const json report = check(run("hf-fp16-custom-scale"));
        QVERIFY(withRule(report, "scaler.state").empty());
        const auto gap = withRule(report, "optimizer.step-vs-global-step");
        QVERIFY(!gap.empty());
        for (const auto& f : gap) {
            QCOMPARE(f["severity"].get<std::string>(), std::string("info"));
            QVERIFY2(f["assumes"].get<std::string>().find("init_scale") != std::string::npos, f.dump().c_str());
        }
        const RunHistory h = readRunHistory(run("hf-fp16-custom-scale"));
        QCOMPARE(h.checkpoints.size(), std::size_t(2));
        QCOMPARE(h.checkpoints.back().step.value_or(-1), int64_t(12));
        QVERIFY(h.series.contains("grad_norm"));
        const auto& norms = h.series.at("grad_norm");
        QVERIFY2(std::any_of(norms.begin(), norms.end(), [](const auto& p) { return std::isinf(p.second); }),
                 "the overflow step's grad_norm Infinity is in the logged series");
        const TrainingState s = readTrainingState(run("hf-fp16-custom-scale/checkpoint-12"));
        // model.safetensors lists tensors sorted by name, so the model's parameter order (which the
        // groups follow) is not in the files: names go by shape, and say where they are ambiguous.
        QVERIFY(s.optimizer && s.optimizer->groups.size() == 2);
        QVERIFY2(s.optimizer->nameMapping.find("ambiguous") != std::string::npos, s.optimizer->nameMapping.c_str());
        QVERIFY(withRule(report, "optimizer.moment-shape").empty());
        QVERIFY(s.scaler && s.scaler->scale.value_or(0) == 2048.0); // 4096 halved by the overflow
    }

    // Accelerator.step resets at every dataloader end; checkpoints are ordered by save index.
    // torch >= 2.6 keeps each group's param_names: the moments are named from them, whatever order
    // the groups list their parameters in (here no builder convention would find it).
    void recordedParamNames()
    {
        const TrainingState s = readTrainingState(run("torch2.6-named-param-groups/checkpoint-8"));
        QVERIFY(s.optimizer);
        QCOMPARE(q(s.optimizer->nameMapping), QByteArray("by name (param_names recorded in the param groups)"));
        std::map<std::string, std::string> nameOf;
        for (const auto& ps : s.optimizer->paramState)
            nameOf[ps.index] = ps.name;
        const std::vector<std::string> expected{"norm.bias", "norm.weight", "head.bias", "head.weight", "embed.bias", "embed.weight"};
        for (std::size_t i = 0; i < expected.size(); ++i)
            QCOMPARE(q(nameOf[std::to_string(i)]), q(expected[i]));
        for (const auto& ps : s.optimizer->paramState) {
            const auto p = std::find_if(s.model->parameters.begin(), s.model->parameters.end(),
                                        [&](const ParameterEntry& e) { return e.name == ps.name; });
            QVERIFY(p != s.model->parameters.end());
            for (const auto& m : ps.moments)
                QCOMPARE(m.shape, p->shape);
        }
    }

    void frozenParametersNamedByWholeModules()
    {
        // 4 optimizer entries for 6 parameters (the embedding frozen, the Trainer's two groups): the
        // no-decay group's [12]-shaped entries fit embed.bias too; whole frozen modules decide.
        const TrainingState s = readTrainingState(run("frozen-embedding-trainer-groups/step-8.pt"));
        QVERIFY(s.optimizer);
        QVERIFY2(s.optimizer->nameMapping.find("2 model parameter(s) in no group (frozen)") != std::string::npos,
                 s.optimizer->nameMapping.c_str());
        QVERIFY(s.optimizer->nameMapping.find("names uncertain") != std::string::npos);
        std::map<std::string, std::string> nameOf;
        for (const auto& ps : s.optimizer->paramState)
            nameOf[ps.index] = ps.name;
        QCOMPARE(q(nameOf["0"]), QByteArray("head.weight"));
        QCOMPARE(q(nameOf["1"]), QByteArray("norm.weight"));
        QCOMPARE(q(nameOf["2"]), QByteArray("norm.bias"));
        QCOMPARE(q(nameOf["3"]), QByteArray("head.bias"));
        const auto check = runCkpt({"check", QString::fromStdString(run("frozen-embedding-trainer-groups")), "--json"});
        const nlohmann::json report = nlohmann::json::parse(check.out.toStdString());
        QCOMPARE(report["counts"]["error"].get<int>(), 0);
        QCOMPARE(report["counts"]["warning"].get<int>(), 0);
    }

    void accelerateStepIsNotAGlobalStep()
    {
        const RunHistory h = readRunHistory(run("accelerate-2proc-accum"));
        QCOMPARE(h.checkpoints.size(), std::size_t(3));
        std::vector<std::string> steps;
        for (std::size_t i = 0; i < h.checkpoints.size(); ++i) {
            QCOMPARE(h.checkpoints[i].saveIndex.value_or(-1), int64_t(i));
            QVERIFY(!h.checkpoints[i].step);
            const TrainingState s = readTrainingState(h.checkpoints[i].path);
            QVERIFY(!s.globalStep);
            steps.push_back(s.progressField("accelerator.step")->value);
        }
        QCOMPARE(steps, (std::vector<std::string>{"4", "3", "2"})); // 4 batches in, then reset by two epoch ends
        // The prepared scheduler stepped twice per update and counted _step_count on accumulation steps.
        const TrainingState last = readTrainingState(h.checkpoints.back().path);
        QVERIFY(last.scheduler && last.scheduler->schedule.stepCount != last.scheduler->schedule.lastEpoch + 1);
    }

    // Sampler positions counted in samples (8 per batch) beside batch_pos in batches.
    void samplesCountedCursor()
    {
        const TrainingState s = readTrainingState(run("ddp-samples-cursor/checkpoint-0000020"));
        QCOMPARE(s.rng->generators.size(), std::size_t(12)); // 4 ranks × python, numpy, torch
        const json report = check(run("ddp-samples-cursor"));
        for (const auto& f : report["findings"])
            QVERIFY2(f["component"] != "data", f.dump().c_str());
    }

    // A step checkpoint saved in on_train_batch_end: info before Lightning 2.5 (the resuming
    // version decides), nothing from 2.5 on.
    void lightningBatchEndByVersion()
    {
        for (const char* name : {"lightning-2.4-steps", "lightning-1.9-steps"}) {
            const auto found = withRule(check(run(name)), "progress.loop-counters");
            QVERIFY2(!found.empty(), name);
            for (const auto& f : found) {
                QCOMPARE(f["severity"].get<std::string>(), std::string("info"));
                QVERIFY2(f["message"].get<std::string>().find("on_train_batch_end") != std::string::npos, f.dump().c_str());
                QVERIFY2(f["assumes"].get<std::string>().find(name[10] == '2' ? "2.4" : "1.9") != std::string::npos, f.dump().c_str());
            }
        }
        QVERIFY(withRule(check(run("lightning-2.5-steps")), "progress.loop-counters").empty());
    }

    // torchtitan's last step: a model-only export in HF names, not a broken checkpoint.
    void torchtitanExport()
    {
        const RunHistory h = readRunHistory(run("torchtitan-hf-export"));
        QCOMPARE(h.checkpoints.size(), std::size_t(3));
        QCOMPARE(h.checkpoints[2].layout, Layout::ModelExport);
        QVERIFY(h.checkpoints[1].latest && !h.checkpoints[2].latest); // the resume point is step-20
        const json report = check(run("torchtitan-hf-export"));
        QVERIFY(withRule(report, "model.keys-differ").empty());
        const auto exportNote = std::find_if(report["findings"].begin(), report["findings"].end(), [](const json& f) {
            return f["rule"] == "integrity.no-manifest" && f["message"].get<std::string>().find("model-only export") != std::string::npos;
        });
        QVERIFY(exportNote != report["findings"].end());

        // Folders of weights without a step in their names (examples, save_pretrained copies side by
        // side, as in the corpus' candle examples) are not one run's checkpoints to compare.
        namespace fs = std::filesystem;
        QTemporaryDir tmp;
        for (const char* name : {"encoder", "voices"}) {
            fs::create_directories(tmp.path().toStdString() + "/" + name);
            fs::copy_file(run("torchtitan-hf-export/step-30/model.safetensors"), tmp.path().toStdString() + "/" + name + "/model.safetensors");
        }
        QVERIFY(readRunHistory(tmp.path().toStdString()).checkpoints.empty());
    }
};

QTEST_GUILESS_MAIN(TestConventionRuns)
#include "tst_convention_runs.moc"
