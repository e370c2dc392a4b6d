// SPDX-License-Identifier: MIT
// Issue 15: NVIDIA NeMo's checkpoints as NeMo's own save code lays them out
// (tests/fixtures/make_nemo_runs.py, docs/layouts.md §5): NeMo 1.x Lightning files, their
// tensor-parallel per-rank copies, Megatron-core distributed folders, NeMo 2.0 folders, and .nemo
// archives plain, gzip-compressed, per-rank and distributed. Each read with its steps, marks, merged
// tensors and counters; clean runs quiet.
#include "test_support.h"

#include "ckpt/state/run_discovery.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>

using namespace testsupport;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string run(const std::string& name) { return std::string(CKPT_TESTDATA_DIR) + "/nemo_runs/" + name; }
QString qrun(const std::string& name) { return QString::fromStdString(run(name)); }

const std::string kNemo1 = "nemo1-gpt/nemo_experiments/megatron_gpt/checkpoints/";
const std::string kNemo2 = "nemo2-gpt/nemo_experiments/default/2024-09-10_20-26-40/checkpoints/";

const json* parameter(const json& state, const std::string& name)
{
    for (const auto& p : state["model"]["parameters"]) {
        if (p["name"] == name)
            return &p;
    }
    return nullptr;
}

// A field of `show --json`'s environment, data or progress: name -> value, as text.
std::string field(const json& part, const std::string& name)
{
    if (!part.is_object() || !part.contains(name))
        return {};
    const json& v = part[name];
    return v.is_string() ? v.get<std::string>() : v.dump();
}

void expectQuiet(const QString& path)
{
    const CkptRun check = runCkpt({QStringLiteral("check"), path});
    QVERIFY2(check.code == 0 && check.out.contains("0 error(s), 0 warning(s)"), check.out.constData());
}

} // namespace

class TestNemoRuns : public QObject {
    Q_OBJECT
private slots:
    // NeMo 1.x: the top-k files by step, the -last save folded into a latest mark, the best from the
    // checkpoint callback's best_model_path, and the .nemo after them (the model at the end of training).
    void nemo1Run()
    {
        const auto runs = ckpt::discoverRuns(run("nemo1-gpt"));
        QCOMPARE(runs.size(), std::size_t(1));
        const auto& cs = runs.front().history.checkpoints;
        QCOMPARE(cs.size(), std::size_t(4));
        const int64_t steps[] = {20, 30, 40};
        for (std::size_t i = 0; i < 3; ++i) {
            QCOMPARE(cs[i].layout, ckpt::Layout::Nemo);
            QCOMPARE(cs[i].step, std::optional<int64_t>(steps[i]));
            QVERIFY2(!fs::path(cs[i].path).filename().string().ends_with("-last.ckpt"), cs[i].path.c_str());
        }
        QVERIFY(cs[2].latest && cs[2].best);
        QCOMPARE(cs[3].layout, ckpt::Layout::NemoArchive);
        QVERIFY(!cs[3].latest);
        expectQuiet(qrun("nemo1-gpt"));
    }

    // The model config is the pickled omegaconf hyper_parameters.cfg; the samples consumed are in the
    // name only; NeMo's CosineAnnealing is recomputed (no lr-formula finding on a clean run).
    void nemo1State()
    {
        const json s = ckptJson({QStringLiteral("show"), qrun(kNemo1 + "megatron_gpt--val_loss=3.56-step=30-consumed_samples=240.0.ckpt"),
                                 QStringLiteral("--json")});
        QVERIFY(s["layout"] == json("nemo"));
        QCOMPARE(s["model"]["count"].get<int>(), 28);
        QCOMPARE(field(s["environment"], "config.num_hidden_layers"), std::string("2"));
        QCOMPARE(field(s["environment"], "config.hidden_size"), std::string("16"));
        QCOMPARE(field(s["environment"], "nemo.global_batch_size"), std::string("8"));
        QCOMPARE(field(s["data"], "consumed_samples"), std::string("240"));
        QCOMPARE(s["scheduler"]["kind"].get<std::string>(), std::string("NeMo CosineAnnealing"));
        QVERIFY2(s["scheduler"]["recomputable"] == json(true), s["scheduler"].dump().c_str());
    }

    // Tensor parallelism: each rank's .ckpt of one name in checkpoints/mp_rank_TT/, read as one
    // checkpoint with its shards joined (NeMo's legacy names: query_key_value rows, dense columns).
    void nemo1TensorParallel()
    {
        const auto runs = ckpt::discoverRuns(run("nemo1-gpt-tp2"));
        QCOMPARE(runs.size(), std::size_t(1));
        const auto& cs = runs.front().history.checkpoints;
        QCOMPARE(cs.size(), std::size_t(3)); // steps 10 and 20 (-last folded), the .nemo
        QCOMPARE(cs[0].step, std::optional<int64_t>(10));
        QCOMPARE(cs[1].step, std::optional<int64_t>(20));
        QVERIFY(cs[1].latest);
        const json s = ckptJson({QStringLiteral("show"), QString::fromStdString(cs[1].path), QStringLiteral("--json")});
        QCOMPARE(s["model"]["numel"].get<int64_t>(), int64_t(7872));
        const json* qkv = parameter(s, "model.language_model.encoder.layers.1.self_attention.query_key_value.weight");
        QVERIFY(qkv);
        QVERIFY2((*qkv)["shape"] == json({48, 16}), (*qkv)["shape"].dump().c_str());
        const json* dense = parameter(s, "model.language_model.encoder.layers.1.self_attention.dense.weight");
        QVERIFY(dense && (*dense)["shape"] == json({16, 16}));
        const json* embed = parameter(s, "model.language_model.embedding.word_embeddings.weight");
        QVERIFY(embed && (*embed)["shape"] == json({64, 16})); // padded to a multiple of 32 x TP
        expectQuiet(qrun("nemo1-gpt-tp2"));
    }

    // Megatron-core models: a torch_dist folder per checkpoint, common.pt holding Lightning's dict.
    void nemo1Distributed()
    {
        const auto runs = ckpt::discoverRuns(run("nemo1-gpt-dist"));
        const auto& cs = runs.front().history.checkpoints;
        QCOMPARE(cs.size(), std::size_t(3)); // 10, 20 (-last folded), the .nemo
        QCOMPARE(cs[1].step, std::optional<int64_t>(20));
        const json s = ckptJson({QStringLiteral("show"), QString::fromStdString(cs[1].path), QStringLiteral("--json")});
        QVERIFY(s["layout"] == json("nemo"));
        QCOMPARE(s["model"]["numel"].get<int64_t>(), int64_t(7744));
        QVERIFY(parameter(s, "model.decoder.layers.mlp.linear_fc1.weight")); // every layer stacked on the first axis
        QVERIFY2(s["optimizer"]["name_mapping"].get<std::string>().starts_with("by name"), s["optimizer"].dump().c_str());
        QCOMPARE(field(s["environment"], "config.num_hidden_layers"), std::string("2"));
        QCOMPARE(field(s["progress"], "global_step"), std::string("20"));
        expectQuiet(qrun("nemo1-gpt-dist"));
    }

    // NeMo 2.0: <name>/weights (torch_dist) + <name>/context; the step is in weights/common.pt, the model's
    // config in context/model.yaml; the fully_sharded_model_space moments are N-D flattened and read in
    // their parameters' shapes (MCoreMetadata's nd_reformulated_orig_global_shape).
    void nemo2Run()
    {
        const auto runs = ckpt::discoverRuns(run("nemo2-gpt"));
        const auto& cs = runs.front().history.checkpoints;
        QCOMPARE(cs.size(), std::size_t(2));
        QCOMPARE(cs[0].step, std::optional<int64_t>(20));
        QCOMPARE(cs[1].step, std::optional<int64_t>(30));
        QVERIFY(cs[1].latest);
        const json s = ckptJson({QStringLiteral("show"), QString::fromStdString(cs[0].path), QStringLiteral("--json")});
        QCOMPARE(field(s["environment"], "config.num_hidden_layers"), std::string("2"));
        QCOMPARE(field(s["data"], "consumed_samples"), std::string("160"));
        QCOMPARE(s["optimizer"]["param_groups"].size(), std::size_t(2));
        bool embedding = false;
        for (const auto& ps : s["optimizer"]["param_state"]) {
            if (ps["name"] != "module.embedding.word_embeddings.weight")
                continue;
            embedding = true;
            QVERIFY2(ps["moments"]["exp_avg"]["shape"] == json({56, 16}), ps.dump().c_str());
        }
        QVERIFY(embedding);
        // The flattened moments resolve in the parameter's shape: the statistics and the diff read them.
        const json d = ckptJson({QStringLiteral("diff"), QString::fromStdString(cs[0].path), QString::fromStdString(cs[1].path),
                                 QStringLiteral("--json")});
        int momentsCompared = 0;
        for (const auto& t : d["tensors"]) {
            if (t["key"].get<std::string>().ends_with("/exp_avg") && t["status"] != "only_a" && t["status"] != "only_b") {
                QVERIFY2(t["status"] == "changed" || t["status"] == "equal", t.dump().c_str());
                ++momentsCompared;
            }
        }
        QVERIFY(momentsCompared == 0 || momentsCompared == 16); // the final save is weights-only (no optimizer)
        expectQuiet(qrun("nemo2-gpt"));
    }

    // .nemo files: a tar read in place (or decompressed, before NeMo 1.7), each a model of its own.
    void nemoArchives_data()
    {
        QTest::addColumn<QString>("archive");
        QTest::addColumn<qint64>("numel");
        QTest::newRow("plain") << qrun("nemo-archive/megatron_gpt_tiny.nemo") << qint64(7744);
        QTest::newRow("gzip") << qrun("nemo-archive/megatron_gpt_tiny_gz.nemo") << qint64(7744);
        QTest::newRow("per rank") << qrun("nemo-archive/megatron_gpt_tiny_tp2.nemo") << qint64(7872);
        QTest::newRow("distributed") << qrun("nemo-archive/megatron_gpt_tiny_dist.nemo") << qint64(7744);
    }
    void nemoArchives()
    {
        QFETCH(QString, archive);
        QFETCH(qint64, numel);
        const json s = ckptJson({QStringLiteral("show"), archive, QStringLiteral("--json")});
        QVERIFY(s["layout"] == json("nemo_archive"));
        QCOMPARE(s["model"]["numel"].get<int64_t>(), int64_t(numel));
        QCOMPARE(field(s["environment"], "config.hidden_size"), std::string("16"));
        QVERIFY2(s["warnings"].empty(), s["warnings"].dump().c_str());
        const CkptRun tensors = runCkpt({QStringLiteral("tensors"), archive, QStringLiteral("--stats")});
        QVERIFY2(tensors.code == 0, tensors.err.constData());
        const CkptRun imports = runCkpt({QStringLiteral("imports"), archive});
        QVERIFY2(imports.code == 0 && imports.out.contains("0 dangerous"), imports.out.constData());
        QVERIFY2(imports.out.contains("model_weights"), "the pickles inside the archive's members were not scanned");
        const auto runs = ckpt::discoverRuns(run("nemo-archive"));
        QCOMPARE(runs.size(), std::size_t(4)); // separate models, never one run of them
    }

    // A .nemo that is not a tar at all is still recognised by its name; the reader says why nothing
    // of it is read, naming the file, and does not fail.
    void archiveThatIsNoTar()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("model.nemo")).toStdString();
        std::ofstream(path, std::ios::binary) << "this is not a tar archive, plain or gzip-compressed";
        const CkptRun r = runCkpt({QStringLiteral("show"), QString::fromStdString(path), QStringLiteral("--json")});
        const QByteArray said = r.out + r.err;
        QVERIFY2(said.contains("its members cannot be listed") && said.contains("model.nemo"), said.constData());
    }

    // A member named below the archive is a file of its own for every reader; a missing one names both.
    void archiveMemberPaths()
    {
        const CkptRun ok = runCkpt({QStringLiteral("tensors"), qrun("nemo-archive/megatron_gpt_tiny.nemo/model_weights.ckpt")});
        QVERIFY2(ok.code == 0 && ok.out.contains("word_embeddings"), ok.err.constData());
        const CkptRun missing = runCkpt({QStringLiteral("tensors"), qrun("nemo-archive/megatron_gpt_tiny.nemo/nothing.ckpt")});
        QVERIFY(missing.code != 0);
        QVERIFY2(missing.err.contains("has no member nothing.ckpt"), missing.err.constData());
    }

    // NeMo's -unfinished marker beside a checkpoint: the save did not finish.
    void unfinishedMarker()
    {
        QTemporaryDir tmp;
        const std::string dir = tmp.path().toStdString() + "/checkpoints";
        fs::copy(run(kNemo1), dir, fs::copy_options::recursive);
        std::ofstream(dir + "/megatron_gpt--val_loss=3.56-step=30-consumed_samples=240.0-unfinished").put('\n');
        const auto runs = ckpt::discoverRuns(dir);
        bool flagged = false;
        for (const auto& c : runs.front().history.checkpoints) {
            if (c.step == std::optional<int64_t>(30)) {
                QVERIFY(!c.complete);
                QVERIFY2(c.incompleteReason.find("-unfinished") != std::string::npos, c.incompleteReason.c_str());
                flagged = true;
            } else {
                QVERIFY(c.complete);
            }
        }
        QVERIFY(flagged);
        const CkptRun check = runCkpt({QStringLiteral("check"), QString::fromStdString(dir + "/megatron_gpt--val_loss=3.56-step=30-consumed_samples=240.0.ckpt")});
        QVERIFY2(check.out.contains("error    integrity.no-complete-marker  [integrity"), check.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestNemoRuns)
#include "tst_nemo_runs.moc"
