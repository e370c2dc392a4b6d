// SPDX-License-Identifier: MIT
// Content rules: what only the tensor bytes tell (recovery guide §10.1, §2.2). NaN/Inf in the
// weights or the moments, negative second moments (a running mean of squares cannot be
// negative), and across a pair moments that did not move while the parameters did. The figures
// come from a TensorContentSource, so how they are computed can change without touching a rule.
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"

#include <cmath>
#include <functional>
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

// The unit roundoff of a module dtype next to an fp32 master copy: rounding to nearest moves each
// element by at most u·|x| (plus half the smallest subnormal), so the norm by at most u·‖x‖.
std::optional<double> unitRoundoff(const std::string& dtype)
{
    if (dtype == "float16")
        return 0x1p-11;
    if (dtype == "bfloat16")
        return 0x1p-8;
    if (dtype == "float32")
        return 0x1p-24;
    return std::nullopt; // fp8 and the like: not a rounding DeepSpeed's ZeRO-1/2 module copy uses
}

std::optional<double> halfSubnormal(const std::string& dtype)
{
    return dtype == "float16" ? 0x1p-25 : 0x1p-150;
}

// ZeRO-1/2 keep an fp32 master copy of each parameter apart from the module's fp16/bf16 weights,
// and step() copies the master into the module after every update (DeepSpeed@38327e07
// deepspeed/runtime/zero/stage_1_and_2.py step: bit16_partitions[partition_id].data.copy_(fp32_partition)),
// so at any save the module holds the master's rounding. A module loaded without its masters
// (story DeepSpeed#4944: finetune / load_module_only, then saved) holds other values: which copy
// the next resume trains from is then decided by the loader, not by the run.
void masterWeightRule(const TrainingState& s, const std::map<std::string, TensorSummary>& module,
                      const std::function<std::optional<TensorSummary>(const std::string&, const Provenance&)>& read, Findings& out)
{
    if (!s.optimizer || !s.model)
        return;
    struct Master {
        double sq = 0;
        int64_t numel = 0;
        bool readable = true;
        Provenance first;
    };
    std::map<std::string, Master> masters;
    for (const auto& ps : s.optimizer->paramState) {
        if (!ps.master || ps.name.empty())
            continue;
        Master& m = masters[ps.name];
        if (m.numel == 0)
            m.first = *ps.master;
        const auto sum = read(ps.name + " fp32 master", *ps.master);
        if (!sum || sum->nan || sum->inf) {
            m.readable = false;
            continue;
        }
        m.sq += sum->l2 * sum->l2;
        m.numel += static_cast<int64_t>(sum->numel);
    }
    std::vector<Hit> hits;
    for (const auto& p : s.model->parameters) {
        const auto m = masters.find(p.name);
        const auto w = module.find(p.name);
        const auto u = unitRoundoff(p.dtype);
        if (m == masters.end() || w == module.end() || !u || !m->second.readable || w->second.nan || w->second.inf
            || static_cast<uint64_t>(m->second.numel) != w->second.numel)
            continue;
        const double normMaster = std::sqrt(m->second.sq), normModule = w->second.l2;
        const double bound = 1.01 * *u * normMaster + std::sqrt(static_cast<double>(w->second.numel)) * *halfSubnormal(p.dtype) + 1e-30;
        if (std::abs(normModule - normMaster) <= bound)
            continue;
        hits.push_back({p.name, "module norm " + numberText(normModule) + " (" + p.dtype + "), fp32 master norm " + numberText(normMaster)
                                    + " (rounding moves it by at most " + numberText(bound) + ")", m->second.first});
    }
    report("optimizer.master-weights-differ", "parameter(s) whose module weights are not the rounding of the optimizer's fp32 master copy",
           hits,
           "The module was loaded (or edited) without its optimizer's master weights: a fine-tune or load_module_only start "
           "that kept the fp32 partitions of the initialisation, or files from two saves. A resume trains from the master "
           "copy and throws the module's values away (story DeepSpeed#4944 / gpt-neox#1121; recovery guide §2.2 on optimizer "
           "state and §10.1 on diagnosing a loss jump after a resume).", Component::Model, out);
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
    std::map<std::string, TensorSummary> module;
    if (s.model) {
        for (const auto& p : s.model->parameters) {
            // A tensor-parallel parameter is read piece by piece (each rank's shard).
            std::optional<TensorSummary> sum;
            for (const Provenance& from : p.pieces.empty() ? std::vector<Provenance>{p.from} : p.pieces) {
                const auto piece = read(p.name, from);
                if (!piece) {
                    sum.reset();
                    break;
                }
                if (!sum)
                    sum = TensorSummary{};
                sum->numel += piece->numel;
                sum->nan += piece->nan;
                sum->inf += piece->inf;
                sum->zeros += piece->zeros;
                sum->min = sum->numel == piece->numel ? piece->min : std::min(sum->min, piece->min);
                sum->l2 = std::sqrt(sum->l2 * sum->l2 + piece->l2 * piece->l2);
            }
            if (sum && (sum->nan || sum->inf))
                modelNonfinite.push_back({p.name, nonfiniteText(*sum), p.from});
            if (sum)
                module.emplace(p.name, *sum);
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
    masterWeightRule(s, module, read, out);
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
