// SPDX-License-Identifier: MIT
#include "scaler_account.h"

#include "rule_support.h"

#include <algorithm>
#include <cmath>

namespace ckpt::rules {

std::optional<int64_t> growthsBetween(double from, double to, double growthFactor, double backoffFactor)
{
    if (!(from > 0) || !(to > 0) || !(growthFactor > 1) || std::fabs(growthFactor * backoffFactor - 1) > 1e-12)
        return std::nullopt;
    const double e = std::log(to / from) / std::log(growthFactor);
    const double rounded = std::round(e);
    if (std::fabs(e - rounded) > 1e-9)
        return std::nullopt;
    return static_cast<int64_t>(rounded);
}

std::string scalerDefect(const ScalerPart& s)
{
    if (!s.enabled)
        return {};
    if (s.scale && !(std::isfinite(*s.scale) && *s.scale > 0))
        return "scale " + numberText(*s.scale) + " is not a positive finite number: every scaled gradient is "
               + (std::isnan(*s.scale) || std::isinf(*s.scale) ? "non-finite" : "zero") + ", so every update is skipped or void";
    if (s.growthTracker && *s.growthTracker < 0)
        return "_growth_tracker " + std::to_string(*s.growthTracker) + " is negative; it counts clean updates";
    return {};
}

ScalerAccount accountScaler(const TrainingState& state)
{
    ScalerAccount a;
    if (!state.scaler)
        return a;
    const ScalerPart& s = *state.scaler;
    a.present = true;
    auto ev = [&](const char* what, const std::string& value, const char* key) {
        Provenance from = s.from;
        from.key.push_back(std::string(key));
        a.evidence.push_back(evidence(what, value, from));
    };
    if (!s.enabled) {
        a.disabled = true;
        a.known = true;
        a.explanation = "the scaler is disabled (empty state): no update is ever skipped";
        a.evidence.push_back(evidence("scaler state", "{} (disabled)", s.from));
        return a;
    }
    if (!s.scale || !state.globalStep || !scalerDefect(s).empty())
        return a;
    for (const auto& part : s.from.key) {
        if (part == KeyPart(std::string("loss_scaler")))
            return a; // DeepSpeed's DynamicLossScaler (hysteresis, min scale): its skips are counted in skipped_steps
    }
    const double scale = *s.scale;
    const double g = s.growthFactor.value_or(2.0), b = s.backoffFactor.value_or(0.5);
    const int64_t interval = s.growthInterval.value_or(2000);
    const int64_t steps = *state.globalStep;
    ev("scale", numberText(scale), "scale");
    if (s.growthTracker)
        ev("_growth_tracker", std::to_string(*s.growthTracker), "_growth_tracker");
    ev("growth_interval", std::to_string(interval), "growth_interval");

    const auto e = growthsBetween(kDefaultInitScale, scale, g, b);
    if (!e)
        return a; // not a power of the growth factor from the default init: another init_scale
    const int64_t maxGrowths = interval > 0 ? steps / interval : steps;
    const int64_t minGrowths = std::max<int64_t>(0, *e);
    if (minGrowths > maxGrowths)
        return a; // more growth than the steps allow from 65536: another init_scale
    const int64_t tracker = s.growthTracker.value_or(-1);
    a.minSkips = minGrowths - *e;
    a.maxSkips = std::min<int64_t>(maxGrowths - *e, steps);
    if (tracker >= 0 && tracker > steps - a.minSkips)
        return a; // the tracker counts more clean updates than 65536 leaves room for: another init_scale
    a.known = true;
    const std::string range = a.minSkips == a.maxSkips ? std::to_string(a.minSkips)
                                                        : std::to_string(a.minSkips) + " to " + std::to_string(a.maxSkips);
    a.explanation = "if GradScaler started at its default init_scale 65536, scale " + numberText(scale) + " = 65536 × "
                  + numberText(b) + "^" + std::to_string(-*e + minGrowths)
                  + (minGrowths ? " × " + numberText(g) + "^" + std::to_string(minGrowths) : "") + "; with at most "
                  + std::to_string(maxGrowths) + " growth(s) possible in " + std::to_string(steps) + " steps (one per "
                  + std::to_string(interval) + " clean steps), " + range + " update(s) were skipped by overflows";
    return a;
}

} // namespace ckpt::rules
