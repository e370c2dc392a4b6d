// SPDX-License-Identifier: MIT
// Issue 15, points 2-4: the layouts large-model teams use, in runs that follow the frameworks' own
// save code (tests/fixtures/make_layout_runs.py, docs/layouts.md): each read with the right steps,
// parts and merged tensors, clean runs quiet, and the stories their files reveal caught.
#include "test_support.h"

#include "ckpt/state/run_discovery.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <set>

using namespace testsupport;
using nlohmann::json;

namespace {

std::string run(const std::string& name) { return std::string(CKPT_TESTDATA_DIR) + "/layout_runs/" + name; }
QString qrun(const std::string& name) { return QString::fromStdString(run(name)); }

const json* parameter(const json& state, const std::string& name)
{
    for (const auto& p : state["model"]["parameters"]) {
        if (p["name"] == name)
            return &p;
    }
    return nullptr;
}

} // namespace

class TestLayoutRuns : public QObject {
    Q_OBJECT
private slots:
    // Megatron-LM legacy, TP 2 x PP 2: iter_NNNNNNN folders ordered by iteration, latest from the tracker.
    void megatronRun()
    {
        const auto runs = ckpt::discoverRuns(run("megatron-tp2-pp2"));
        QCOMPARE(runs.size(), std::size_t(1));
        const auto& cs = runs.front().history.checkpoints;
        QCOMPARE(cs.size(), std::size_t(3));
        for (std::size_t i = 0; i < cs.size(); ++i) {
            QCOMPARE(cs[i].layout, ckpt::Layout::Megatron);
            QCOMPARE(cs[i].step, std::optional<int64_t>(10 * static_cast<int64_t>(i + 1)));
        }
        QVERIFY(cs.back().latest);
        QCOMPARE(QString::fromStdString(runs.front().history.latestFrom), QStringLiteral("latest_checkpointed_iteration.txt"));
    }

    // One W from four files: layers renumbered from each stage's local index, tensor-parallel shards
    // joined along their split dimension; O keeps every rank's entries with their shard's shape.
    void megatronMergedState()
    {
        const json s = ckptJson({QStringLiteral("show"), qrun("megatron-tp2-pp2/iter_0000020"), QStringLiteral("--json")});
        QVERIFY(s["layout"] == json("megatron"));
        QVERIFY(s["progress"]["global_step"] == json(20) || s["global_step"] == json(20) || s.dump().find("\"iteration\"") != std::string::npos);
        // 4 layers x 12 tensors + word and position embeddings, final layernorm (2), output layer
        QCOMPARE(s["model"]["parameters"].size(), std::size_t(53));
        const struct { const char* name; std::vector<int64_t> shape; } expected[] = {
            {"embedding.word_embeddings.weight", {32, 8}},                 // vocab-parallel rows joined
            {"decoder.layers.3.self_attention.linear_proj.weight", {8, 8}}, // row-parallel: columns joined; stage 1's layer 1
            {"decoder.layers.2.mlp.linear_fc1.weight", {16, 8}},          // column-parallel: rows joined
            {"decoder.layers.0.self_attention.linear_proj.bias", {8}},    // replicated
            {"output_layer.weight", {32, 8}},
        };
        for (const auto& e : expected) {
            const json* p = parameter(s, e.name);
            QVERIFY2(p, e.name);
            QVERIFY2((*p)["shape"] == json(e.shape), (std::string(e.name) + " " + (*p)["shape"].dump()).c_str());
        }
        QVERIFY2(!parameter(s, "decoder.layers.4.self_attention.linear_proj.bias"), "layer indices past num_layers");
        // Megatron's scheduler recomputed from its state (num_steps in samples, warmup then cosine): the LR
        // it gives at its position is the one Megatron put in the optimizer's groups after the update.
        QVERIFY2(s["scheduler"]["recomputable"] == json(true), s["scheduler"].dump().c_str());
        QCOMPARE(s["scheduler"]["last_epoch"].get<int>(), 160);
        const double lr = s["scheduler"]["lr_at_last_epoch"][0].get<double>();
        const double groupLr = s["optimizer"]["param_groups"][0]["hyperparameters"]["lr"].get<double>();
        QVERIFY2(std::abs(lr - groupLr) <= 1e-12 * groupLr, (std::to_string(lr) + " vs " + std::to_string(groupLr)).c_str());
        std::size_t entries = 0;
        for (const auto& ps : s["optimizer"]["param_state"])
            entries += ps["name"].is_string();
        QVERIFY2(entries > 53, "every rank's optimizer entries, named");
    }

    // ckpt diff of two Megatron checkpoints compares every tensor-parallel shard, not the first one.
    void megatronDiffComparesEveryShard()
    {
        const json d = ckptJson({QStringLiteral("diff"), qrun("megatron-tp2-pp2/iter_0000010"), qrun("megatron-tp2-pp2/iter_0000020"),
                                 QStringLiteral("--json")});
        bool seen = false;
        for (const auto& t : d["tensors"]) {
            if (t["key"] != "model/embedding.word_embeddings.weight")
                continue;
            seen = true;
            QVERIFY(t["status"] == json("changed"));
            QVERIFY2(t["numel"] == json(32 * 8), t.dump().c_str()); // both vocab-parallel halves
        }
        QVERIFY(seen);
    }

    // The same training state saved three ways by Megatron-LM: plain TP 2 x PP 2, with virtual pipeline
    // stages (model0/model1 per file, each numbering its layers from 0), and with the distributed
    // optimizer (moments in distrib_optim.pt's flat buffers). Read back, W, the moments and the fp32
    // masters are the same tensors under the same names.
    void megatronVirtualStagesAndDistributedOptimizer_data()
    {
        QTest::addColumn<QString>("other");
        QTest::newRow("virtual pipeline") << qrun("megatron-vpp/iter_0000020");
        QTest::newRow("distributed optimizer") << qrun("megatron-distopt/iter_0000020");
    }
    void megatronVirtualStagesAndDistributedOptimizer()
    {
        QFETCH(QString, other);
        const json s = ckptJson({QStringLiteral("show"), other, QStringLiteral("--json")});
        QCOMPARE(s["model"]["parameters"].size(), std::size_t(53));
        QVERIFY(parameter(s, "decoder.layers.3.mlp.linear_fc1.weight"));
        QVERIFY2(!parameter(s, "decoder.layers.4.mlp.linear_fc1.weight"), "layer indices past num_layers");
        const json d = ckptJson({QStringLiteral("diff"), qrun("megatron-tp2-pp2/iter_0000020"), other, QStringLiteral("--json")});
        int moments = 0, masters = 0, model = 0;
        for (const auto& t : d["tensors"]) {
            const std::string key = t["key"];
            if (t["status"] == "only_a" || t["status"] == "only_b")
                continue; // _extra_state placement, Adam's per-parameter step beside the group's
            QVERIFY2(t["status"] == json("equal"), t.dump().c_str());
            moments += key.starts_with("optimizer/") && (key.ends_with("/exp_avg") || key.ends_with("/exp_avg_sq"));
            masters += key.starts_with("optimizer/") && key.ends_with("/master");
            model += key.starts_with("model/");
        }
        QCOMPARE(model, 53);
        QVERIFY2(moments >= 2 * 53 && masters >= 53, (std::to_string(moments) + " moments, " + std::to_string(masters) + " masters").c_str());
        const CkptRun clean = runCkpt({QStringLiteral("check"), other});
        QVERIFY2(clean.code == 0 && clean.out.contains("0 error(s), 0 warning(s)"), clean.out.constData());
    }

    // distrib_optim.pt's fp32 main parameters for a stage's last parameters tripled (a buffer of another
    // save): the module weights are no longer their rounding.
    void megatronDistributedMastersDiffer()
    {
        QTemporaryDir tmp;
        const std::string dir = tmp.path().toStdString() + "/iter_0000020";
        std::filesystem::copy(run("megatron-distopt/iter_0000020"), dir, std::filesystem::copy_options::recursive);
        QProcess py;
        py.start(QStringLiteral(CKPT_PYTHON), {QStringLiteral("-c"), QStringLiteral(
            "import sys, torch\n"
            "p = sys.argv[1] + '/mp_rank_01_001/distrib_optim.pt'\n"
            "d = torch.load(p)\n"
            "k = next(iter(d[0]))\n"
            "d[0][k]['param'][:200] *= 3\n"
            "torch.save(d, p)\n"), QString::fromStdString(dir)});
        QVERIFY(py.waitForFinished(60000) && py.exitCode() == 0);
        const json report = ckptJson({QStringLiteral("check"), QString::fromStdString(dir), QStringLiteral("--json")});
        bool found = false;
        for (const auto& f : report["findings"]) {
            if (f["rule"] != "optimizer.master-weights-differ")
                continue;
            found = true;
            QVERIFY(f["severity"] == json("error"));
            QVERIFY2(f["message"].get<std::string>().find("output_layer.weight") != std::string::npos, f["message"].dump().c_str());
        }
        QVERIFY2(found, report.dump().c_str());
    }

    // Expert parallelism with one pipeline stage: mp_rank_TT_EEE, the second number the expert rank
    // (the args say PP 1, EP 2). Local experts 0-1 of expert rank 1 are global experts 2-3; the dense
    // tensors every expert rank saves count once; the dense and expert optimizers are both mapped.
    void megatronExpertParallel()
    {
        const json s = ckptJson({QStringLiteral("show"), qrun("megatron-moe-ep2/iter_0000020"), QStringLiteral("--json")});
        QCOMPARE(s["model"]["parameters"].size(), std::size_t(57));
        for (int layer = 0; layer < 2; ++layer) {
            for (int e = 0; e < 4; ++e) {
                const std::string name = "decoder.layers." + std::to_string(layer) + ".mlp.experts.local_experts." + std::to_string(e) + ".linear_fc1.weight";
                const json* p = parameter(s, name);
                QVERIFY2(p, name.c_str());
                QVERIFY2((*p)["shape"] == json({16, 8}), (*p)["shape"].dump().c_str()); // expert TP 2: rows joined
            }
        }
        QVERIFY(parameter(s, "decoder.layers.1.mlp.router.weight"));
        QVERIFY2(s["optimizer"]["name_mapping"].get<std::string>().find("a dense and an expert optimizer") != std::string::npos,
                 s["optimizer"]["name_mapping"].dump().c_str());
        std::set<std::string> expertStates;
        for (const auto& ps : s["optimizer"]["param_state"]) {
            QVERIFY2(ps["name"].is_string() && !ps["name"].get<std::string>().empty(), ps.dump().c_str());
            if (ps["name"].get<std::string>().find(".experts.") != std::string::npos)
                expertStates.insert(ps["name"].get<std::string>());
        }
        QCOMPARE(expertStates.size(), std::size_t(2 * 4 * 4)); // 2 layers x 4 experts x 4 tensors
        const CkptRun clean = runCkpt({QStringLiteral("check"), qrun("megatron-moe-ep2")});
        QVERIFY2(clean.code == 0 && clean.out.contains("0 error(s), 0 warning(s)"), clean.out.constData());
    }

    // Megatron-core's distributed checkpoint (torch_dist, core 0.19: the common state a DCP item, no
    // common.pt): stacked layer keys, counters and scheduler from common_state, the scaler and param groups
    // from the distributed optimizer's objects, RNG per (pp, tp) shard, the dp_reshardable buckets kept
    // unnamed without a finding; without metadata.json (written last) the save is incomplete.
    void megatronTorchDist()
    {
        const auto runs = ckpt::discoverRuns(run("megatron-torch-dist"));
        const auto& cs = runs.front().history.checkpoints;
        QCOMPARE(cs.size(), std::size_t(2));
        QCOMPARE(cs[1].step, std::optional<int64_t>(30));
        QVERIFY(cs[1].latest);
        const json s = ckptJson({QStringLiteral("show"), qrun("megatron-torch-dist/iter_0000030"), QStringLiteral("--json")});
        QVERIFY(s["layout"] == json("megatron"));
        QCOMPARE(s["model"]["count"].get<int>(), 17);
        QCOMPARE(s["model"]["numel"].get<int64_t>(), int64_t(2992)); // the same parameters as megatron-tp2-pp2
        const json* qkv = parameter(s, "decoder.layers.self_attention.linear_qkv.weight");
        QVERIFY(qkv && (*qkv)["shape"] == json({4, 24, 8}));
        QVERIFY(s["progress"]["global_step"] == json(30));
        QCOMPARE(s["scheduler"]["last_epoch"].get<int>(), 240); // samples: 30 x 8
        QVERIFY2(s["scaler"]["growth_interval"] == json(1000), s["scaler"].dump().c_str());
        QCOMPARE(s["optimizer"]["param_groups"].size(), std::size_t(2));
        QVERIFY(s["optimizer"]["name_mapping"].get<std::string>().starts_with("none (Megatron's dp_reshardable"));
        std::set<int> rngRanks;
        for (const auto& g : s["rng"]["generators"])
            rngRanks.insert(g["rank"].get<int>());
        QCOMPARE(rngRanks, (std::set<int>{0, 1, 2, 3}));
        const CkptRun clean = runCkpt({QStringLiteral("check"), qrun("megatron-torch-dist")});
        QVERIFY2(clean.code == 0 && clean.out.contains("0 error(s), 0 warning(s)"), clean.out.constData());

        QTemporaryDir tmp;
        const std::string dir = tmp.path().toStdString() + "/iter_0000030";
        std::filesystem::copy(run("megatron-torch-dist/iter_0000030"), dir, std::filesystem::copy_options::recursive);
        std::filesystem::remove(dir + "/metadata.json");
        const json cut = ckptJson({QStringLiteral("show"), QString::fromStdString(dir), QStringLiteral("--json")});
        QVERIFY(cut["complete"] == json(false));
        QVERIFY2(cut["incomplete_reason"].get<std::string>().find("metadata.json") != std::string::npos, cut["incomplete_reason"].dump().c_str());
        const CkptRun check = runCkpt({QStringLiteral("check"), QString::fromStdString(dir)});
        QVERIFY2(check.code != 0 && check.out.contains("error    integrity.no-complete-marker  [integrity"), check.out.constData());
    }

    // One rank's file truncated: the unreadable file is the error, and the other ranks' shards are not
    // joined into a W that would look reshaped (no model.shape-changed against the save before).
    void megatronTruncatedRank()
    {
        QTemporaryDir tmp;
        const std::string dir = tmp.path().toStdString() + "/run";
        std::filesystem::copy(run("megatron-tp2-pp2"), dir, std::filesystem::copy_options::recursive);
        const std::string victim = dir + "/iter_0000030/mp_rank_01_001/model_optim_rng.pt";
        std::filesystem::resize_file(victim, 5000);
        const json report = ckptJson({QStringLiteral("check"), QString::fromStdString(dir), QStringLiteral("--json")});
        bool unreadable = false;
        for (const auto& f : report["findings"]) {
            QVERIFY2(f["rule"] != "model.shape-changed", f.dump().c_str());
            unreadable = unreadable || (f["rule"] == "integrity.file-unreadable" && f["severity"] == "error");
        }
        QVERIFY(unreadable);
    }

    // Clean Megatron runs are quiet; the LR scheduler stepped twice on resume is an error naming it.
    void megatronFindings()
    {
        const CkptRun clean = runCkpt({QStringLiteral("check"), qrun("megatron-tp2-pp2")});
        QVERIFY2(clean.code == 0, clean.out.constData());
        const json twice = ckptJson({QStringLiteral("check"), qrun("megatron-sched-twice"), QStringLiteral("--json")});
        bool found = false;
        for (const auto& f : twice["findings"]) {
            if (f["severity"] != "info")
                QVERIFY2(f["rule"] == "scheduler.position", f.dump().c_str());
            if (f["rule"] != "scheduler.position")
                continue;
            found = true;
            QVERIFY(f["severity"] == json("error"));
            QVERIFY(f["component"] == json("scheduler"));
            QVERIFY(f["checkpoints"][0].get<std::string>().ends_with("iter_0000030"));
            QVERIFY2(f["message"].get<std::string>().find("num_steps 400 samples but only 240 were consumed") != std::string::npos,
                     f["message"].get<std::string>().c_str());
        }
        QVERIFY2(found, "story THUDM/slime#1546 (scheduler stepped twice on resume) not caught");
    }

    // fairseq: checkpoint_{E}_{U}.pt by updates, checkpoint{E}.pt by the num_updates it records;
    // checkpoint_last.pt and checkpoint_best.pt are copies, folded into marks on the one they copy.
    // Composer: ep{E}-ba{B}-rank0.pt by B, latest-rank0.pt a link. torchtune: epoch_N folders.
    void singleFileRuns_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QStringList>("expected"); // "name step [latest] [best]"
        QTest::newRow("fairseq") << qrun("fairseq")
                                 << QStringList{"checkpoint_1_20.pt 20", "checkpoint1.pt 30", "checkpoint_2_40.pt 40",
                                                "checkpoint2.pt 60 latest best"};
        QTest::newRow("composer") << qrun("composer")
                                  << QStringList{"ep1-ba4-rank0.pt 4", "ep2-ba8-rank0.pt 8", "ep3-ba12-rank0.pt 12 latest"};
        QTest::newRow("torchtune") << qrun("torchtune") << QStringList{"epoch_0 4", "epoch_1 ?"};
    }
    void singleFileRuns()
    {
        QFETCH(QString, path);
        QFETCH(QStringList, expected);
        const auto runs = ckpt::discoverRuns(path.toStdString());
        QCOMPARE(runs.size(), std::size_t(1));
        QStringList actual;
        for (const auto& c : runs.front().history.checkpoints) {
            const auto step = c.step;
            QString line = QString::fromStdString(std::filesystem::path(c.path).filename().string()) + " "
                         + (step ? QString::number(*step) : QStringLiteral("?"));
            if (c.latest && QTest::currentDataTag() != QByteArray("torchtune"))
                line += QStringLiteral(" latest");
            if (c.best)
                line += QStringLiteral(" best");
            actual << line;
        }
        QCOMPARE(actual, expected);
        const CkptRun check = runCkpt({QStringLiteral("check"), path});
        QVERIFY2(check.code == 0, check.out.constData());
    }

    // The counters these writers keep below the top level are the global step and the data cursor.
    void frameworkCounters()
    {
        const json fairseq = ckptJson({QStringLiteral("show"), qrun("fairseq/checkpoints/checkpoint_2_40.pt"), QStringLiteral("--json")});
        QVERIFY(fairseq["progress"]["global_step"] == json(40));
        QVERIFY2(fairseq["data"]["train_iterator.iterations_in_epoch"] == json(10), fairseq["data"].dump().c_str());
        QVERIFY2(fairseq["optimizer"]["name_mapping"].get<std::string>().starts_with("by order"),
                 "the tied output projection is one parameter (share_decoder_input_output_embed)");
        const json composer = ckptJson({QStringLiteral("show"), qrun("composer/ep2-ba8-rank0.pt"), QStringLiteral("--json")});
        QVERIFY(composer["progress"]["global_step"] == json(8));
        QVERIFY(composer["progress"]["timestamp.sample"] == json(64));
        // torchtune's optimizer names become the HF names of its weights, so the moment checks run
        const json tune = ckptJson({QStringLiteral("show"), qrun("torchtune/epoch_0"), QStringLiteral("--json")});
        QVERIFY2(tune["optimizer"]["name_mapping"].get<std::string>().find("torchtune's module names converted") != std::string::npos,
                 tune["optimizer"]["name_mapping"].dump().c_str());
        bool embed = false;
        for (const auto& ps : tune["optimizer"]["param_state"])
            embed = embed || (ps["index"] == "tok_embeddings.weight" && ps["name"] == "model.embed_tokens.weight");
        QVERIFY(embed);
    }

    // torchtune's LoRA recipe saves its adapter twice: adapter_model.pt in torchtune's names (what it
    // resumes from and its optimizer is keyed by) and a PEFT copy. W holds the merged base weights and
    // the adapter once; the listing of the folder still shows both files' tensors.
    void torchtuneLoraAdapterOnce()
    {
        const json s = ckptJson({QStringLiteral("show"), qrun("torchtune-lora/epoch_0"), QStringLiteral("--json")});
        QCOMPARE(s["model"]["count"].get<int>(), 21 + 8);
        QVERIFY2(s["model"]["source"]["file"].get<std::string>().ends_with("/model.safetensors"), s["model"]["source"].dump().c_str());
        int adapters = 0;
        for (const auto& p : s["model"]["parameters"]) {
            const std::string name = p["name"];
            QVERIFY2(!name.starts_with("base_model.model."), "the PEFT copy joined W");
            if (name.find(".lora_") != std::string::npos) {
                QVERIFY2(p["source"]["file"].get<std::string>().ends_with("/adapter_model.pt"), name.c_str());
                ++adapters;
            }
        }
        QCOMPARE(adapters, 8);
        QVERIFY2(s["optimizer"]["name_mapping"].get<std::string>().starts_with("by name"), s["optimizer"]["name_mapping"].dump().c_str());
        const json listing = ckptJson({QStringLiteral("tensors"), qrun("torchtune-lora/epoch_0"), QStringLiteral("--json")});
        std::map<std::string, std::size_t> byRole;
        for (const auto& f : listing["files"])
            byRole[f["role"].get<std::string>()] += f["tensors"].size();
        QCOMPARE(byRole["adapter"], std::size_t(8 + 8));
        QCOMPARE(byRole["model"], std::size_t(21));
        const CkptRun check = runCkpt({QStringLiteral("check"), qrun("torchtune-lora")});
        QVERIFY2(check.code == 0 && check.out.contains("0 error(s), 0 warning(s)"), check.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestLayoutRuns)
#include "tst_layout_runs.moc"
