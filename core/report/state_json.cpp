// SPDX-License-Identifier: MIT
#include "ckpt/report/state_json.h"

#include "ckpt/report/json_export.h"

#include <cmath>

namespace ckpt {
namespace {

using nlohmann::json;

json provenance(const Provenance& p) { return {{"file", p.file}, {"key", keyPathToJson(p.key)}}; }

template<typename T>
json optional(const std::optional<T>& v)
{
    if (!v)
        return nullptr;
    if constexpr (std::is_floating_point_v<T>)
        return jsonNumber(*v);
    else
        return *v;
}

// A field's value as JSON: numbers stay numbers, everything else text.
json fieldValue(const std::string& text)
{
    if (text == "True")
        return true;
    if (text == "False")
        return false;
    if (text == "None")
        return nullptr;
    try {
        std::size_t used = 0;
        const long long i = std::stoll(text, &used);
        if (used == text.size())
            return i;
        const double d = std::stod(text, &used);
        if (used == text.size())
            return jsonNumber(d);
    } catch (const std::exception&) {
    }
    return text;
}

json fields(const std::vector<StateField>& list)
{
    json out = json::array();
    for (const auto& f : list)
        out.push_back({{"name", f.name}, {"value", fieldValue(f.value)}, {"source", provenance(f.from)}});
    return out;
}

// {"global_step": 1200, ..., "fields": [...]}: the first value of each name at top level.
json namedFields(const std::vector<StateField>& list)
{
    json out = json::object();
    for (const auto& f : list) {
        if (!out.contains(f.name))
            out[f.name] = fieldValue(f.value);
    }
    out["fields"] = fields(list);
    return out;
}

json modelJson(const ModelPart& m)
{
    json params = json::array();
    int64_t total = 0;
    for (const auto& p : m.parameters) {
        params.push_back({{"name", p.name}, {"dtype", p.dtype}, {"shape", p.shape}, {"numel", p.numel},
                          {"source", provenance(p.from)}});
        total += p.numel;
    }
    return {{"source", provenance(m.from)}, {"count", m.parameters.size()}, {"numel", total}, {"parameters", params}};
}

json optimizerJson(const OptimizerPart& o)
{
    json groups = json::array();
    for (std::size_t i = 0; i < o.groups.size(); ++i) {
        json hp = json::object();
        for (const auto& f : o.groups[i].hyperparameters)
            hp[f.name] = fieldValue(f.value);
        groups.push_back({{"index", i}, {"hyperparameters", hp}, {"params", o.groups[i].params}});
    }
    json states = json::array();
    for (const auto& ps : o.paramState) {
        json moments = json::object();
        for (const auto& m : ps.moments)
            moments[m.name] = {{"dtype", m.dtype}, {"shape", m.shape}, {"source", provenance(m.from)}};
        json entry = {{"index", ps.index}, {"name", ps.name.empty() ? json(nullptr) : json(ps.name)},
                      {"group", ps.group}, {"step", optional(ps.step)}, {"moments", moments}};
        if (ps.rank >= 0 || ps.fragmentStart) { // a ZeRO partition's fragment: where it lies on which rank
            entry["rank"] = ps.rank < 0 ? json(nullptr) : json(ps.rank);
            entry["fragment"] = ps.fragmentStart ? json{{"start", *ps.fragmentStart}, {"numel", ps.fragmentNumel.value_or(0)}} : json(nullptr);
        }
        states.push_back(std::move(entry));
    }
    return {{"type", o.type}, {"name_mapping", o.nameMapping}, {"source", provenance(o.from)},
            {"param_groups", groups}, {"param_state", states}};
}

json schedulerJson(const SchedulerPart& s)
{
    const LrSchedule& l = s.schedule;
    json fieldsJson = json::object();
    for (const auto& [k, v] : l.fields)
        fieldsJson[k] = fieldValue(v);
    json j = {{"kind", l.kind}, {"recomputable", l.recomputable}, {"last_epoch", l.lastEpoch},
              {"step_count", l.stepCount < 0 ? json(nullptr) : json(l.stepCount)}, {"base_lrs", l.baseLrs},
              {"last_lr", l.lastLr}, {"fields", fieldsJson}, {"source", provenance(s.from)}};
    if (!l.recomputable)
        j["why"] = l.why;
    if (l.recomputable) {
        try {
            j["lr_at_last_epoch"] = l.lrAt(l.lastEpoch);
            j["lr_next"] = l.lrAt(l.lastEpoch + 1);
        } catch (const std::exception& e) {
            j["why"] = e.what();
        }
    }
    return j;
}

json scalerJson(const ScalerPart& s)
{
    return {{"enabled", s.enabled}, {"scale", optional(s.scale)}, {"growth_factor", optional(s.growthFactor)},
            {"backoff_factor", optional(s.backoffFactor)}, {"growth_interval", optional(s.growthInterval)},
            {"growth_tracker", optional(s.growthTracker)}, {"source", provenance(s.from)}};
}

json rngJson(const RngPart& r)
{
    json gens = json::array();
    for (const auto& g : r.generators) {
        const RngState& s = g.state;
        gens.push_back({{"kind", rngKindName(s.kind)}, {"rank", g.rank < 0 ? json(nullptr) : json(g.rank)},
                        {"fingerprint", s.fingerprint}, {"valid", s.valid},
                        {"problem", s.problem.empty() ? json(nullptr) : json(s.problem)}, {"seed", optional(s.seed)},
                        {"offset", optional(s.offset)}, {"position", optional(s.position)},
                        {"source", {{"file", g.file}, {"key", keyPathToJson(s.key)}}}});
    }
    return {{"generators", gens}};
}

} // namespace

nlohmann::json trainingStateToJson(const TrainingState& s)
{
    json files = json::array();
    for (const auto& f : s.layout.files)
        files.push_back({{"path", f.path}, {"role", f.role}, {"rank", f.rank < 0 ? json(nullptr) : json(f.rank)}});
    json progress = namedFields(s.progress);
    progress["global_step"] = s.globalStep ? json(*s.globalStep) : json(nullptr);
    return {
        {"path", s.path},
        {"format", layoutName(s.layout.layout)},
        {"layout", layoutName(s.layout.layout)},
        {"recognised_by", s.layout.recognisedBy.empty() ? json(nullptr) : json(s.layout.recognisedBy)},
        {"complete", s.layout.complete},
        {"incomplete_reason", s.layout.incompleteReason.empty() ? json(nullptr) : json(s.layout.incompleteReason)},
        {"files", files},
        {"model", s.model ? modelJson(*s.model) : json(nullptr)},
        {"optimizer", s.optimizer ? optimizerJson(*s.optimizer) : json(nullptr)},
        {"scheduler", s.scheduler ? schedulerJson(*s.scheduler) : json(nullptr)},
        {"scaler", s.scaler ? scalerJson(*s.scaler) : json(nullptr)},
        {"rng", s.rng ? rngJson(*s.rng) : json(nullptr)},
        {"data", s.data.empty() ? json(nullptr) : namedFields(s.data)},
        {"progress", progress},
        {"environment", s.environment.empty() ? json(nullptr) : namedFields(s.environment)},
        {"warnings", s.warnings},
    };
}

nlohmann::json runHistoryToJson(const RunHistory& h)
{
    json checkpoints = json::array();
    for (const auto& c : h.checkpoints) {
        checkpoints.push_back({{"path", c.path}, {"step", c.step ? json(*c.step) : json(nullptr)}, {"complete", c.complete},
                               {"latest", c.latest}, {"best", c.best}, {"layout", layoutName(c.layout)},
                               {"incomplete_reason", c.incompleteReason.empty() ? json(nullptr) : json(c.incompleteReason)}});
    }
    json series = json::object();
    for (const auto& [name, points] : h.series) {
        json arr = json::array();
        for (const auto& [step, value] : points)
            arr.push_back(json::array({step, jsonNumber(value)}));
        series[name] = std::move(arr);
    }
    return {{"path", h.path}, {"checkpoints", checkpoints}, {"series", series},
            {"latest_from", h.latestFrom}, {"best_from", h.bestFrom}, {"warnings", h.warnings}};
}

} // namespace ckpt
