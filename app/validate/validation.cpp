// SPDX-License-Identifier: MIT
// GCC 12 reports nlohmann::json temporaries as maybe-uninitialized (a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "app/validate/validation.h"

#include "app/validate/comparison.h"
#include "app/validate/environment_check.h"
#include "app/validate/probe.h"
#include "app/validate/replay.h"
#include "ckpt/formats/tensor_bytes.h"
#include "ckpt/state/training_state.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace ckpt::validate {
namespace {

// 1-6 read and prepare (environment, W, O, L, A, R), 7-8 the module and W load and O restored, then
// one step per recorded update, then the comparison: 10 steps for one update, 9 + K for K.
constexpr int kStepsBeforeUpdates = 8;

using json = nlohmann::json;

// A field's text as JSON: numbers as numbers, true/false as booleans, anything else as a string.
json valueOf(const std::string& text)
{
    if (text == "true" || text == "True")
        return true;
    if (text == "false" || text == "False")
        return false;
    try {
        std::size_t used = 0;
        const double d = std::stod(text, &used);
        if (used == text.size())
            return d;
    } catch (const std::exception&) {
    }
    return text;
}

std::vector<double> numbersIn(const std::string& text)
{
    std::vector<double> out;
    std::string token;
    for (char c : text + ",") {
        if (c == '[' || c == ']' || c == '(' || c == ')' || c == ' ')
            continue;
        if (c == ',') {
            if (!token.empty())
                out.push_back(std::stod(token));
            token.clear();
        } else {
            token += c;
        }
    }
    return out;
}

class Validation {
public:
    Validation(const ValidateOptions& options, const std::function<void(const json&)>& emit) : m_opt(options), m_emit(emit) {}

    int run()
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

private:
    int steps() const { return kStepsBeforeUpdates + std::max<int>(1, static_cast<int>(m_records.size())) + 1; }

    void progress(int index, const std::string& stage, const std::string& message)
    {
        m_emit({{"event", "progress"}, {"stage", stage}, {"index", index}, {"of", steps()}, {"message", message}});
    }

    int finish(json& report, int code, const std::string& error)
    {
        report["exit_code"] = code;
        report["verdict"] = code == kPass ? "pass" : code == kDiffers ? "differs" : code == kPartial ? "partial" : "cannot run";
        if (!error.empty())
            report["error"] = error;
        report["notes"] = m_notes;
        m_emit(report);
        return code;
    }

    const CheckpointFile& file(const std::string& path)
    {
        auto& slot = m_files[path];
        if (!slot)
            slot = CheckpointFile::open(path);
        return *slot;
    }

    HostTensor tensor(const Provenance& from)
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

    std::vector<std::byte> rawBytes(const std::string& path, const KeyPath& key)
    {
        const CheckpointFile& f = file(path);
        const TensorInfo* t = tensorAt(f, key);
        return t ? contiguousTensorBytes(f, *t) : std::vector<std::byte>{};
    }

    // -- the six preparation steps --------------------------------------------------------------

    void prepare(json& report)
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

    const StateField* field(const std::vector<StateField>& fields, const std::string& name, int rank = -2)
    {
        for (const auto& f : fields) {
            if (f.name == name && (rank == -2 || rankOfFile(f.from.file) == rank))
                return &f;
        }
        return nullptr;
    }

    int rankOfFile(const std::string& path) const
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
    std::map<std::string, std::string> optimizerNames(const OptimizerPart& o, const json& probeGroups, json& report)
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

    void optimizer(json& report)
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
    void checkMomentShape(const std::string& index, const std::string& name, const std::string& moment, const HostTensor& t,
                          const json& report)
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

    void learningRate()
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

    void scaler()
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
    void updates()
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

    void generators()
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

    // -- step 10: the comparison, update by update ------------------------------------------------

    int compare(json& report, const ReplayResult& res)
    {
        json gaps = json::array(), later = json::array();
        std::string first;
        int firstUpdate = 0;
        for (m_k = 0; m_k < m_records.size() && m_k < res.updates.size(); ++m_k) {
            const UpdateResult& u = res.updates[m_k];
            std::vector<Component> components = {batch(u), parameters(u), optimizerComponent(res, u), lrComponent(),
                                                  scalerComponent(u), rngComponent(res, u), numerics(res, u)};
            json out = json::array();
            std::string firstHere;
            for (const auto& c : components) {
                out.push_back(toJson(c));
                if (firstHere.empty() && c.verdict() == Verdict::Differs)
                    firstHere = c.name;
                for (const auto& ch : c.checks) {
                    if (ch.gap)
                        gaps.push_back({{"update", m_k + 1}, {"component", c.name}, {"check", ch.name}, {"why", ch.detail}});
                }
            }
            if (first.empty() && !firstHere.empty()) {
                first = firstHere;
                firstUpdate = static_cast<int>(m_k) + 1;
            }
            if (m_k == 0) {
                report["components"] = out;
            } else {
                later.push_back({{"update", m_k + 1}, {"global_step_before", rec().value("global_step_before", json())},
                                 {"components", out}, {"first_difference", firstHere.empty() ? json() : json(firstHere)}});
            }
        }
        report["updates_compared"] = res.updates.size();
        if (!later.empty())
            report["updates"] = later;
        report["first_difference"] = first.empty() ? json() : json(first);
        report["first_difference_update"] = first.empty() ? json() : json(firstUpdate);
        report["not_compared"] = gaps;
        report["lr_source"] = m_lrSource;
        for (const auto& n : res.notes)
            m_notes.push_back(n);
        if (firstUpdate > 1)
            m_notes.push_back("update 1 matches and update " + std::to_string(firstUpdate) + " differs first ('" + first
                              + "'): the drift comes from what happens between updates (random numbers drawn outside "
                                "the update, a scheduler or scaler stepped differently, an accumulation boundary)");
        if (!first.empty() && first != "numerics")
            m_notes.push_back("differences after '" + first + "' follow from it: the guide's order checks the "
                              "inputs of the update before its results");
        return finish(report, !first.empty() ? kDiffers : gaps.empty() ? kPass : kPartial, {});
    }

    std::string updateLabel() const
    {
        return m_records.size() > 1 ? " (update " + std::to_string(m_k + 1) + ")" : std::string();
    }

    Component batch(const UpdateResult& res)
    {
        Component c{"batch", "Is the next batch the same? (data cursor, batch tensors)"};
        if (m_k == 0) { // the checkpoint's cursor says where update 1 reads; later updates read on from there
            const json cursor = rec().value("cursor", json::object());
            for (const auto& [k, v] : cursor.items()) {
                const StateField* f = field(m_state.data, k);
                f = f ? f : field(m_state.progress, k);
                if (!f) {
                    c.checks.push_back(notCompared("cursor " + k, "the checkpoint has no '" + k + "'"));
                    continue;
                }
                c.checks.push_back(compareEqual("cursor " + k, valueOf(f->value), v,
                                                "the checkpoint's " + k + " is " + f->value + ", the probe's batch was taken at "
                                                    + v.dump()));
            }
            for (const auto& r : rec()["ranks"]) {
                const int rank = r.value("rank", 0);
                const json rankCursor = r.value("cursor", json::object());
                for (const auto& [k, v] : rankCursor.items()) {
                    const StateField* f = field(m_state.data, k, rank);
                    if (f)
                        c.checks.push_back(compareEqual("rank " + std::to_string(rank) + " " + k, valueOf(f->value), v));
                }
            }
        }
        std::map<std::string, TensorDigest> got;
        std::map<std::string, json> want;
        for (std::size_t i = 0; i < res.inputs.size(); ++i) {
            const json& recorded = rec()["micro_batches"][i].value("inputs", json::array());
            for (std::size_t j = 0; j < res.inputs[i].size(); ++j) {
                const std::string name = "micro-batch " + std::to_string(i) + " input " + std::to_string(j);
                got[name] = res.inputs[i][j];
                if (j < recorded.size())
                    want[name] = recorded[j];
            }
        }
        if (!want.empty())
            c.checks.push_back(compareDigests("batch tensors (probe files against probe.json)", got, want, 0));
        return c;
    }

    std::map<std::string, json> probeDigests(const char* section, const char* phase)
    {
        std::map<std::string, json> out;
        const json entries = rec().value(section, json::object());
        for (const auto& [name, entry] : entries.items())
            out[name] = entry.value(phase, json());
        return out;
    }

    Component parameters(const UpdateResult& res)
    {
        Component c{"parameters", m_k == 0 ? "Are the model parameters the same? (W as restored against W before the update)"
                                            : "Are the model parameters the same? (W as the replay left it against W before this update)"};
        // Update 1 starts from W as restored: bitwise. Later updates start from the replay's own results,
        // which agree within tolerance where the device's arithmetic differs (another device, DDP's sum).
        c.checks.push_back(compareDigests("parameters before the update", res.paramsBefore, probeDigests("parameters", "before"),
                                          m_k == 0 ? 0 : m_opt.rtol));
        return c;
    }

    // Moment digests of one phase, flattened to "param/moment"; step counts separately.
    void probeOptimizerState(const char* phase, std::map<std::string, json>& moments, json& steps)
    {
        const json entries = rec().value("optimizer_state", json::object());
        for (const auto& [name, entry] : entries.items()) {
            const json& st = entry.value(phase, json::object());
            steps[name] = st.value("step", json());
            for (const auto& [k, v] : st.items()) {
                if (v.is_object() && v.contains("sha256"))
                    moments[name + "/" + k] = v;
            }
        }
    }

    static std::map<std::string, TensorDigest> flatten(const std::map<std::string, std::map<std::string, TensorDigest>>& m)
    {
        std::map<std::string, TensorDigest> out;
        for (const auto& [name, moments] : m)
            for (const auto& [k, d] : moments)
                out[name + "/" + k] = d;
        return out;
    }

    static json stepsJson(const std::map<std::string, int64_t>& steps, const json& names)
    {
        json out = json::object();
        for (const auto& [name, _] : names.items())
            out[name] = steps.contains(name) ? json(static_cast<double>(steps.at(name))) : json();
        return out;
    }

    Component optimizerComponent(const ReplayResult& all, const UpdateResult& res)
    {
        Component c{"optimizer", "Are the optimizer's step count and state the same? (O)"};
        const json step = m_state.globalStep ? json(*m_state.globalStep + static_cast<int64_t>(m_k)) : json();
        c.checks.push_back(compareEqual("global step", step, rec().value("global_step_before", json())));
        if (all.optimizerMode != "step") {
            c.checks.push_back(notCompared("optimizer state", all.optimizerMode));
            return c;
        }
        std::map<std::string, json> moments;
        json steps = json::object();
        probeOptimizerState("before", moments, steps);
        const json mine = stepsJson(res.stepBefore, steps);
        std::string firstDiff;
        for (const auto& [name, v] : steps.items()) {
            if (firstDiff.empty() && mine[name] != v)
                firstDiff = name + ": checkpoint " + mine[name].dump() + ", probe " + v.dump()
                          + (v.is_null() ? " (the probe's optimizer had no state: a fresh optimizer)" : "");
        }
        c.checks.push_back(compareEqual("per-parameter step", mine, steps, firstDiff));
        c.checks.push_back(compareDigests("moments before the update", flatten(res.momentsBefore), moments, m_k == 0 ? 0 : m_opt.rtol));
        const json& groups = rec()["optimizer"].value("groups", json::array());
        for (std::size_t i = 0; i < m_in.groups.size() && i < groups.size(); ++i) {
            json mineH = json::object(), theirs = json::object();
            for (const auto& [k, v] : m_in.groups[i].hyper) {
                if (k == "lr" || k == "initial_lr")
                    continue;
                mineH[k] = v;
                if (k == "beta1" || k == "beta2")
                    theirs[k] = groups[i].value("betas", json::array()).size() == 2 ? groups[i]["betas"][k == "beta1" ? 0 : 1] : json();
                else
                    theirs[k] = groups[i].value(k, json());
            }
            c.checks.push_back(compareEqual("group " + std::to_string(i) + " hyperparameters", mineH, theirs));
        }
        return c;
    }

    Component lrComponent()
    {
        Component c{"lr_scheduler", "Is the learning rate the same, and does the scheduler count updates? (L)"};
        const json& lrs = rec()["lr"];
        const UpdateInput& u = m_in.updates[m_k];
        for (std::size_t i = 0; i < u.lr.size() && i < lrs.size(); ++i) {
            const std::string name = "group " + std::to_string(i) + " lr";
            if (m_lrFromProbe[m_k]) {
                c.checks.push_back(notCompared(name, "the scheduler cannot be recomputed from the checkpoint (" + m_lrSource
                                                         + "): this update ran with the probe's LR"));
                continue;
            }
            Check ch = compareNumber(name, u.lr[i], lrs[i].get<double>(), 1e-12);
            ch.detail = m_k == 0 ? "applied: " + m_lrSource : "applied: the reconstruction " + std::to_string(m_k) + " step(s) on";
            c.checks.push_back(ch);
        }
        const json& sched = rec().value("scheduler", json::object());
        if (!m_state.scheduler && sched.value("last_epoch_before", json()).is_number()) {
            c.checks.push_back({"scheduler state", Verdict::Differs,
                                "the probe's run stepped a scheduler (at position " + sched["last_epoch_before"].dump()
                                    + ") but the checkpoint has no scheduler state: a resume rebuilds it from scratch"});
        }
        if (m_state.scheduler && sched.value("last_epoch_after", json()).is_number()) {
            const int64_t pos = m_state.scheduler->schedule.lastEpoch + static_cast<int64_t>(m_k);
            c.checks.push_back(compareEqual("scheduler position before the update", pos, sched.value("last_epoch_before", json())));
            c.checks.push_back(compareEqual("scheduler position after the update", pos + 1, sched["last_epoch_after"],
                                            "one update moves the scheduler from " + std::to_string(pos) + " to "
                                                + std::to_string(pos + 1) + "; the probe's run ended at "
                                                + sched["last_epoch_after"].dump() + " (stepped "
                                                + json(sched["last_epoch_after"].get<int64_t>() - pos).dump() + " times)"));
        }
        return c;
    }

    Component scalerComponent(const UpdateResult& res)
    {
        Component c{"scaler", "Is the AMP grad scaler the same? (A)"};
        const json scale = rec().value("scale", json());
        if (!scale.is_number()) {
            c.checks.push_back({"scale", Verdict::NotCompared, "the probe's run applied no loss scaling"});
            return c;
        }
        const json& ps = rec().value("scaler", json::object());
        if (m_k == 0) {
            const ScalarOr s = scalerValues();
            c.checks.push_back(compareEqual("scale", s.scale, scale));
            if (ps.is_object() && ps.contains("_growth_tracker"))
                c.checks.push_back(compareEqual("growth tracker", s.tracker, ps["_growth_tracker"]));
            return c;
        }
        // from update 2 on: the scale GradScaler.update() left after the replayed updates
        c.checks.push_back(compareEqual("scale", res.scale ? json(*res.scale) : json(), scale,
                                        "GradScaler.update() after the replayed updates gives " + (res.scale ? json(*res.scale).dump() : std::string("none"))
                                            + ", the probe's run had " + scale.dump()));
        if (ps.is_object() && ps.contains("_growth_tracker"))
            c.checks.push_back(compareEqual("growth tracker", res.growthTrackerBefore, ps["_growth_tracker"]));
        return c;
    }

    struct ScalarOr {
        json scale, tracker;
    };
    ScalarOr scalerValues() const
    {
        if (!m_state.scaler)
            return {};
        const ScalerPart& s = *m_state.scaler;
        return {s.scale ? json(*s.scale) : json(), s.growthTracker ? json(*s.growthTracker) : json()};
    }

    Component rngComponent(const ReplayResult& all, const UpdateResult& res)
    {
        Component c{"rng", "Are the RNG states the same, before and after the update? (R)"};
        const std::string probeDevice = m_probe.json.value("device", "cpu");
        const bool crossDevice = probeDevice.substr(0, 4) != all.device.substr(0, 4); // cpu vs cuda
        for (const auto& r : rec()["ranks"]) {
            const int rank = r.value("rank", 0);
            const std::string who = "rank " + std::to_string(rank) + " ";
            const auto states = readProbeRng(m_probe, r.value("rng_file", ""));
            const auto before = states.find("before");
            if (before != states.end() && m_k == 0) {
                for (const auto& [kind, s] : before->second) {
                    const auto mine = m_rng[rank].find(kind);
                    const json ours = mine == m_rng[rank].end() ? json() : json(mine->second);
                    c.checks.push_back(compareEqual(who + kind + " before", ours, s.fingerprint,
                                                    ours.is_null() ? "the checkpoint has no " + kind + " state for this rank"
                                                                   : "fingerprint " + ours.get<std::string>() + " in the checkpoint, "
                                                                         + s.fingerprint + " when the probe's update began"));
                }
            } else if (before != states.end() && !crossDevice && before->second.contains("torch_cpu")) {
                // from update 2 on: the CPU generator as the replay left it after the previous update
                const auto replayed = res.cpuGeneratorBefore.find(rank);
                const auto decoded = replayed == res.cpuGeneratorBefore.end() ? std::nullopt : decodeTorchCpuBytes(replayed->second);
                c.checks.push_back(compareEqual(who + "torch_cpu before", decoded ? json(decoded->fingerprint) : json(),
                                                before->second.at("torch_cpu").fingerprint,
                                                "the run drew random numbers between the previous update and this one "
                                                "(evaluation, data augmentation outside the module?), which the replay does not"));
            }
            const auto after = states.find("after");
            const auto replayed = res.cpuGeneratorAfter.find(rank);
            if (crossDevice) {
                c.checks.push_back(notCompared(who + "torch_cpu after", "the probe's random ops drew from the " + probeDevice
                                                                            + " generator, the replay's from " + all.device + "'s"));
            } else if (after != states.end() && after->second.contains("torch_cpu") && replayed != res.cpuGeneratorAfter.end()) {
                const auto decoded = decodeTorchCpuBytes(replayed->second);
                c.checks.push_back(compareEqual(who + "torch_cpu after", decoded ? json(decoded->fingerprint) : json(),
                                                after->second.at("torch_cpu").fingerprint,
                                                "the replay's CPU generator ended elsewhere than the probe's: the update drew "
                                                "different random numbers"));
            }
        }
        c.checks.push_back({"python/numpy after", Verdict::NotCompared,
                            "drawn by the data pipeline outside the module: not replayed (their states before are compared)"});
        if (crossDevice && m_k == 0)
            m_notes.push_back("the probe ran on " + probeDevice + " and the replay on " + all.device
                              + ": random ops (dropout) draw from another generator, so their masks and the results "
                                "that depend on them differ");
        return c;
    }

    Component numerics(const ReplayResult& all, const UpdateResult& res)
    {
        Component c{"numerics", "Do the update's results agree? (loss, gradient norm, parameters and moments after: "
                                "device numerics when every input above is the same)"};
        const json& mbs = rec()["micro_batches"];
        double sum = 0;
        for (std::size_t i = 0; i < res.losses.size() && i < mbs.size(); ++i) {
            c.checks.push_back(compareNumber("loss, micro-batch " + std::to_string(i) + " (rank " + std::to_string(mbs[i].value("rank", 0)) + ")",
                                             res.losses[i], mbs[i].value("loss", 0.0), m_opt.rtol));
            sum += res.losses[i];
        }
        if (rec().value("loss", json()).is_number() && !res.losses.empty())
            c.checks.push_back(compareNumber("loss (mean)", sum / static_cast<double>(res.losses.size()), rec()["loss"].get<double>(), m_opt.rtol));
        if (rec().value("grad_norm", json()).is_number() && res.gradNorm)
            c.checks.push_back(compareNumber("gradient norm", *res.gradNorm, rec()["grad_norm"].get<double>(), m_opt.rtol));
        c.checks.push_back(compareEqual("overflow (found inf)", res.foundInf, rec().value("found_inf", false)));
        if (all.optimizerMode != "step") {
            c.checks.push_back(notCompared("parameters after the update", all.optimizerMode));
            return c;
        }
        c.checks.push_back(compareDigests("parameters after the update", res.paramsAfter, probeDigests("parameters", "after"), m_opt.rtol));
        std::map<std::string, json> moments;
        json steps = json::object();
        probeOptimizerState("after", moments, steps);
        c.checks.push_back(compareDigests("moments after the update", flatten(res.momentsAfter), moments, m_opt.rtol));
        c.checks.push_back(compareEqual("per-parameter step after the update", stepsJson(res.stepAfter, steps), steps));
        return c;
    }

    static json loadJson(const ReplayResult& res)
    {
        json out = json::array();
        for (const auto& i : res.load)
            out.push_back({{"kind", i.kind}, {"key", i.key}, {"detail", i.detail}});
        return out;
    }

    const ValidateOptions& m_opt;
    const std::function<void(const json&)>& m_emit;
    TrainingState m_state;
    Probe m_probe;
    ReplayInput m_in;
    std::map<std::string, std::unique_ptr<CheckpointFile>> m_files;
    std::map<int, std::map<std::string, std::string>> m_rng; // rank -> kind -> fingerprint (checkpoint)
    std::string m_lrSource;
    std::vector<std::string> m_notes;
    std::vector<const json*> m_records; // the probe's updates: probe.json itself, then its next_updates
    std::vector<bool> m_lrFromProbe;    // per update: the LR applied is the probe's (not reconstructable)
    std::size_t m_k = 0;                // the update being compared
    const json& rec() const { return *m_records[m_k]; }
};

} // namespace

int runValidation(const ValidateOptions& options, const std::function<void(const nlohmann::json&)>& emit)
{
    return Validation(options, emit).run();
}

} // namespace ckpt::validate
