// SPDX-License-Identifier: MIT
#include "ckpt/state/state_summary.h"

#include "ckpt/state/rng_state.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace ckpt {
namespace {

std::string number(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string fieldsText(const std::vector<StateField>& fields, std::size_t limit)
{
    std::string out;
    for (std::size_t i = 0; i < fields.size() && i < limit; ++i)
        out += (out.empty() ? "" : ", ") + fields[i].name + "=" + fields[i].value;
    if (fields.size() > limit)
        out += ", +" + std::to_string(fields.size() - limit) + " more";
    return out;
}

} // namespace

StateSummary summarizeState(const TrainingState& s, bool withLrCurve)
{
    StateSummary out;
    out.path = s.path;
    out.step = s.globalStep;
    auto& p = out.parts;
    if (s.model) {
        int64_t numel = 0;
        for (const auto& e : s.model->parameters)
            numel += e.numel;
        p.emplace_back("W", std::to_string(s.model->parameters.size()) + " tensors, " + std::to_string(numel) + " elements");
    } else {
        p.emplace_back("W", "not in this checkpoint");
    }
    if (s.optimizer) {
        const OptimizerPart& o = *s.optimizer;
        std::optional<double> step;
        for (const auto& ps : o.paramState)
            step = step ? step : ps.step;
        p.emplace_back("O", o.type + ", " + std::to_string(o.groups.size()) + " group(s), " + std::to_string(o.paramState.size())
                                + " parameter state(s)" + (step ? ", step " + number(*step) : std::string()));
    } else {
        p.emplace_back("O", "not in this checkpoint");
    }
    if (s.scheduler) {
        const LrSchedule& l = s.scheduler->schedule;
        p.emplace_back("L", l.kind + ", last_epoch " + std::to_string(l.lastEpoch)
                                + (l.lastLr.empty() ? std::string() : ", lr " + number(l.lastLr.front()))
                                + (l.recomputable ? "" : " (not recomputable)"));
    } else {
        p.emplace_back("L", "not in this checkpoint");
    }
    if (withLrCurve && s.scheduler && s.scheduler->schedule.recomputable && s.scheduler->schedule.lastEpoch >= 0) {
        try {
            const LrSchedule& l = s.scheduler->schedule;
            const auto series = l.lrSeries(0, l.lastEpoch);
            const std::size_t stride = std::max<std::size_t>(1, series.size() / 2048);
            for (std::size_t p = 0; p < series.size(); p += stride) {
                if (!series[p].empty())
                    out.lrCurve.emplace_back(static_cast<int64_t>(p), series[p].front());
            }
        } catch (const std::exception&) {
            // a schedule whose replay fails has no curve; its summary line still says what it is
        }
    }
    if (s.scaler) {
        const ScalerPart& a = *s.scaler;
        p.emplace_back("A", !a.enabled ? std::string("disabled")
                                       : "scale " + (a.scale ? number(*a.scale) : std::string("?"))
                                             + (a.growthTracker ? ", growth tracker " + std::to_string(*a.growthTracker) : std::string()));
    } else {
        p.emplace_back("A", "not in this checkpoint");
    }
    if (s.rng) {
        std::set<int> ranks;
        const RngPart::Generator* cpu = nullptr;
        for (const auto& g : s.rng->generators) {
            ranks.insert(g.rank);
            if (g.state.kind == RngKind::TorchCpu && (!cpu || (g.rank >= 0 && (cpu->rank < 0 || g.rank < cpu->rank))))
                cpu = &g;
        }
        out.rngFingerprint = cpu ? cpu->state.fingerprint : std::string();
        p.emplace_back("R", std::to_string(s.rng->generators.size()) + " generator state(s) over " + std::to_string(ranks.size())
                                + " rank(s)" + (cpu ? ", torch CPU " + cpu->state.fingerprint : std::string()));
    } else {
        p.emplace_back("R", "not in this checkpoint");
    }
    p.emplace_back("D", s.data.empty() ? std::string("not in this checkpoint") : fieldsText(s.data, 4));
    p.emplace_back("C", s.progress.empty() ? std::string("not in this checkpoint") : fieldsText(s.progress, 4));
    p.emplace_back("E", s.environment.empty() ? std::string("not recorded") : fieldsText(s.environment, 4));
    return out;
}

} // namespace ckpt
