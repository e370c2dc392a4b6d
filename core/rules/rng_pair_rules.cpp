// SPDX-License-Identifier: MIT
// RNG states across a pair (recovery guide §4.1, §4.4, §10.4): a generator that draws numbers moves
// between saves; a resume at the same step restores it exactly; ranks seeded apart stay apart;
// and no generator lands on a state another generator or rank already had (a reseed).
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"

#include <map>
#include <set>
#include <tuple>

namespace ckpt::rules {
namespace {

using Generator = RngPart::Generator;
using Id = std::tuple<int, std::string, std::string>; // rank, kind, key path

Id idOf(const Generator& g) { return {g.rank < 0 ? 0 : g.rank, rngKindName(g.state.kind), formatKeyPath(g.state.key)}; }

std::string label(const Id& id) { return std::get<1>(id) + " of rank " + std::to_string(std::get<0>(id)); }

std::map<Id, const Generator*> index(const RngPart& rng)
{
    std::map<Id, const Generator*> out;
    for (const auto& g : rng.generators) {
        if (!g.state.fingerprint.empty())
            out.emplace(idOf(g), &g);
    }
    return out;
}

Provenance provenance(const Generator& g) { return {g.file, g.state.key}; }

void sameStep(const std::map<Id, const Generator*>& a, const std::map<Id, const Generator*>& b, Findings& out)
{
    std::vector<Id> differ;
    for (const auto& [id, gb] : b) {
        const auto it = a.find(id);
        if (it != a.end() && it->second->state.fingerprint != gb->state.fingerprint)
            differ.push_back(id);
    }
    if (differ.empty())
        return;
    Finding f = makeFinding("rng.changed-same-step",
        std::to_string(differ.size()) + " generator state(s) differ between two checkpoints of the same step: " + label(differ.front())
            + (differ.size() > 1 ? ", ..." : ""),
        hintWithNext("B is a resume of A that did not restore the RNG (or drew numbers before saving): the random stream "
                     "does not continue (recovery guide §4.1 on the state of every random generator restore before any draw, recovery guide §9.3 on validating right after a resume).", Component::Rng));
    for (const Id& id : differ) {
        f.evidence.push_back(evidence(label(id) + " in A", a.at(id)->state.fingerprint, provenance(*a.at(id))));
        f.evidence.push_back(evidence(label(id) + " in B", b.at(id)->state.fingerprint, provenance(*b.at(id))));
    }
    out.push_back(std::move(f));
}

void unchanged(const std::map<Id, const Generator*>& a, const std::map<Id, const Generator*>& b, int64_t dG, Findings& out)
{
    std::vector<Id> same;
    std::set<std::string> kindsThatMoved;
    std::size_t compared = 0;
    for (const auto& [id, gb] : b) {
        const auto it = a.find(id);
        if (it == a.end())
            continue;
        ++compared;
        if (it->second->state.fingerprint == gb->state.fingerprint)
            same.push_back(id);
        else
            kindsThatMoved.insert(std::get<1>(id));
    }
    if (same.empty())
        return;
    std::vector<Id> suspicious;
    for (const Id& id : same) {
        if (kindsThatMoved.contains(std::get<1>(id)))
            suspicious.push_back(id);
    }
    const bool all = same.size() == compared;
    Finding f = makeFinding("rng.unchanged",
        suspicious.empty()
            ? std::to_string(same.size()) + " generator state(s) are identical after " + std::to_string(dG) + " steps"
                  + (all ? ": this run draws no random numbers from them between saves" : "")
            : label(suspicious.front()) + " did not move in " + std::to_string(dG) + " steps while the same generator on other ranks did",
        hintWithNext(suspicious.empty()
            ? "Expected when nothing random runs between saves (no dropout, no shuffling from this generator); if the model "
              "uses dropout or augmentation, the RNG saved is stale (captured once, not at save time) (recovery guide §4.1 on the state of every random generator)."
            : "This rank's generator was saved from a stale capture or restored from an old checkpoint; its random stream "
              "diverges from the others' (recovery guide §4.1 on the state of every random generator and §4.4 on per-rank RNG state).", Component::Rng));
    if (!suspicious.empty())
        f.severity = Severity::Warning;
    const std::vector<Id>& list = suspicious.empty() ? same : suspicious;
    for (std::size_t i = 0; i < list.size() && i < 8; ++i)
        f.evidence.push_back(evidence(label(list[i]), b.at(list[i])->state.fingerprint, provenance(*b.at(list[i]))));
    out.push_back(std::move(f));
}

void collapsed(const RngPart& a, const RngPart& b, Findings& out)
{
    auto perKind = [](const RngPart& rng) {
        std::map<std::string, std::map<int, const Generator*>> m;
        for (const auto& g : rng.generators) {
            if (g.state.kind != RngKind::TorchCuda && !g.state.fingerprint.empty())
                m[rngKindName(g.state.kind)].emplace(g.rank < 0 ? 0 : g.rank, &g);
        }
        return m;
    };
    const auto ka = perKind(a), kb = perKind(b);
    std::vector<std::string> kinds;
    for (const auto& [kind, ranksB] : kb) {
        const auto it = ka.find(kind);
        if (ranksB.size() < 2 || it == ka.end() || it->second.size() < 2)
            continue;
        std::set<std::string> distinctA, distinctB;
        for (const auto& [r, g] : it->second)
            distinctA.insert(g->state.fingerprint);
        for (const auto& [r, g] : ranksB)
            distinctB.insert(g->state.fingerprint);
        if (distinctA.size() > 1 && distinctB.size() == 1)
            kinds.push_back(kind);
    }
    if (kinds.empty())
        return;
    std::string list;
    for (const auto& k : kinds)
        list += (list.empty() ? "" : ", ") + k;
    Finding f = makeFinding("rng.ranks-collapsed",
        "every rank had its own " + list + " state in A but all ranks share one in B: the ranks were reseeded alike",
        hintWithNext("The resume called seed_everything(seed) without the per-rank offset the first launch used (or "
                     "instead of restoring each rank's saved state): all ranks now draw the same dropout masks and "
                     "augmentations, and the streams restart from the seed (recovery guide §4.1 on the state of every random generator, §4.4 on per-rank RNG state and §10.4 on same seed but different results).", Component::Rng));
    for (const auto& k : kinds) {
        for (const auto& [r, g] : ka.at(k))
            f.evidence.push_back(evidence(k + " of rank " + std::to_string(r) + " in A", g->state.fingerprint, provenance(*g)));
        for (const auto& [r, g] : kb.at(k))
            f.evidence.push_back(evidence(k + " of rank " + std::to_string(r) + " in B", g->state.fingerprint, provenance(*g)));
    }
    out.push_back(std::move(f));
}

void repeated(const std::map<Id, const Generator*>& a, const std::map<Id, const Generator*>& b, Findings& out)
{
    std::map<std::string, std::set<Id>> seenInA;
    for (const auto& [id, g] : a)
        seenInA[g->state.fingerprint].insert(id);
    for (const auto& [id, gb] : b) {
        const auto found = seenInA.find(gb->state.fingerprint);
        if (found == seenInA.end() || found->second.contains(id))
            continue;
        const auto it = found->second.begin();
        Finding f = makeFinding("rng.repeated",
            label(id) + " in B is in the state " + label(*it) + " had in A: the stream is replayed",
            hintWithNext("A generator was reseeded or restored from the wrong rank's file (rank files swapped, rank 0's "
                         "state loaded everywhere) (recovery guide §4.1 on the state of every random generator and §4.4 on per-rank RNG state).", Component::Rng));
        f.evidence.push_back(evidence(label(*it) + " in A", gb->state.fingerprint, provenance(*a.at(*it))));
        f.evidence.push_back(evidence(label(id) + " in B", gb->state.fingerprint, provenance(*gb)));
        out.push_back(std::move(f));
        return;
    }
}

} // namespace

void rngPairRules(const CheckpointFacts& ca, const CheckpointFacts& cb, Findings& out)
{
    const TrainingState& a = ca.state;
    const TrainingState& b = cb.state;
    if (!a.rng || !b.rng || !a.globalStep || !b.globalStep)
        return;
    const auto ia = index(*a.rng), ib = index(*b.rng);
    const int64_t dG = *b.globalStep - *a.globalStep;
    if (dG == 0) {
        sameStep(ia, ib, out);
        return;
    }
    if (dG < 0)
        return;
    unchanged(ia, ib, dG, out);
    collapsed(*a.rng, *b.rng, out);
    repeated(ia, ib, out);
}

} // namespace ckpt::rules
