// SPDX-License-Identifier: MIT
// Content rules: what only the tensor bytes tell (recovery guide §10.1, §2.2). NaN/Inf in the
// weights or the moments, negative second moments (a running mean of squares cannot be
// negative), and across a pair moments that did not move while the parameters did. The figures
// come from a TensorContentSource, so how they are computed can change without touching a rule.
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"

#include <map>

namespace ckpt::rules {
namespace {

bool isSecondMoment(const std::string& name)
{
    return name == "exp_avg_sq" || name == "max_exp_avg_sq" || name == "square_avg" || name == "sum" || name == "acc_delta";
}

struct Hit {
    std::string what;
    std::string value;
    Provenance from;
};

void report(const char* rule, const std::string& subject, const std::vector<Hit>& hits, std::string hint, Component next,
            Findings& out)
{
    if (hits.empty())
        return;
    std::string list;
    for (std::size_t i = 0; i < hits.size() && i < 4; ++i)
        list += (i ? ", " : "") + hits[i].what;
    if (hits.size() > 4)
        list += ", ...";
    Finding f = makeFinding(rule, std::to_string(hits.size()) + " " + subject + ": " + list, hintWithNext(hint, next));
    for (std::size_t i = 0; i < hits.size() && i < 16; ++i)
        f.evidence.push_back(evidence(hits[i].what, hits[i].value, hits[i].from));
    out.push_back(std::move(f));
}

std::string nonfiniteText(const TensorSummary& s)
{
    return std::to_string(s.nan) + " NaN, " + std::to_string(s.inf) + " Inf of " + std::to_string(s.numel);
}

} // namespace

void contentRules(const CheckpointFacts& c, Findings& out)
{
    if (!c.content)
        return;
    const TrainingState& s = c.state;
    std::vector<Hit> modelNonfinite, momentNonfinite, negative, unchecked;
    std::size_t looked = 0;
    // Every tensor the rules ask for is counted; one that cannot be read is reported, never
    // passed over as clean (a truncated file, a chunk without storage, an unknown dtype).
    auto read = [&](const std::string& name, const Provenance& from) {
        ++looked;
        std::string problem;
        auto sum = c.content->summary(from, &problem);
        if (!sum)
            unchecked.push_back({name, problem.empty() ? "cannot be read" : problem, from});
        return sum;
    };
    if (s.model) {
        for (const auto& p : s.model->parameters) {
            const auto sum = read(p.name, p.from);
            if (sum && (sum->nan || sum->inf))
                modelNonfinite.push_back({p.name, nonfiniteText(*sum), p.from});
        }
    }
    if (s.optimizer) {
        for (const auto& ps : s.optimizer->paramState) {
            for (const auto& m : ps.moments) {
                const std::string name = (ps.name.empty() ? ps.index : ps.name) + " " + m.name;
                const auto sum = read(name, m.from);
                if (!sum)
                    continue;
                if (sum->nan || sum->inf)
                    momentNonfinite.push_back({name, nonfiniteText(*sum), m.from});
                if (isSecondMoment(m.name) && sum->min < 0)
                    negative.push_back({name, "minimum " + numberText(sum->min), m.from});
            }
        }
    }
    report("model.nonfinite", "model tensor(s) hold NaN or Inf", modelNonfinite,
           "The run diverged before this save (an fp16 overflow the scaler did not catch, a bad batch, a too-high LR); "
           "resume from the last checkpoint without them (recovery guide §8.3 on retention and rollback and §10.1 on diagnosing a loss jump after a resume).", Component::Model, out);
    report("optimizer.nonfinite", "optimizer moment(s) hold NaN or Inf", momentNonfinite,
           "A non-finite gradient reached optimizer.step() (unscaled fp16 overflow, skipped clipping); every later update "
           "of these parameters is NaN (recovery guide §3.2 on the AMP grad scaler as training state and §10.1 on diagnosing a loss jump after a resume).", Component::Optimizer, out);
    report("optimizer.negative-second-moment", "second-moment tensor(s) hold negative values", negative,
           "exp_avg_sq is a running mean of squared gradients and is never negative: the bytes are damaged, or the moments "
           "were swapped with exp_avg by a converter or a hand-written loader (recovery guide §2.2 on optimizer state).", Component::Optimizer, out);
    report("integrity.content-unchecked", "of " + std::to_string(looked) + " tensor(s) could not be read, so NaN/Inf and "
           "moment checks did not look at them", unchecked,
           "Their bytes are missing or damaged (a truncated copy, a chunk .metadata points past), or their type is one the "
           "inspector cannot read; `ckpt tensors --stats` on the file names each (recovery guide §6.3 on manifest contents).",
           Component::Integrity, out);
}

void contentPairRules(const CheckpointFacts& a, const CheckpointFacts& b, Findings& out)
{
    if (!a.content || !b.content || !a.state.optimizer || !b.state.optimizer || !a.state.model || !b.state.model)
        return;
    if (a.state.globalStep && b.state.globalStep && *a.state.globalStep == *b.state.globalStep)
        return; // a resume at the same step: nothing should have moved
    std::map<std::string, const ParameterEntry*> paramsA;
    for (const auto& p : a.state.model->parameters)
        paramsA[p.name] = &p;
    std::map<std::string, const ParamState*> stateA;
    for (const auto& ps : a.state.optimizer->paramState)
        stateA[ps.name] = &ps;
    std::vector<Hit> frozen;
    for (const auto& p : b.state.model->parameters) {
        const auto pa = paramsA.find(p.name);
        const ParamState* psB = nullptr;
        for (const auto& ps : b.state.optimizer->paramState)
            psB = ps.name == p.name ? &ps : psB;
        const auto psA = stateA.find(p.name);
        if (pa == paramsA.end() || !psB || psA == stateA.end())
            continue;
        if (a.content->sameBits(pa->second->from, p.from).value_or(true))
            continue; // the parameter did not change either (or cannot be read)
        for (const auto& mB : psB->moments) {
            for (const auto& mA : psA->second->moments) {
                if (mA.name != mB.name)
                    continue;
                const auto sb = b.content->summary(mB.from);
                if (sb && sb->zeros == sb->numel && sb->numel > 0)
                    frozen.push_back({p.name + " " + mB.name, "all zero in B while the parameter changed", mB.from});
                else if (a.content->sameBits(mA.from, mB.from).value_or(false))
                    frozen.push_back({p.name + " " + mB.name, "identical in A and B while the parameter changed", mB.from});
            }
        }
    }
    report("optimizer.moments-frozen", "moment(s) zeroed or unchanged while their parameters changed", frozen,
           "The parameters were updated by something other than this optimizer state: a fresh optimizer whose state was "
           "discarded, a wrapper saving a stale copy, or a conversion that zeroed the moments (stories DeepSpeed#6691, "
           "sam#34; recovery guide §2.2 on optimizer state and §10.1 on diagnosing a loss jump after a resume).", Component::Optimizer, out);
}

} // namespace ckpt::rules
