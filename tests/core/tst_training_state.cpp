// SPDX-License-Identifier: MIT
// The training-state model and run histories on the bundled sample runs, which
// sample_runs/make_sample_runs.py made by really training small models with Debian's PyTorch:
// the recovery guide's directory layout, a Hugging Face Trainer run and Lightning checkpoints.
#include "test_support.h"

#include "ckpt/formats/python_json.h"
#include "ckpt/report/state_json.h"
#include "ckpt/state/run_history.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace ckpt;
using namespace testsupport;
using nlohmann::json;

namespace {

std::string sample(const std::string& rel) { return std::string(CKPT_SOURCE_DIR) + "/sample_runs/" + rel; }

const StateField* find(const std::vector<StateField>& fields, const std::string& name)
{
    for (const auto& f : fields) {
        if (f.name == name)
            return &f;
    }
    return nullptr;
}

} // namespace

class TestTrainingState : public QObject {
    Q_OBJECT
private slots:
    // Python's json.dumps writes NaN, Infinity and -Infinity bare (allow_nan=True), as the HF
    // Trainer does in trainer_state.json; the text is made by Python itself, not typed here.
    void pythonJsonTokens()
    {
        QProcess p;
        p.start(QStringLiteral(CKPT_PYTHON), {"-c", "import json; print(json.dumps({'best_metric': float('-inf'), "
                "'log_history': [{'grad_norm': float('inf'), 'loss': float('nan'), 'note': 'NaN Infinity \\\"q', "
                "'step': 4}]}, indent=2, sort_keys=True))"});
        QVERIFY(p.waitForFinished(60000) && p.exitCode() == 0);
        const std::string text = p.readAllStandardOutput().toStdString();
        QVERIFY2(text.find("-Infinity") != std::string::npos && text.find("NaN,") != std::string::npos, text.c_str());
        QVERIFY_THROWS_EXCEPTION(nlohmann::json::parse_error, [[maybe_unused]] const auto strict = nlohmann::json::parse(text));
        const auto j = parsePythonJson(text);
        QCOMPARE(j["best_metric"].get<double>(), -std::numeric_limits<double>::infinity());
        const auto& log = j["log_history"][0];
        QCOMPARE(log["grad_norm"].get<double>(), std::numeric_limits<double>::infinity());
        QVERIFY(std::isnan(log["loss"].get<double>()));
        QCOMPARE(log["note"].get<std::string>(), std::string("NaN Infinity \"q")); // strings untouched
        QCOMPARE(log["step"].get<int>(), 4);

        // A Trainer checkpoint whose trainer_state.json holds them still opens, counters and all.
        QTemporaryDir dir;
        const std::string ckpt = dir.path().toStdString() + "/checkpoint-4";
        std::filesystem::copy(sample("hf-trainer/checkpoint-20"), ckpt);
        std::filesystem::permissions(ckpt, std::filesystem::perms::owner_all, std::filesystem::perm_options::add);
        std::filesystem::remove(ckpt + "/trainer_state.json");
        std::ofstream(ckpt + "/trainer_state.json") << text.substr(0, text.rfind('}')) << ", \"global_step\": 4}\n";
        const TrainingState s = readTrainingState(ckpt);
        for (const auto& w : s.warnings)
            QVERIFY2(w.find("trainer_state.json") == std::string::npos, w.c_str());
        QCOMPARE(s.globalStep.value_or(-1), int64_t(4));
    }

    void recoveryGuideDirectory()
    {
        const TrainingState s = readTrainingState(sample("tiny-mlp/checkpoint-0000150"));
        QCOMPARE(s.layout.layout, Layout::RecoveryGuideDir);
        QVERIFY(s.layout.complete);
        QCOMPARE(s.globalStep.value_or(-1), int64_t(150));
        QVERIFY(s.warnings.empty());

        QVERIFY(s.model);
        QCOMPARE(s.model->parameters.size(), std::size_t(4));
        QCOMPARE(QByteArray::fromStdString(s.model->parameters[0].name), QByteArray("0.weight"));
        QVERIFY(s.model->from.file.ends_with("model.pt"));

        QVERIFY(s.optimizer);
        QCOMPARE(QByteArray::fromStdString(s.optimizer->type), QByteArray("Adam/AdamW"));
        QCOMPARE(QByteArray::fromStdString(s.optimizer->nameMapping), QByteArray("by order"));
        QCOMPARE(s.optimizer->paramState.size(), std::size_t(4));
        for (const auto& ps : s.optimizer->paramState) {
            QVERIFY(!ps.name.empty());
            QCOMPARE(ps.step.value_or(-1), 150.0); // one optimizer step per global step
            QCOMPARE(ps.moments.size(), std::size_t(2));
        }
        QCOMPARE(QByteArray::fromStdString(s.optimizer->paramState[2].name), QByteArray("2.weight"));

        QVERIFY(s.scheduler);
        QCOMPARE(QByteArray::fromStdString(s.scheduler->schedule.kind), QByteArray("CosineAnnealingLR"));
        QCOMPARE(s.scheduler->schedule.lastEpoch, int64_t(150));
        QVERIFY(s.scaler && s.scaler->scale.value_or(0) == 65536.0);

        QVERIFY(s.rng);
        QCOMPARE(s.rng->generators.size(), std::size_t(3));
        for (const auto& g : s.rng->generators) {
            QCOMPARE(g.rank, 0);
            QVERIFY(g.state.valid);
            QCOMPARE(g.state.fingerprint.size(), std::size_t(16));
        }
        QCOMPARE(QByteArray::fromStdString(find(s.data, "batch_pos")->value), QByteArray("25"));
        QVERIFY(find(s.data, "batch_pos")->from.file.ends_with("optimizer.pt"));
        QCOMPARE(QByteArray::fromStdString(find(s.environment, "world_size")->value), QByteArray("1"));
        QVERIFY(find(s.environment, "world_size")->from.file.ends_with("manifest.json"));
    }

    void rngStatesAcrossSaves()
    {
        // The sample trains a dropout-free MLP on data drawn before training starts, so no
        // generator advances between saves: every fingerprint must stay the same (a real
        // resume that reseeds would change them; that is a pair rule's business).
        const TrainingState a = readTrainingState(sample("tiny-mlp/checkpoint-0000100"));
        const TrainingState b = readTrainingState(sample("tiny-mlp/checkpoint-0000150"));
        QVERIFY(a.rng && b.rng);
        QCOMPARE(a.rng->generators.size(), b.rng->generators.size());
        for (std::size_t i = 0; i < a.rng->generators.size(); ++i) {
            QCOMPARE(a.rng->generators[i].state.kind, b.rng->generators[i].state.kind);
            QCOMPARE(a.rng->generators[i].state.fingerprint, b.rng->generators[i].state.fingerprint);
        }
        // Different seeds give different fingerprints: the HF run was seeded with 1.
        const TrainingState hf = readTrainingState(sample("hf-trainer/checkpoint-20"));
        QVERIFY(hf.rng);
        QVERIFY(hf.rng->generators[0].state.fingerprint != a.rng->generators[0].state.fingerprint);
    }

    void huggingFaceTrainer()
    {
        const TrainingState s = readTrainingState(sample("hf-trainer/checkpoint-40"));
        QCOMPARE(s.layout.layout, Layout::HfTrainer);
        QCOMPARE(s.globalStep.value_or(-1), int64_t(40));
        QVERIFY(s.model && s.model->from.file.ends_with("pytorch_model.bin"));
        QVERIFY(s.optimizer && s.optimizer->from.file.ends_with("optimizer.pt"));
        QCOMPARE(s.optimizer->paramState.front().step.value_or(-1), 40.0);
        QVERIFY(s.scheduler && s.scheduler->schedule.kind == "LinearLR");
        QVERIFY(s.scheduler->from.file.ends_with("scheduler.pt"));
        QVERIFY(s.rng && s.rng->generators.size() == 3);
        QVERIFY(find(s.progress, "global_step")->from.file.ends_with("trainer_state.json"));
        QVERIFY(find(s.environment, "best_model_checkpoint"));
    }

    void lightningCheckpoint()
    {
        const TrainingState s = readTrainingState(sample("lightning/checkpoints/epoch=1-step=50.ckpt"));
        QCOMPARE(s.layout.layout, Layout::Lightning);
        QCOMPARE(s.globalStep.value_or(-1), int64_t(50));
        QVERIFY(s.model);
        QCOMPARE(QByteArray::fromStdString(s.model->parameters[0].name), QByteArray("model.0.weight"));
        QVERIFY(s.optimizer && s.optimizer->type == "SGD");
        QCOMPARE(QByteArray::fromStdString(s.optimizer->paramState[0].name), QByteArray("model.0.weight"));
        QVERIFY(s.scheduler && s.scheduler->schedule.kind == "StepLR");
        QCOMPARE(s.scheduler->from.key.size(), std::size_t(2)); // lr_schedulers / 0
        QCOMPARE(QByteArray::fromStdString(find(s.environment, "hyper_parameters.lr")->value), QByteArray("0.05"));
        const StateField* batches = find(s.data, "fit_loop/epoch_loop.state_dict/_batches_that_stepped");
        QVERIFY(batches);
        QCOMPARE(QByteArray::fromStdString(batches->value), QByteArray("50"));
        QVERIFY(find(s.progress, "fit_loop/epoch_progress/total/completed"));
    }

    void singleFileByStructure()
    {
        // A generated "full checkpoint" dict: the parts are found by key and structure.
        const TrainingState s = readTrainingState(checkpointsDir() + "/full_checkpoint.pt");
        QCOMPARE(s.layout.layout, Layout::RecoveryGuideFile);
        QCOMPARE(s.globalStep.value_or(-1), int64_t(1200));
        QVERIFY(s.model && s.optimizer && s.scheduler && s.rng);
        QCOMPARE(QByteArray::fromStdString(s.optimizer->nameMapping), QByteArray("by order, buffers skipped"));
        // A plain state_dict has a model and nothing else.
        const TrainingState sd = readTrainingState(checkpointsDir() + "/state_dict.pt");
        QCOMPARE(sd.layout.layout, Layout::StateDict);
        QVERIFY(sd.model && !sd.optimizer && !sd.scheduler);
    }

    void realDcpAndDeepSpeedFolders()
    {
        const std::string corpus = corpusDir();
        if (corpus.empty())
            QSKIP("../shared/corpus is not present");
        // A real 2-rank torch.distributed.checkpoint folder written by Lightning (torch 2.0).
        const TrainingState dcp = readTrainingState(corpus + "/Lightning-AI__pytorch-lightning@0f916ea4/dcp-2rank");
        QCOMPARE(dcp.layout.layout, Layout::Dcp);
        QVERIFY2(dcp.warnings.empty(), dcp.warnings.empty() ? "" : dcp.warnings.front().c_str());
        QVERIFY(dcp.model);
        QCOMPARE(dcp.model->parameters.size(), std::size_t(4));
        QCOMPARE(QByteArray::fromStdString(dcp.model->parameters[0].name), QByteArray("0.weight"));
        QCOMPARE(json(dcp.model->parameters[0].shape).dump(), std::string("[32,32]"));
        QVERIFY(dcp.optimizer && dcp.optimizer->type == "SGD");
        // A real DeepSpeed ZeRO folder: model states plus a flat optimizer partition.
        const TrainingState ds = readTrainingState(corpus + "/brynelee__deepspeedtrial/deepspeed_train_demo/checkpoints/global_step1875");
        QCOMPARE(ds.layout.layout, Layout::DeepSpeed);
        QCOMPARE(ds.globalStep.value_or(-1), int64_t(1875));
        QVERIFY(ds.model && ds.optimizer);
        QVERIFY(ds.optimizer->nameMapping.starts_with("by name (DeepSpeed param_slice_mappings"));
        QCOMPARE(q(ds.optimizer->paramState[0].name), QByteArray("seq.0.weight"));
        QCOMPARE(ds.optimizer->paramState[0].step.value_or(-1), 1875.0);
    }

    void shardedModelMerges()
    {
        // A Trainer folder whose model is a safetensors set sharded over two files.
        const std::string dir = std::string(CKPT_TESTDATA_DIR) + "/checkpoint-7";
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        std::filesystem::copy_file(checkpointsDir() + "/sharded.safetensors.index.json", dir + "/model.safetensors.index.json");
        for (const char* f : {"sharded-00001-of-00002.safetensors", "sharded-00002-of-00002.safetensors"})
            std::filesystem::copy_file(checkpointsDir() + "/" + f, dir + "/" + f); // the names the index maps to
        {
            std::ofstream(dir + "/trainer_state.json") << R"({"global_step": 7, "log_history": []})";
        }
        const TrainingState s = readTrainingState(dir);
        QCOMPARE(s.layout.layout, Layout::HfTrainer);
        QVERIFY2(s.warnings.empty(), s.warnings.empty() ? "" : s.warnings.front().c_str());
        QVERIFY(s.model);
        QCOMPARE(s.model->parameters.size(), std::size_t(6)); // all tensors of both shards, once
        QCOMPARE(s.globalStep.value_or(-1), int64_t(7));
        std::filesystem::remove_all(dir);
    }

    void runHistories()
    {
        const RunHistory tiny = readRunHistory(sample("tiny-mlp"));
        QCOMPARE(tiny.checkpoints.size(), std::size_t(3));
        QCOMPARE(tiny.checkpoints[0].step.value_or(-1), int64_t(50));
        QVERIFY(tiny.checkpoints[2].latest);
        QCOMPARE(QByteArray::fromStdString(tiny.latestFrom), QByteArray("latest file"));
        QCOMPARE(tiny.series.at("loss").size(), std::size_t(150));
        QCOMPARE(tiny.series.at("learning_rate").front().first, int64_t(1));

        const RunHistory hf = readRunHistory(sample("hf-trainer"));
        QCOMPARE(hf.checkpoints.size(), std::size_t(3));
        int best = 0;
        for (const auto& c : hf.checkpoints)
            best += c.best;
        QCOMPARE(best, 1);
        QVERIFY(hf.series.contains("eval_loss"));

        const RunHistory pl = readRunHistory(sample("lightning"));
        QCOMPARE(pl.checkpoints.size(), std::size_t(2));
        QCOMPARE(pl.checkpoints[1].step.value_or(-1), int64_t(50));
        QCOMPARE(pl.series.at("train_loss").size(), std::size_t(50));
    }

    void incompleteCheckpointIsMarked()
    {
        const std::string dir = std::string(CKPT_TESTDATA_DIR) + "/incomplete-run";
        std::filesystem::remove_all(dir);
        std::filesystem::copy(sample("tiny-mlp"), dir, std::filesystem::copy_options::recursive);
        std::filesystem::remove(dir + "/checkpoint-0000150/COMPLETE");
        std::filesystem::remove(dir + "/latest");
        const RunHistory h = readRunHistory(dir);
        QVERIFY(!h.checkpoints[2].complete);
        QVERIFY(h.checkpoints[1].latest); // newest complete one
        const TrainingState s = readTrainingState(dir + "/checkpoint-0000150");
        QVERIFY(!s.layout.complete);
        std::filesystem::remove_all(dir);
    }

    void cliContract()
    {
        QProcess p;
        p.start(QStringLiteral(CKPT_BIN), {QStringLiteral("show"), QString::fromStdString(sample("tiny-mlp/checkpoint-0000100")),
                                          QStringLiteral("--json")});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        const json j = json::parse(p.readAllStandardOutput().toStdString());
        for (const char* key : {"format", "model", "optimizer", "scheduler", "scaler", "rng", "data", "progress", "environment"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j["progress"]["global_step"].get<int>(), 100);
        QCOMPARE(q(j["optimizer"]["param_state"][0]["name"].get<std::string>()), QByteArray("0.weight"));

        p.start(QStringLiteral(CKPT_BIN), {QStringLiteral("run"), QString::fromStdString(sample("hf-trainer")), QStringLiteral("--json")});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        const json r = json::parse(p.readAllStandardOutput().toStdString());
        QCOMPARE(r["checkpoints"].size(), std::size_t(3));
        for (const char* key : {"path", "step", "complete", "latest", "best", "layout"})
            QVERIFY2(r["checkpoints"][0].contains(key), key);
        QVERIFY(r["series"]["loss"][0].is_array());

        p.start(QStringLiteral(CKPT_BIN), {QStringLiteral("show"), QStringLiteral("/nonexistent/run")});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 2);
    }
};

QTEST_GUILESS_MAIN(TestTrainingState)
#include "tst_training_state.moc"
