// SPDX-License-Identifier: MIT
// Issue 15, point 1: Hugging Face model folders as save_pretrained writes them
// (tests/fixtures/make_model_folders.py): a sharded set is one checkpoint and one W, whatever
// command or page looks at it; each tensor is counted once; config.json is E with its key facts,
// checked against the weights' shapes.
#include "test_support.h"

#include "ckpt/frameworks/checkpoint_layout.h"
#include "ckpt/state/run_discovery.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <fstream>

using namespace testsupport;
using nlohmann::json;

namespace {

std::string folder(const std::string& name) { return std::string(CKPT_TESTDATA_DIR) + "/model_folders/" + name; }
QString qfolder(const std::string& name) { return QString::fromStdString(folder(name)); }

std::size_t weightMapSize(const std::string& index)
{
    std::ifstream in(index);
    return json::parse(in)["weight_map"].size();
}

} // namespace

class TestModelFolders : public QObject {
    Q_OBJECT
private slots:
    // One discovery: a model folder is one checkpoint, a folder of them one run each, a Trainer run
    // whose model is sharded a run of its checkpoints (never one checkpoint per shard).
    void discovery()
    {
        for (const char* name : {"llama-sharded", "gpt2-bin-sharded", "config-mismatch"}) {
            const auto runs = ckpt::discoverRuns(folder(name));
            QCOMPARE(runs.size(), std::size_t(1));
            QVERIFY(runs.front().singleCheckpoint);
            QCOMPARE(runs.front().history.checkpoints.front().layout, ckpt::Layout::ModelExport);
        }
        const auto models = ckpt::discoverRuns(folder("models"));
        QCOMPARE(models.size(), std::size_t(2));
        QVERIFY(models[0].singleCheckpoint && models[1].singleCheckpoint);
        const auto trainer = ckpt::discoverRuns(folder("trainer-sharded"));
        QCOMPARE(trainer.size(), std::size_t(1));
        QCOMPARE(trainer.front().history.checkpoints.size(), std::size_t(2));
        QCOMPARE(trainer.front().history.checkpoints.back().step, std::optional<int64_t>(20));
        // ckpt run says the same
        const CkptRun run = runCkpt({QStringLiteral("run"), qfolder("llama-sharded")});
        QCOMPARE(run.code, 0);
        QVERIFY2(run.out.contains("1 checkpoint (the path is one checkpoint)"), run.out.constData());
        const json all = ckptJson({QStringLiteral("run"), qfolder("models"), QStringLiteral("--json")});
        QCOMPARE(all["runs"].size(), std::size_t(2));
    }

    // A model repository as `git clone` or a hub download leaves it: licences, README, figures,
    // .gitattributes, the modelling code of a trust_remote_code model (deepseek-ai/DeepSeek-V3's
    // layout). Still one checkpoint of one W. A file of training state beside the weights (an
    // optimizer's .pt) makes it a training checkpoint instead.
    void repositoryExtras()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::filesystem::path copy = dir.path().toStdString() + "/DeepSeek-like";
        std::filesystem::copy(folder("llama-sharded"), copy, std::filesystem::copy_options::recursive);
        for (const char* name : {".gitattributes", "LICENSE-CODE", "LICENSE-MODEL", "README.md", "README_WEIGHTS.md",
                                 "modeling_deepseek.py", "configuration_deepseek.py", ".bench-complete"})
            std::ofstream(copy / name) << "text\n";
        std::filesystem::create_directory(copy / "figures");
        std::ofstream(copy / "figures" / "benchmark.png") << "png";
        const auto runs = ckpt::discoverRuns(copy.string());
        QCOMPARE(runs.size(), std::size_t(1));
        QVERIFY(runs.front().singleCheckpoint);
        QCOMPARE(runs.front().history.checkpoints.front().layout, ckpt::Layout::ModelExport);
        const json state = ckptJson({QStringLiteral("show"), QString::fromStdString(copy.string()), QStringLiteral("--json")});
        QCOMPARE(state["model"]["parameters"].size(), weightMapSize(folder("llama-sharded/model.safetensors.index.json")));

        std::filesystem::copy_file(folder("gpt2-bin-sharded/pytorch_model-00001-of-00006.bin"), copy / "optimizer.pt");
        QVERIFY(ckpt::detectLayout(copy.string()).layout != ckpt::Layout::ModelExport);
    }

    // Each tensor once: the index stands for its shards, in the listing and in W.
    void tensorsCountedOnce_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("index");
        QTest::newRow("model folder") << qfolder("llama-sharded") << qfolder("llama-sharded/model.safetensors.index.json");
        QTest::newRow("trainer checkpoint") << qfolder("trainer-sharded/checkpoint-10")
                                            << qfolder("trainer-sharded/checkpoint-10/model.safetensors.index.json");
        QTest::newRow("bin shards") << qfolder("gpt2-bin-sharded") << qfolder("gpt2-bin-sharded/pytorch_model.bin.index.json");
    }
    void tensorsCountedOnce()
    {
        QFETCH(QString, path);
        QFETCH(QString, index);
        const std::size_t expected = weightMapSize(index.toStdString());
        const json listing = ckptJson({QStringLiteral("tensors"), path, QStringLiteral("--json")});
        std::size_t model = 0;
        for (const auto& f : listing["files"]) {
            QVERIFY2(f["file"].get<std::string>().find("-of-") == std::string::npos || index.endsWith(".bin.index.json"),
                     "a safetensors shard listed beside its index");
            if (f["role"] == "model")
                model += f["tensors"].size();
        }
        QCOMPARE(model, expected);
        const json state = ckptJson({QStringLiteral("show"), path, QStringLiteral("--json")});
        QCOMPARE(state["model"]["parameters"].size(), expected);
    }

    // An index that disagrees with its shards, edited from save_pretrained's own: a tensor a shard
    // holds but the index leaves out, and a name the index sends to a shard without it. Both are
    // said (naming shard and tensor), and the rest still lists.
    void indexAgainstShards()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::filesystem::path copy = dir.path().toStdString() + "/llama";
        std::filesystem::copy(folder("llama-sharded"), copy, std::filesystem::copy_options::recursive);
        const std::string indexPath = (copy / "model.safetensors.index.json").string();
        json index;
        {
            std::ifstream in(indexPath);
            index = json::parse(in);
        }
        auto& map = index["weight_map"];
        const std::string dropped = map.begin().key(), shard = map.begin().value().get<std::string>();
        map.erase(map.begin());
        map["model.not_in_any_shard.weight"] = shard;
        std::ofstream(indexPath) << index.dump(2);
        const std::size_t expected = map.size() - 1; // the name no shard holds is a warning, not a tensor

        const json listing = ckptJson({QStringLiteral("tensors"), QString::fromStdString(indexPath), QStringLiteral("--json")});
        QCOMPARE(listing["tensors"].size(), expected);
        bool saidUnlisted = false, saidMissing = false;
        for (const auto& w : listing["warnings"]) {
            const std::string text = w.get<std::string>();
            saidUnlisted |= text == "shard " + shard + " holds tensor " + dropped + ", which the index does not list";
            saidMissing |= text == "tensor model.not_in_any_shard.weight: the index puts it in " + shard + ", which does not hold it";
        }
        QVERIFY2(saidUnlisted, listing["warnings"].dump().c_str());
        QVERIFY2(saidMissing, listing["warnings"].dump().c_str());
    }

    // E: config.json's key facts under one name whatever the architecture calls them.
    void configIsEnvironment()
    {
        const json llama = ckptJson({QStringLiteral("show"), qfolder("llama-sharded"), QStringLiteral("--json")});
        QVERIFY(llama["environment"]["config.architectures"] == json("LlamaForCausalLM"));
        QVERIFY(llama["environment"]["config.num_hidden_layers"] == json(4));
        QVERIFY(llama["environment"]["config.vocab_size"] == json(32));
        const json gpt2 = ckptJson({QStringLiteral("show"), qfolder("gpt2-bin-sharded"), QStringLiteral("--json")});
        QVERIFY(gpt2["environment"]["config.hidden_size"] == json(8));
        bool fromOwnKey = false;
        for (const auto& f : gpt2["environment"]["fields"])
            fromOwnKey = fromOwnKey || (f["name"] == "config.num_hidden_layers" && f["source"]["key"] == json::array({"n_layer"}));
        QVERIFY2(fromOwnKey, "the provenance keeps GPT-2's own key n_layer");
    }

    // The weights against their own config: a copied config is proven wrong; the healthy ones stay quiet.
    void configAgainstWeights()
    {
        const json bad = ckptJson({QStringLiteral("check"), qfolder("config-mismatch"), QStringLiteral("--json")});
        QStringList messages;
        for (const auto& f : bad["findings"]) {
            if (f["rule"] != "model.config-disagrees")
                continue;
            QVERIFY(f["severity"] == json("error"));
            QVERIFY(f["component"] == json("model"));
            messages << QString::fromStdString(f["message"].get<std::string>());
        }
        QCOMPARE(messages.size(), 2);
        QVERIFY2(messages.join('\n').contains("4 block(s) of model.layers but the config says 6 layers"), qPrintable(messages.join('\n')));
        QVERIFY2(messages.join('\n').contains("has 32 rows but the config's vocab_size is 48"), qPrintable(messages.join('\n')));
        // DeepSeek-V3 keeps its multi-token-prediction layers after the decoder's: 3 + 1 blocks agree.
        QTemporaryDir tmp;
        const std::string mtp = tmp.path().toStdString() + "/mtp";
        std::filesystem::copy(folder("llama-sharded"), mtp);
        json config = readJson(mtp + "/config.json");
        config["num_hidden_layers"] = 3;
        config["num_nextn_predict_layers"] = 1;
        std::ofstream(mtp + "/config.json") << config.dump(2);
        const CkptRun withMtp = runCkpt({QStringLiteral("check"), QString::fromStdString(mtp)});
        QVERIFY2(withMtp.code == 0, withMtp.out.constData());
        config["num_nextn_predict_layers"] = 0;
        std::ofstream(mtp + "/config.json") << config.dump(2);
        QCOMPARE(runCkpt({QStringLiteral("check"), QString::fromStdString(mtp)}).code, 1);
        for (const char* name : {"llama-sharded", "gpt2-bin-sharded", "models", "trainer-sharded"}) {
            const CkptRun r = runCkpt({QStringLiteral("check"), qfolder(name)});
            QVERIFY2(r.code == 0, (std::string(name) + ": " + r.out.toStdString() + r.err.toStdString()).c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestModelFolders)
#include "tst_model_folders.moc"
