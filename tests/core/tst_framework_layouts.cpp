// SPDX-License-Identifier: MIT
// DeepSpeed, torch.distributed.checkpoint and accelerate folders: the sample runs that
// sample_runs/make_sample_runs.py writes the way those libraries do, read by the inspector and
// compared with what PyTorch itself loads from them (tests/fixtures/read_framework_runs.py), plus the
// real DeepSpeed folder of the corpus.
#include "test_support.h"

#include "ckpt/audit/manifest_audit.h"
#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/formats/tensor_view_reader.h"
#include "ckpt/frameworks/framework_registry.h"
#include "ckpt/report/state_json.h"
#include "ckpt/state/run_history.h"
#include "ckpt/state/training_state.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

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

json checkJson(const std::string& path)
{
    const CkptRun r = runCkpt({QStringLiteral("check"), QString::fromStdString(path), QStringLiteral("--json")});
    return json::parse(r.out.toStdString());
}

std::vector<json> findingsOf(const json& check, const std::string& rule)
{
    std::vector<json> out;
    for (const auto& f : check["findings"])
        if (f["rule"] == rule)
            out.push_back(f);
    return out;
}

// Overwrites the first element of `fqn`'s chunk held by `rank` with a NaN, in place: found by
// its bytes inside the chunk's slice of the .distcp file (the archive stores them uncompressed).
void plantNan(const std::string& dir, const std::string& fqn, int rank)
{
    const DcpCheckpoint dcp = readDcpCheckpoint(dir);
    const auto e = std::find_if(dcp.entries.begin(), dcp.entries.end(), [&](const DcpEntry& x) { return x.fqn == fqn; });
    QVERIFY2(e != dcp.entries.end(), fqn.c_str());
    const auto c = std::find_if(e->chunks.begin(), e->chunks.end(), [&](const DcpChunk& x) { return x.rank == rank; });
    QVERIFY(c != e->chunks.end());
    const auto chunk = dcp.openChunk(*c);
    const TensorViewReader view(*chunk, chunk->tensors()[chunk->tensorEntries().front().tensor]);
    QCOMPARE(view.elementSize(), std::size_t(4));
    std::vector<std::byte> buffer;
    const std::byte* first = view.read(0, 4, buffer);
    std::string needle(reinterpret_cast<const char*>(first), 16);
    std::fstream f(dir + "/" + c->file, std::ios::in | std::ios::out | std::ios::binary);
    std::string slice(c->length, '\0');
    f.seekg(static_cast<std::streamoff>(c->offset));
    f.read(slice.data(), static_cast<std::streamsize>(slice.size()));
    const auto at = slice.find(needle);
    QVERIFY(at != std::string::npos && slice.find(needle, at + 1) == std::string::npos);
    const char nan[4] = {0x00, 0x00, static_cast<char>(0xc0), 0x7f}; // float32 quiet NaN, little-endian
    f.seekp(static_cast<std::streamoff>(c->offset + at));
    f.write(nan, 4);
}

} // namespace

class TestFrameworkLayouts : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QProcess p;
        p.start(QStringLiteral(CKPT_PYTHON), {QStringLiteral(CKPT_SOURCE_DIR) + "/tests/fixtures/read_framework_runs.py",
                                              QString::fromStdString(sample(""))});
        QVERIFY2(p.waitForFinished(120000), "read_framework_runs.py did not finish");
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, p.readAllStandardError().constData());
        m_torch = json::parse(p.readAllStandardOutput().toStdString());
    }

    void deepSpeedPartitionsByName()
    {
        const TrainingState s = readTrainingState(sample("deepspeed/global_step40"));
        QCOMPARE(s.layout.layout, Layout::DeepSpeed);
        QVERIFY2(s.warnings.empty(), s.warnings.empty() ? "" : s.warnings.front().c_str());
        QCOMPARE(s.globalStep.value_or(-1), m_torch["deepspeed_global_steps"].get<int64_t>());
        QVERIFY(s.model && s.model->parameters.size() == 6);
        QCOMPARE(q(s.model->parameters[0].dtype), QByteArray("float16")); // the fp16 module
        QVERIFY(s.optimizer);
        QVERIFY(s.optimizer->nameMapping.starts_with("by name (DeepSpeed param_slice_mappings"));
        // Every fragment PyTorch finds in each rank's file, with the same name, place and step.
        const json& frags = m_torch["deepspeed_fragments"];
        QCOMPARE(s.optimizer->paramState.size(), frags.size());
        std::map<std::string, int64_t> perParam;
        for (std::size_t i = 0; i < frags.size(); ++i) {
            const ParamState& ps = s.optimizer->paramState[i];
            QCOMPARE(q(ps.name), q(frags[i]["name"].get<std::string>()));
            QCOMPARE(ps.rank, frags[i]["rank"].get<int>());
            QCOMPARE(ps.fragmentStart.value_or(-1), frags[i]["start"].get<int64_t>());
            QCOMPARE(ps.fragmentNumel.value_or(-1), frags[i]["numel"].get<int64_t>());
            QCOMPARE(ps.step.value_or(-1), frags[i]["step"].get<double>());
            QCOMPARE(ps.moments.size(), std::size_t(2));
            QVERIFY(ps.moments[0].shape == std::vector<int64_t>{ps.fragmentNumel.value_or(-1)});
            QVERIFY(ps.moments[0].from.file.ends_with("zero_pp_rank_" + std::to_string(ps.rank) + "_mp_rank_00_optim_states.pt"));
            perParam[ps.name] += *ps.fragmentNumel;
        }
        // 2.weight is split across the two ranks; together the fragments cover each parameter once.
        for (const auto& p : s.model->parameters)
            QCOMPARE(perParam[p.name], p.numel);
        // The DeepSpeed loss scaler is the A part; two skipped overflow steps show in the counters.
        QVERIFY(s.scaler && s.scaler->scale.value_or(0) == m_torch["deepspeed_scale"].get<double>());
        QCOMPARE(s.scaler->growthInterval.value_or(0), int64_t(1000));
        QCOMPARE(q(find(s.progress, "skipped_steps")->value), QByteArray("2"));
        QVERIFY(s.scheduler && s.scheduler->schedule.lastEpoch == m_torch["deepspeed_scheduler_last_epoch"].get<int64_t>());
    }

    void deepSpeedWithoutMappingsUsesParamShapes()
    {
        // DeepSpeed before param_slice_mappings (< 0.10): the same files without that key, made by
        // PyTorch from the sample; fragments then follow from param_shapes and the partition sizes.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString script = QStringLiteral(
            "import os, shutil, sys, torch\n"
            "sys.path.insert(0, sys.argv[1]); import make_sample_runs as m\n"
            "m.stand_in('deepspeed.runtime.zero.config', m.ZeroStageEnum)\n"
            "m.stand_in('deepspeed.runtime.fp16.loss_scaler', m.DynamicLossScaler)\n"
            "m.stand_in('deepspeed.utils.tensor_fragment', m.fragment_address)\n"
            "src = os.path.join(sys.argv[1], 'deepspeed', 'global_step40'); dst = os.path.join(sys.argv[2], 'global_step40')\n"
            "shutil.copytree(src, dst)\n"
            "for r in (0, 1):\n"
            "    p = os.path.join(dst, 'zero_pp_rank_%d_mp_rank_00_optim_states.pt' % r)\n"
            "    sd = torch.load(p); del sd['optimizer_state_dict']['param_slice_mappings']; torch.save(sd, p)\n");
        QProcess p;
        p.start(QStringLiteral(CKPT_PYTHON), {QStringLiteral("-B"), QStringLiteral("-c"), script,
                                              QString::fromStdString(sample("")), dir.path()});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const TrainingState old = readTrainingState(dir.path().toStdString() + "/global_step40");
        const TrainingState now = readTrainingState(sample("deepspeed/global_step40"));
        QVERIFY2(old.warnings.empty(), old.warnings.empty() ? "" : old.warnings.front().c_str());
        QVERIFY(old.optimizer && old.optimizer->nameMapping.starts_with("by position (param_shapes"));
        QCOMPARE(old.optimizer->paramState.size(), now.optimizer->paramState.size());
        for (std::size_t i = 0; i < now.optimizer->paramState.size(); ++i) {
            QCOMPARE(q(old.optimizer->paramState[i].name), q(now.optimizer->paramState[i].name));
            QCOMPARE(old.optimizer->paramState[i].fragmentStart, now.optimizer->paramState[i].fragmentStart);
            QCOMPARE(old.optimizer->paramState[i].fragmentNumel, now.optimizer->paramState[i].fragmentNumel);
        }
    }

    void realDeepSpeedFolder()
    {
        const std::string corpus = corpusDir();
        if (corpus.empty())
            QSKIP("../shared/corpus is not present");
        const TrainingState ds = readTrainingState(corpus + "/brynelee__deepspeedtrial/deepspeed_train_demo/checkpoints/global_step1875");
        QVERIFY(ds.optimizer);
        QVERIFY(ds.optimizer->nameMapping.starts_with("by name (DeepSpeed param_slice_mappings"));
        QCOMPARE(ds.optimizer->paramState.size(), std::size_t(4));
        QCOMPARE(q(ds.optimizer->paramState[1].name), QByteArray("seq.0.bias"));
        QCOMPARE(ds.optimizer->paramState[1].fragmentStart.value_or(-1), int64_t(235200));
        QCOMPARE(ds.optimizer->paramState[3].step.value_or(-1), 1875.0);
        QVERIFY(ds.scaler && ds.scaler->scale.value_or(0) == 1.0 && !ds.scaler->enabled); // static LossScaler(1): fp32
        // Its run folder audits as a DeepSpeed run: `latest` names global_step1875, rank 0's partition is there.
        const AuditResult r = auditPath(corpus + "/brynelee__deepspeedtrial/deepspeed_train_demo/checkpoints");
        QCOMPARE(r.checkpoints, std::size_t(1));
        QCOMPARE(r.findings.size(), std::size_t(1));
        QCOMPARE(q(r.findings[0].rule), QByteArray("integrity.no-manifest"));
        QVERIFY(r.findings[0].message.find("DeepSpeed") != std::string::npos);
    }

    void dcpNewestLayout()
    {
        for (const char* folder : {"dcp/step-30", "dcp-no-collectives/step-30"}) {
            const TrainingState s = readTrainingState(sample(folder));
            const json& expected = m_torch[std::string(folder).starts_with("dcp-no") ? "dcp_no_collectives" : "dcp"];
            QCOMPARE(s.layout.layout, Layout::Dcp);
            QVERIFY2(s.layout.complete, folder);
            QVERIFY2(s.warnings.empty(), s.warnings.empty() ? "" : s.warnings.front().c_str());
            QCOMPARE(s.globalStep.value_or(-1), expected["values"]["step"].get<int64_t>());
            QVERIFY(s.model && s.model->parameters.size() == 6);
            for (const auto& p : s.model->parameters) {
                const json& t = expected["tensors"]["model." + p.name];
                QCOMPARE(json(p.shape).dump(), t["size"].dump());
                QCOMPARE(q(p.dtype), q(t["dtype"].get<std::string>()));
            }
            // The FQN-keyed optimizer: moments by name, step from the replicated 0-d tensor, and
            // the param group rebuilt from its per-hyperparameter byte items (torch >= 2.4 flattening).
            QVERIFY(s.optimizer && s.optimizer->type == "Adam/AdamW");
            QCOMPARE(s.optimizer->paramState.size(), std::size_t(6));
            for (const auto& ps : s.optimizer->paramState) {
                QCOMPARE(q(ps.name), q(ps.index));
                QCOMPARE(ps.group, 0);
                QCOMPARE(ps.step.value_or(-1), 30.0);
                QCOMPARE(json(ps.moments[0].shape).dump(), expected["tensors"]["optimizer.state." + ps.name + ".exp_avg"]["size"].dump());
            }
            QCOMPARE(s.optimizer->groups.size(), std::size_t(1));
            QCOMPARE(s.optimizer->groups[0].params.size(), std::size_t(6));
            bool lrFound = false;
            for (const auto& hp : s.optimizer->groups[0].hyperparameters) {
                if (hp.name == "lr") {
                    lrFound = true;
                    QCOMPARE(std::stod(hp.value), expected["values"]["optimizer.param_groups.0.lr"].get<double>());
                }
            }
            QVERIFY(lrFound);
            // The scheduler's fields, each its own byte item, make one CosineAnnealingLR again.
            QVERIFY(s.scheduler && s.scheduler->schedule.kind == "CosineAnnealingLR");
            QCOMPARE(s.scheduler->schedule.lastEpoch, expected["values"]["lr_scheduler.last_epoch"].get<int64_t>());
            QVERIFY(s.scheduler->schedule.recomputable);
        }
    }

    void accelerateSaveState()
    {
        const TrainingState s = readTrainingState(sample("accelerate/checkpoints/checkpoint_1"));
        QCOMPARE(s.layout.layout, Layout::Accelerate);
        QVERIFY2(s.warnings.empty(), s.warnings.empty() ? "" : s.warnings.front().c_str());
        // random_states_<i>.pkl's step is Accelerator.step (8 batches into the second epoch of 16), kept
        // as accelerator.step; accelerate records no global step.
        QVERIFY(!s.globalStep);
        QCOMPARE(m_torch["accelerate_ranks"][0]["step"].get<int64_t>(), int64_t(8));
        QCOMPARE(q(s.progressField("accelerator.step")->value), q(m_torch["accelerate_ranks"][0]["step"].dump()));
        QVERIFY(s.model && s.model->from.file.ends_with("model.safetensors"));
        // safetensors lists tensors sorted by name, the optimizer in module order: names follow shapes.
        QVERIFY(s.optimizer && s.optimizer->nameMapping.starts_with("by shape"));
        for (const auto& ps : s.optimizer->paramState) {
            QCOMPARE(json(ps.moments[0].shape).dump(), m_torch["accelerate_moment_shapes"][ps.index].dump());
            const auto p = std::find_if(s.model->parameters.begin(), s.model->parameters.end(),
                                        [&](const ParameterEntry& e) { return e.name == ps.name; });
            QVERIFY(p != s.model->parameters.end());
            QVERIFY(p->shape == ps.moments[0].shape);
        }
        QCOMPARE(q(s.optimizer->paramState[0].name), QByteArray("0.weight"));
        QVERIFY(s.scheduler && s.scheduler->schedule.kind == "CosineAnnealingWarmRestarts");
        QVERIFY(s.scaler && s.scaler->from.file.ends_with("scaler.pt"));
        // The process count is in the RNG files' names only (one random_states_<i>.pkl per process).
        const auto processes = std::find_if(s.environment.begin(), s.environment.end(),
                                            [](const StateField& f) { return f.name == "accelerate.num_processes"; });
        QVERIFY(processes != s.environment.end());
        QCOMPARE(q(processes->value), QByteArray("2"));
        // R: four generators per process, each from its own random_states_<i>.pkl.
        QVERIFY(s.rng);
        QCOMPARE(s.rng->generators.size(), std::size_t(8));
        for (const auto& g : s.rng->generators) {
            QVERIFY(g.rank == 0 || g.rank == 1);
            QVERIFY(g.file.ends_with("random_states_" + std::to_string(g.rank) + ".pkl"));
            QVERIFY(g.state.valid);
            const json& t = m_torch["accelerate_ranks"][g.rank];
            switch (g.state.kind) {
            case RngKind::PythonMt19937: QCOMPARE(g.state.position.value_or(-1), t["python_position"].get<int64_t>()); break;
            case RngKind::NumpyMt19937: QCOMPARE(g.state.position.value_or(-1), t["numpy_position"].get<int64_t>()); break;
            case RngKind::TorchCpu: QCOMPARE(g.state.seed.value_or(0), t["torch_seed"].get<uint64_t>()); break;
            case RngKind::TorchCuda:
                QCOMPARE(g.state.seed.value_or(0), t["cuda_seed"].get<uint64_t>());
                QCOMPARE(g.state.offset.value_or(0), t["cuda_offset"].get<uint64_t>());
                break;
            }
        }
        // D: the sampler object and the stateful dataloader's cursor, with their files.
        QCOMPARE(q(find(s.data, "sampler.epoch")->value), q(m_torch["accelerate_sampler"]["epoch"].dump()));
        QCOMPARE(q(find(s.data, "sampler.initial_seed")->value), q(m_torch["accelerate_sampler"]["initial_seed"].dump()));
        QVERIFY(find(s.data, "sampler.epoch")->from.file.ends_with("sampler.bin"));
        QCOMPARE(q(find(s.data, "dl_state_dict._num_yielded")->value), q(m_torch["accelerate_num_yielded"].dump()));
    }

    void runHistories()
    {
        const RunHistory acc = readRunHistory(sample("accelerate"));
        QCOMPARE(acc.checkpoints.size(), std::size_t(2));
        // checkpoint_<i> counts saves; no file records a global step (Accelerator.step resets every epoch).
        QVERIFY(!acc.checkpoints[0].step && !acc.checkpoints[1].step);
        QCOMPARE(acc.checkpoints[0].saveIndex.value_or(-1), int64_t(0));
        QCOMPARE(acc.checkpoints[1].saveIndex.value_or(-1), int64_t(1));
        QVERIFY(acc.checkpoints[1].latest);
        QCOMPARE(acc.series.at("loss").size(), std::size_t(24));

        const RunHistory ds = readRunHistory(sample("deepspeed"));
        QCOMPARE(ds.checkpoints.size(), std::size_t(2));
        QVERIFY(ds.checkpoints[1].latest && ds.latestFrom == "latest file");
        QCOMPARE(ds.checkpoints[1].layout, Layout::DeepSpeed);

        const RunHistory dcp = readRunHistory(sample("dcp"));
        QCOMPARE(dcp.checkpoints.size(), std::size_t(2));
        QCOMPARE(dcp.checkpoints[0].step.value_or(-1), int64_t(15));
        QVERIFY(dcp.checkpoints[1].complete && dcp.checkpoints[1].layout == Layout::Dcp);
    }

    void showContractOnEveryLayout()
    {
        for (const char* folder : {"deepspeed/global_step20", "dcp/step-15", "dcp-no-collectives/step-30",
                                   "accelerate/checkpoints/checkpoint_0"}) {
            const CkptRun r = runCkpt({QStringLiteral("show"), QString::fromStdString(sample(folder)), QStringLiteral("--json")});
            QCOMPARE(r.code, 0);
            const json j = json::parse(r.out.toStdString());
            for (const char* key : {"format", "model", "optimizer", "scheduler", "scaler", "rng", "data", "progress", "environment"})
                QVERIFY2(j.contains(key), key);
            // accelerate records no global step (its "step" is Accelerator.step): null, not a guess.
            if (std::string(folder).starts_with("accelerate"))
                QVERIFY2(j["progress"]["global_step"].is_null(), folder);
            else
                QVERIFY2(j["progress"]["global_step"].is_number_integer(), folder);
            QVERIFY(!j["optimizer"]["param_state"].empty());
            for (const auto& ps : j["optimizer"]["param_state"])
                QVERIFY2(ps["name"].is_string(), folder);
        }
    }

    // The registry is the one list: every layout has exactly one adapter, and each name is its own.
    void registryHasOneAdapterPerLayout()
    {
        std::set<std::string> names;
        std::set<Layout> layouts;
        for (const FrameworkAdapter* a : frameworkAdapters()) {
            QVERIFY2(names.insert(a->name()).second, a->name());
            QVERIFY2(layouts.insert(a->layout()).second, a->name());
            QCOMPARE(&frameworkOf(a->layout()), a);
            QCOMPARE(std::string(layoutName(a->layout())), std::string(a->name()));
        }
        QCOMPARE(std::string(frameworkAdapters().back()->name()), std::string("generic"));
        QCOMPARE(layouts.size(), std::size_t(int(Layout::Generic) + 1));
    }

    // Each recognised checkpoint says which adapter claimed it and why, in the text and the JSON; the
    // generic fallback claims nothing.
    void recognitionSaysWhy()
    {
        const std::vector<std::pair<const char*, const char*>> cases = {
            {"deepspeed/global_step20", "_model_states.pt"}, {"dcp/step-15", ".metadata"},
            {"accelerate/checkpoints/checkpoint_0", "random_states_"}, {"hf-trainer/checkpoint-20", "trainer_state.json"},
            {"tiny-mlp/checkpoint-0000050", "manifest.json"}, {"lightning/checkpoints/epoch=0-step=25.ckpt", "pytorch-lightning_version"}};
        for (const auto& [folder, why] : cases) {
            const std::string path = sample(folder);
            const CkptRun r = runCkpt({QStringLiteral("show"), QString::fromStdString(path), QStringLiteral("--json")});
            QCOMPARE(r.code, 0);
            const json j = json::parse(r.out.toStdString());
            QVERIFY2(j["recognised_by"].is_string(), path.c_str());
            QVERIFY2(j["recognised_by"].get<std::string>().find(why) != std::string::npos, j["recognised_by"].dump().c_str());
            const CkptRun text = runCkpt({QStringLiteral("show"), QString::fromStdString(path)});
            QVERIFY2(text.out.contains(", by "), path.c_str());
        }
        QTemporaryDir plain;
        std::ofstream(plain.filePath(QStringLiteral("notes.txt")).toStdString()) << "not a checkpoint";
        const CheckpointLayout generic = detectLayout(plain.path().toStdString());
        QCOMPARE(generic.layout, Layout::Generic);
        QVERIFY(generic.recognisedBy.empty());
    }

    void auditsOfTheNewLayouts()
    {
        // As generated: no manifest to verify against (info only), nothing missing.
        for (const char* run : {"deepspeed", "dcp", "dcp-no-collectives", "accelerate"}) {
            const AuditResult r = auditPath(sample(run));
            QVERIFY2(r.checkpoints >= 1, run);
            for (const auto& f : r.findings) {
                QVERIFY2(f.severity == Severity::Info && f.rule == "integrity.no-manifest", (std::string(run) + ": " + f.message).c_str());
                QVERIFY(!f.checkpoints.empty());
            }
        }
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        namespace fs = std::filesystem;
        const std::string tmp = dir.path().toStdString();
        auto copyRun = [&](const char* run) {
            fs::copy(sample(run), tmp + "/" + run, fs::copy_options::recursive);
            for (const auto& e : fs::recursive_directory_iterator(tmp + "/" + run))
                fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
            return tmp + "/" + run;
        };

        // DeepSpeed: rank 1's ZeRO partition lost; `latest` names that checkpoint.
        const std::string ds = copyRun("deepspeed");
        fs::remove(ds + "/global_step40/zero_pp_rank_1_mp_rank_00_optim_states.pt");
        AuditResult r = auditPath(ds);
        std::vector<std::string> rules;
        for (const auto& f : r.findings)
            rules.push_back(f.rule);
        QVERIFY(std::find(rules.begin(), rules.end(), "integrity.shard-missing") != rules.end());
        QVERIFY(std::find(rules.begin(), rules.end(), "integrity.latest-incomplete") != rules.end());
        const auto missing = std::find_if(r.findings.begin(), r.findings.end(), [](const Finding& f) { return f.rule == "integrity.shard-missing"; });
        QCOMPARE(missing->severity, Severity::Error);
        QVERIFY(missing->file.ends_with("global_step40/zero_pp_rank_1_mp_rank_00_optim_states.pt"));
        QCOMPARE(q(missing->evidence[0].value), QByteArray("2")); // dp_world_size from the model states
        const TrainingState partial = readTrainingState(ds + "/global_step40");
        QVERIFY(!partial.warnings.empty()); // 2.weight is only half covered

        // DCP without collectives: rank 1's metadata lost, then rank 1's data truncated.
        const std::string dcp = copyRun("dcp-no-collectives");
        const std::string step = dcp + "/step-30";
        fs::resize_file(step + "/__1_0.distcp", fs::file_size(step + "/__1_0.distcp") / 2);
        r = auditPath(dcp);
        QVERIFY(std::any_of(r.findings.begin(), r.findings.end(), [](const Finding& f) {
            return f.rule == "integrity.dcp-coverage" && f.severity == Severity::Error && f.message.find("beyond the end") != std::string::npos;
        }));
        fs::remove(step + "/__1.metadata");
        r = auditPath(dcp);
        const auto untiled = std::find_if(r.findings.begin(), r.findings.end(), [](const Finding& f) {
            return f.rule == "integrity.dcp-coverage" && f.message.find("not covered exactly") != std::string::npos;
        });
        QVERIFY(untiled != r.findings.end());
        QVERIFY(untiled->message.find("model.0.weight (the chunks cover 64 of 128 elements)") != std::string::npos);

        // The CLI: exit 1 with findings, the JSON contract.
        const CkptRun cli = runCkpt({QStringLiteral("audit"), QString::fromStdString(ds), QStringLiteral("--json")});
        QCOMPARE(cli.code, 1);
        const json j = json::parse(cli.out.toStdString());
        for (const char* key : {"files_checked", "bytes_hashed", "findings"})
            QVERIFY2(j.contains(key), key);
    }

    // One resolver from a provenance to bytes (ckpt/stats/tensor_source.h) for the diff, the
    // statistics and the rules: DCP against a single file, per-rank metadata, content rules inside
    // .distcp chunks, and content that cannot be read reported instead of passed as clean.
    void oneResolverForDcp()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        namespace fs = std::filesystem;
        const std::string tmp = dir.path().toStdString();

        // dcp/step-30's model reassembled by PyTorch into one torch.save file: equal tensor for tensor.
        QProcess p;
        p.start(QStringLiteral(CKPT_PYTHON), {QStringLiteral(CKPT_SOURCE_DIR) + "/tests/fixtures/read_framework_runs.py",
                                              QString::fromStdString(sample("")), QString::fromStdString(tmp + "/model.pt")});
        QVERIFY(p.waitForFinished(120000) && p.exitCode() == 0);
        for (const bool dcpFirst : {true, false}) {
            const QString a = QString::fromStdString(dcpFirst ? sample("dcp/step-30") : tmp + "/model.pt");
            const QString b = QString::fromStdString(dcpFirst ? tmp + "/model.pt" : sample("dcp/step-30"));
            const CkptRun r = runCkpt({QStringLiteral("diff"), a, b, QStringLiteral("--json")});
            const json j = json::parse(r.out.toStdString());
            int equal = 0;
            for (const auto& t : j["tensors"]) {
                if (t["component"] == "model") {
                    QVERIFY2(t["status"] == "equal", t.dump().c_str());
                    ++equal;
                }
            }
            QCOMPARE(equal, 6); // 0.weight is split over two ranks' chunks, the file holds it whole
        }

        // A save without a process group (__0.metadata, __1.metadata) against itself: all equal.
        const CkptRun self = runCkpt({QStringLiteral("diff"), QString::fromStdString(sample("dcp-no-collectives/step-30")),
                                      QString::fromStdString(sample("dcp-no-collectives/step-30")), QStringLiteral("--json")});
        const json selfJ = json::parse(self.out.toStdString());
        QCOMPARE(selfJ["counts"]["unreadable"].get<int>(), 0);
        QCOMPARE(selfJ["counts"]["equal"].get<int>(), 18);

        // A NaN planted in rank 1's chunk of 0.weight: the content rule sees it through .distcp.
        fs::copy(sample("dcp-no-collectives"), tmp + "/dcp", fs::copy_options::recursive);
        for (const auto& e : fs::recursive_directory_iterator(tmp + "/dcp"))
            fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
        const std::string step = tmp + "/dcp/step-30";
        QVERIFY(findingsOf(checkJson(step), "model.nonfinite").empty());
        plantNan(step, "model.0.weight", 1);
        const auto nonfinite = findingsOf(checkJson(step), "model.nonfinite");
        QCOMPARE(nonfinite.size(), std::size_t(1));
        QCOMPARE(nonfinite[0]["severity"].get<std::string>(), std::string("error"));
        QVERIFY2(nonfinite[0]["message"].get<std::string>().find("0.weight") != std::string::npos, nonfinite[0].dump().c_str());
        QVERIFY(nonfinite[0]["evidence"][0]["value"].get<std::string>().starts_with("1 NaN, 0 Inf of 128"));

        // Rank 1's data file cut short: not "clean" but "content not checked", with the count.
        fs::resize_file(step + "/__1_0.distcp", fs::file_size(step + "/__1_0.distcp") / 2);
        const json cut = checkJson(step);
        const auto unchecked = findingsOf(cut, "integrity.content-unchecked");
        QCOMPARE(unchecked.size(), std::size_t(1));
        QCOMPARE(unchecked[0]["severity"].get<std::string>(), std::string("warning"));
        QCOMPARE(unchecked[0]["component"].get<std::string>(), std::string("integrity"));
        QVERIFY2(unchecked[0]["message"].get<std::string>().find(" of 18 tensor(s) could not be read") != std::string::npos,
                 unchecked[0].dump().c_str());
    }

private:
    json m_torch;
};

QTEST_GUILESS_MAIN(TestFrameworkLayouts)
#include "tst_framework_layouts.moc"
