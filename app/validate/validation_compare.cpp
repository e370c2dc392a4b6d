// SPDX-License-Identifier: MIT
// The comparison with the probe: per update, the components in the recovery guide's diagnosis order
// (batch, parameters, optimizer, LR and scheduler, scaler, RNG, numerics), each check exact, within
// tolerance, differs, or not compared (a gap makes the verdict partial).
// GCC 12 reports nlohmann::json temporaries as maybe-uninitialized (a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "app/validate/validation_run.h"

#include <cmath>

namespace ckpt::validate::detail {

int Validation::compare(json& report, const ReplayResult& res)
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

Component Validation::batch(const UpdateResult& res)
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

std::map<std::string, json> Validation::probeDigests(const char* section, const char* phase)
{
    std::map<std::string, json> out;
    const json entries = rec().value(section, json::object());
    for (const auto& [name, entry] : entries.items())
        out[name] = entry.value(phase, json());
    return out;
}

Component Validation::parameters(const UpdateResult& res)
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
void Validation::probeOptimizerState(const char* phase, std::map<std::string, json>& moments, json& steps)
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

std::map<std::string, TensorDigest> Validation::flatten(const std::map<std::string, std::map<std::string, TensorDigest>>& m)
{
    std::map<std::string, TensorDigest> out;
    for (const auto& [name, moments] : m)
        for (const auto& [k, d] : moments)
            out[name + "/" + k] = d;
    return out;
}

json Validation::stepsJson(const std::map<std::string, int64_t>& steps, const json& names)
{
    json out = json::object();
    for (const auto& [name, _] : names.items())
        out[name] = steps.contains(name) ? json(static_cast<double>(steps.at(name))) : json();
    return out;
}

Component Validation::optimizerComponent(const ReplayResult& all, const UpdateResult& res)
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

Component Validation::lrComponent()
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

Component Validation::scalerComponent(const UpdateResult& res)
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

Validation::ScalarOr Validation::scalerValues() const
{
    if (!m_state.scaler)
        return {};
    const ScalerPart& s = *m_state.scaler;
    return {s.scale ? json(*s.scale) : json(), s.growthTracker ? json(*s.growthTracker) : json()};
}

Component Validation::rngComponent(const ReplayResult& all, const UpdateResult& res)
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

Component Validation::numerics(const ReplayResult& all, const UpdateResult& res)
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

} // namespace ckpt::validate::detail
