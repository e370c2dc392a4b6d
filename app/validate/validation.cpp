// SPDX-License-Identifier: MIT
// GCC 12 reports nlohmann::json temporaries as maybe-uninitialized (a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "app/validate/validation_run.h"

#include "app/validate/environment_check.h"
#include "ckpt/formats/tensor_bytes.h"

#include <cmath>

namespace ckpt::validate {
namespace detail {

int Validation::run()
{
    json report = {{"event", "report"}, {"checkpoint", m_opt.checkpoint}, {"device_requested", m_opt.device},
                   {"rtol", m_opt.rtol}, {"validator_libtorch", libtorchVersion()}};
    try {
        prepare(report);
        int updatesStarted = 0; // one step per recorded update: 9 .. 8 + K
        ReplayResult res = replayUpdate(m_in, [&](const std::string& stage, const std::string& msg) {
            progress(stage == "update" ? 8 + ++updatesStarted : stage == "optimizer" ? 8 : 7, stage, msg);
        });
        report["device"] = res.device;
        report["optimizer_mode"] = res.optimizerMode;
        if (!res.optimizerFormulas.empty())
            report["optimizer_formulas"] = res.optimizerFormulas;
        report["load"] = loadJson(res);
        if (!res.loaded)
            return finish(report, kCannotRun, "W does not load strictly into the probe's module (see \"load\")");
        progress(steps(), "compare", "comparing with the probe in the recovery guide's diagnosis order");
        return compare(report, res);
    } catch (const std::exception& e) {
        return finish(report, kCannotRun, e.what());
    }
}

void Validation::progress(int index, const std::string& stage, const std::string& message)
{
    m_emit({{"event", "progress"}, {"stage", stage}, {"index", index}, {"of", steps()}, {"message", message}});
}

int Validation::finish(json& report, int code, const std::string& error)
{
    report["exit_code"] = code;
    report["verdict"] = code == kPass ? "pass" : code == kDiffers ? "differs" : code == kPartial ? "partial" : "cannot run";
    if (!error.empty())
        report["error"] = error;
    report["notes"] = m_notes;
    m_emit(report);
    return code;
}

const CheckpointFile& Validation::file(const std::string& path)
{
    auto& slot = m_files[path];
    if (!slot)
        slot = CheckpointFile::open(path);
    return *slot;
}

HostTensor Validation::tensor(const Provenance& from)
{
    const CheckpointFile& f = file(from.file);
    const TensorInfo* t = tensorAt(f, from.key);
    if (!t)
        throw std::runtime_error(from.file + ": no tensor at " + formatKeyPath(from.key));
    try {
        return {t->dtype, t->shape, contiguousTensorBytes(f, *t)};
    } catch (const std::exception& e) {
        throw std::runtime_error(from.file + ": " + formatKeyPath(from.key) + ": " + e.what());
    }
}

std::vector<std::byte> Validation::rawBytes(const std::string& path, const KeyPath& key)
{
    const CheckpointFile& f = file(path);
    const TensorInfo* t = tensorAt(f, key);
    return t ? contiguousTensorBytes(f, *t) : std::vector<std::byte>{};
}

void Validation::prepare(json& report)
{
    // probe.json first (small): it says how many updates, and so how many steps, there are
    m_probe = readProbe(m_opt.probe.empty() ? defaultProbeDir(m_opt.checkpoint) : m_opt.probe);
    m_records = updateRecords(m_probe);
    progress(1, "environment", "reading the checkpoint and the probe");
    m_state = readTrainingState(m_opt.checkpoint);
    report["probe"] = m_probe.dir;
    report["global_step"] = m_probe.json.value("global_step", json());
    report["recorded_by"] = m_probe.json.value("recorded_by", json());
    report["environment"] = environmentChecks(m_state, m_probe.json, m_opt.checkpoint, m_notes);
    progress(2, "weights", "reading W from the checkpoint");
    if (!m_state.model)
        throw std::runtime_error(m_opt.checkpoint + ": no model state (W) found in this checkpoint");
    m_in.modulePath = m_probe.modulePath;
    m_in.method = m_probe.json["module"].value("method", "forward");
    m_in.statePrefix = m_probe.json["module"].value("state_dict_prefix", "");
    for (const auto& p : m_state.model->parameters)
        m_in.weights[p.name] = tensor(p.from);
    progress(3, "optimizer", "reading O's param groups and state");
    optimizer(report);
    progress(4, "lr", "LR for the next update from the scheduler state");
    learningRate();
    progress(5, "scaler", "loss scale");
    scaler();
    progress(6, "rng", "generator states per rank");
    generators();
    updates();
    m_in.device = m_opt.device;
    m_in.threads = m_opt.threads;
}

const StateField* Validation::field(const std::vector<StateField>& fields, const std::string& name, int rank)
{
    for (const auto& f : fields) {
        if (f.name == name && (rank == -2 || rankOfFile(f.from.file) == rank))
            return &f;
    }
    return nullptr;
}

int Validation::rankOfFile(const std::string& path) const
{
    for (const auto& f : m_state.layout.files) {
        if (f.path == path && f.role == "rng")
            return f.rank;
    }
    return -1;
}

// Which model parameter each of O's indices is. torch numbers them by position across the param
// groups (torch/optim/optimizer.py state_dict/load_state_dict, pytorch@bf6a61dc): names come, in
// order of trust, from names the checkpoint records (torch >= 2.6 `param_names`, ckpt_writer's
// `optimizer_param_names`), from the probe's param groups by position (what load_state_dict does
// with the probe's optimizer), or from the core's inference. Said in the report, and any
// disagreement said in words before anything runs.
std::map<std::string, std::string> Validation::optimizerNames(const OptimizerPart& o, const json& probeGroups, json& report)
{
    std::map<std::string, std::string> byIndex;
    for (const auto& ps : o.paramState) {
        if (!ps.name.empty())
            byIndex[ps.index] = ps.name;
    }
    const bool recorded = o.nameMapping.starts_with("by name");
    bool probeFits = probeGroups.size() == o.groups.size();
    for (std::size_t gi = 0; probeFits && gi < o.groups.size(); ++gi)
        probeFits = probeGroups[gi].value("params", json::array()).size() == o.groups[gi].params.size();
    if (recorded || !probeFits) {
        report["optimizer_names"] = o.nameMapping.empty() ? std::string("none") : o.nameMapping;
        if (!recorded && !o.nameMapping.starts_with("by order"))
            m_notes.push_back("O's indices were named by inference (" + o.nameMapping + "), and the probe's param "
                              "groups do not have the checkpoint's shape to confirm it");
        return byIndex;
    }
    std::map<std::string, std::string> fromProbe;
    std::vector<std::string> disagree;
    for (std::size_t gi = 0; gi < o.groups.size(); ++gi) {
        for (std::size_t pi = 0; pi < o.groups[gi].params.size(); ++pi) {
            const std::string& index = o.groups[gi].params[pi];
            const std::string name = probeGroups[gi]["params"][pi].get<std::string>();
            fromProbe[index] = name;
            const auto inferred = byIndex.find(index);
            if (inferred != byIndex.end() && inferred->second != name && disagree.size() < 3)
                disagree.push_back("index " + index + ": '" + inferred->second + "' inferred, '" + name + "' in the probe");
        }
    }
    report["optimizer_names"] = "by position in the probe's param groups (the order torch's load_state_dict applies)";
    if (!disagree.empty()) {
        std::string list;
        for (const auto& d : disagree)
            list += (list.empty() ? "" : "; ") + d;
        m_notes.push_back("the core's inference of O's names (" + o.nameMapping + ") disagrees with the probe's "
                          "param groups (" + list + "): the probe's are used");
    }
    return fromProbe;
}

void Validation::optimizer(json& report)
{
    const json& po = m_probe.json["optimizer"];
    m_in.optimizerType = po.value("type", "");
    m_in.torchVersion = m_probe.json.value("torch_version", "");
    if (!m_state.optimizer) {
        m_notes.push_back("the checkpoint has no optimizer state: forward/backward only");
        m_in.optimizerType = "";
        return;
    }
    const OptimizerPart& o = *m_state.optimizer;
    if (!m_in.optimizerType.empty() && !o.type.empty() && o.type != "unknown" && !o.paramState.empty()
        && o.type.find(m_in.optimizerType) == std::string::npos)
        m_notes.push_back("the probe ran " + m_in.optimizerType + " but the checkpoint's state looks like " + o.type);
    const json& probeGroups = po.value("groups", json::array());
    std::map<std::string, std::string> nameOf = optimizerNames(o, probeGroups, report);
    for (std::size_t gi = 0; gi < o.groups.size(); ++gi) {
        OptimizerGroup g;
        for (const auto& f : o.groups[gi].hyperparameters) {
            if (f.name == "betas") {
                const auto b = numbersIn(f.value);
                if (b.size() == 2) {
                    g.hyper["beta1"] = b[0];
                    g.hyper["beta2"] = b[1];
                }
                continue;
            }
            const json v = valueOf(f.value);
            if (v.is_number())
                g.hyper[f.name] = v.get<double>();
            else if (v.is_boolean())
                g.flags[f.name] = v.get<bool>();
        }
        for (const auto& key : o.groups[gi].params) {
            const auto it = nameOf.find(key);
            if (it == nameOf.end())
                throw std::runtime_error(m_opt.checkpoint + ": optimizer parameter " + key + " of param group "
                                         + std::to_string(gi) + " cannot be matched to a model parameter ("
                                         + o.nameMapping + "); the probe's param groups do not say either");
            g.params.push_back(it->second);
        }
        m_in.groups.push_back(std::move(g));
    }
    for (const auto& ps : o.paramState) {
        const auto it = nameOf.find(ps.index);
        if (it == nameOf.end())
            continue;
        ParamOptimizerState s;
        if (ps.step)
            s.step = static_cast<int64_t>(std::llround(*ps.step));
        for (const auto& m : ps.moments) {
            s.moments[m.name] = tensor(m.from);
            checkMomentShape(ps.index, it->second, m.name, s.moments[m.name], report);
        }
        m_in.optimizerState[it->second] = std::move(s);
    }
}

// A moment has its parameter's shape; a mismatch means the names are wrong (or the optimizer was
// built over other parameters), said before LibTorch would fail on a broadcast.
void Validation::checkMomentShape(const std::string& index, const std::string& name, const std::string& moment, const HostTensor& t, const json& report)
{
    if (t.shape.empty())
        return; // 0-d state (NAdam's mu_product)
    const auto w = m_in.weights.find(name);
    if (w == m_in.weights.end() || w->second.shape == t.shape)
        return;
    auto text = [](const std::vector<int64_t>& s) {
        std::string out = "[";
        for (std::size_t i = 0; i < s.size(); ++i)
            out += (i ? ", " : "") + std::to_string(s[i]);
        return out + "]";
    };
    throw std::runtime_error(m_opt.checkpoint + ": O's entry " + index + " was named '" + name + "' ("
                             + report.value("optimizer_names", std::string("?")) + ") but its " + moment + " has shape "
                             + text(t.shape) + " and the parameter " + text(w->second.shape)
                             + ": the optimizer's entries cannot be matched to the model's parameters");
}

void Validation::learningRate()
{
    if (!m_state.scheduler) {
        m_lrSource = "the optimizer's param-group lr (no scheduler in the checkpoint)";
        return;
    }
    const LrSchedule& s = m_state.scheduler->schedule;
    if (!s.recomputable) {
        m_lrSource = "the optimizer's param-group lr (" + s.kind + " cannot be recomputed: " + s.why + ")";
        return;
    }
    const std::vector<double> lrs = s.lrAt(s.lastEpoch);
    m_lrSource = s.kind + " reconstructed at position " + std::to_string(s.lastEpoch) + " (last_epoch)";
    for (std::size_t i = 0; i < m_in.groups.size() && i < lrs.size(); ++i) {
        auto& lr = m_in.groups[i].hyper["lr"];
        if (lr != lrs[i])
            m_notes.push_back("group " + std::to_string(i) + ": the optimizer's lr " + json(lr).dump()
                              + " differs from the scheduler's reconstruction " + json(lrs[i]).dump() + ", which is applied");
        lr = lrs[i];
    }
}

void Validation::scaler()
{
    if (!m_probe.json.value("scale", json()).is_number())
        return; // the probe's run did not scale its loss
    if (m_state.scaler && m_state.scaler->enabled && m_state.scaler->scale) {
        const ScalerPart& a = *m_state.scaler;
        ScalerInput in;
        in.scale = *a.scale;
        in.growthFactor = a.growthFactor.value_or(2.0);
        in.backoffFactor = a.backoffFactor.value_or(0.5);
        in.growthInterval = a.growthInterval.value_or(2000);
        in.growthTracker = a.growthTracker.value_or(0);
        m_in.scaler = in;
    } else {
        m_notes.push_back("the probe's run scaled its loss but the checkpoint has no scaler scale: none applied");
    }
}

// Each recorded update: its micro-batches, and the LR it runs with. Update 1 takes the LR that
// learningRate() settled; update k the scheduler's reconstruction at last_epoch + k - 1, or, when
// the scheduler cannot be recomputed, the LR the probe recorded (and that update's LR check is
// then not compared).
void Validation::updates()
{
    const LrSchedule* schedule = m_state.scheduler && m_state.scheduler->schedule.recomputable ? &m_state.scheduler->schedule : nullptr;
    for (std::size_t k = 0; k < m_records.size(); ++k) {
        const json& r = *m_records[k];
        UpdateInput u;
        for (const auto& mb : r["micro_batches"])
            u.microBatches.push_back({mb.value("rank", 0), readMicroBatch(m_probe, mb)});
        u.gradDivisor = r.value("grad_divisor", 1.0);
        if (r.value("max_grad_norm", json()).is_number())
            u.maxGradNorm = r["max_grad_norm"].get<double>();
        bool fromProbe = false;
        if (k == 0) {
            for (const auto& g : m_in.groups)
                u.lr.push_back(g.hyper.count("lr") ? g.hyper.at("lr") : 0.0);
        } else if (schedule) {
            u.lr = schedule->lrAt(schedule->lastEpoch + static_cast<int64_t>(k));
        } else {
            fromProbe = true;
            for (const auto& v : r.value("lr", json::array()))
                u.lr.push_back(v.get<double>());
        }
        m_lrFromProbe.push_back(fromProbe);
        m_in.updates.push_back(std::move(u));
    }
}

void Validation::generators()
{
    if (!m_state.rng)
        return;
    for (const auto& g : m_state.rng->generators) {
        const int rank = std::max(g.rank, 0);
        const std::string kind = rngKindName(g.state.kind);
        m_rng[rank].emplace(kind, g.state.fingerprint);
        if (g.state.kind == RngKind::TorchCpu && !m_in.cpuGenerator.contains(rank) && g.state.valid)
            m_in.cpuGenerator[rank] = rawBytes(g.file, g.state.key);
        if (g.state.kind == RngKind::TorchCuda && !m_in.cudaGenerator.contains(rank) && g.state.valid) {
            m_in.cudaGenerator[rank] = rawBytes(g.file, g.state.key);
            if (g.state.seed)
                m_in.cudaSeed[rank] = *g.state.seed;
        }
    }
}

json Validation::loadJson(const ReplayResult& res)
{
    json out = json::array();
    for (const auto& i : res.load)
        out.push_back({{"kind", i.kind}, {"key", i.key}, {"detail", i.detail}});
    return out;
}

} // namespace detail

int runValidation(const ValidateOptions& options, const std::function<void(const nlohmann::json&)>& emit)
{
    return detail::Validation(options, emit).run();
}

} // namespace ckpt::validate
