// SPDX-License-Identifier: MIT
// The AMP scaler across a pair (recovery guide §3.2): B's scale must be reachable from A's in the
// steps between them: each growth needs growth_interval clean steps in a row, each backoff is a
// skipped update. A scale back at GradScaler's initial 65536 too soon is a scaler that was not
// restored on resume.
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"
#include "scaler_account.h"

namespace ckpt::rules {
namespace {

Provenance keyed(const Provenance& base, const char* key)
{
    Provenance p = base;
    p.key.push_back(std::string(key));
    return p;
}

} // namespace

void scalerPairRules(const CheckpointFacts& ca, const CheckpointFacts& cb, Findings& out)
{
    const TrainingState& a = ca.state;
    const TrainingState& b = cb.state;
    if (!a.scaler || !b.scaler || !a.scaler->scale || !b.scaler->scale || !a.globalStep || !b.globalStep)
        return;
    const int64_t dG = *b.globalStep - *a.globalStep;
    if (dG < 0)
        return;
    const double sa = *a.scaler->scale, sb = *b.scaler->scale;
    const auto e = growthsBetween(sa, sb, b.scaler->growthFactor.value_or(2), b.scaler->backoffFactor.value_or(0.5));
    if (!e)
        return;
    const auto na = optimizerStep(a), nb = optimizerStep(b);
    const std::optional<int64_t> dN = na && nb ? std::optional<int64_t>(nb->step - na->step) : std::nullopt;
    const int64_t clean = dN.value_or(dG);
    const int64_t interval = b.scaler->growthInterval.value_or(2000);
    const int64_t ta = a.scaler->growthTracker.value_or(0);
    const std::optional<int64_t> tb = b.scaler->growthTracker;
    const int64_t maxGrowths = interval > 0 ? (ta + clean) / interval : clean;
    const int64_t minGrowths = std::max<int64_t>(0, *e);
    std::string problem;
    if (minGrowths > maxGrowths) {
        problem = "the scale went from " + numberText(sa) + " to " + numberText(sb) + ": " + std::to_string(*e)
                + " growth(s), each needing " + std::to_string(interval) + " clean steps in a row, but only " + std::to_string(dG)
                + " steps passed (tracker " + std::to_string(ta) + " in A)";
        if (sb == kDefaultInitScale)
            problem += "; B is back at GradScaler's initial scale 65536";
    } else if (*e == 0 && maxGrowths == 0 && tb && dN && dG - *dN == 0 && *tb != ta + *dN && !(*tb == 0 && ta == 0)) {
        problem = "no overflow and no growth between them, so _growth_tracker should go from " + std::to_string(ta) + " to "
                + std::to_string(ta + *dN) + ", but B has " + std::to_string(*tb) + ": the scaler restarted in between";
    }
    if (problem.empty())
        return;
    Finding f = makeFinding("scaler.unreachable", "B's AMP scaler state cannot follow from A's: " + problem,
        hintWithNext("The resume built a fresh GradScaler() and did not call scaler.load_state_dict(ckpt[\"scaler\"]); it "
                     "relearns its scale through overflows the original run did not have (skipped updates, a loss spike; "
                     "recovery guide §3.2 on the AMP grad scaler as training state and §10.1 on diagnosing a loss jump after a resume, row \"AMP scaler reset\"; stories transformers#34053, metaseq#3).", Component::Scaler));
    f.evidence.push_back(evidence("scale in A", numberText(sa), keyed(a.scaler->from, "scale")));
    f.evidence.push_back(evidence("_growth_tracker in A", std::to_string(ta), keyed(a.scaler->from, "_growth_tracker")));
    f.evidence.push_back(evidence("scale in B", numberText(sb), keyed(b.scaler->from, "scale")));
    if (tb)
        f.evidence.push_back(evidence("_growth_tracker in B", std::to_string(*tb), keyed(b.scaler->from, "_growth_tracker")));
    f.evidence.push_back(evidence("growth_interval", std::to_string(interval), keyed(b.scaler->from, "growth_interval")));
    f.evidence.push_back(globalStepEvidence(a));
    f.evidence.push_back(globalStepEvidence(b));
    out.push_back(std::move(f));
}

} // namespace ckpt::rules
