// SPDX-License-Identifier: MIT
// RNG states R_t (recovery guide §4.1, §4.4): present, valid generator states, one set per rank
// of the recorded world size, the same generators on every rank.
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"

#include <map>
#include <set>

namespace ckpt::rules {
namespace {

using Generator = RngPart::Generator;

int rankOf(const Generator& g) { return g.rank < 0 ? 0 : g.rank; }

Provenance provenance(const Generator& g) { return {g.file, g.state.key}; }

void missing(const TrainingState& s, Findings& out)
{
    if (s.rng || !s.optimizer || s.globalStep.value_or(0) <= 0)
        return;
    Finding f = makeFinding("rng.missing", "no RNG state in this training checkpoint: a resume cannot continue the random streams",
        hintWithNext("Dropout masks, augmentation and shuffling restart from the seed on resume. Fine when exact "
                     "continuation is not promised; otherwise save python/numpy/torch/cuda states per rank (recovery guide §4.1 on the state of every random generator, story "
                     "transformers#17032).", Component::Rng));
    f.evidence.push_back(evidence("checkpoint", layoutName(s.layout.layout), {s.path, {}}));
    out.push_back(std::move(f));
}

void invalid(const RngPart& rng, Findings& out)
{
    for (const auto& g : rng.generators) {
        if (g.state.valid)
            continue;
        Finding f = makeFinding("rng.invalid",
            std::string(rngKindName(g.state.kind)) + " generator state of rank " + std::to_string(rankOf(g)) + " is not usable: " + g.state.problem,
            hintWithNext("set_state would reject it or it would produce a degenerate stream: the state was truncated, "
                         "hand-edited or written by a different library version (recovery guide §4.1 on the state of every random generator).", Component::Rng));
        f.evidence.push_back(evidence(rngKindName(g.state.kind), g.state.problem, provenance(g)));
        f.file = g.file;
        out.push_back(std::move(f));
    }
}

void rankMissing(const CheckpointFacts& c, Findings& out)
{
    const TrainingState& s = c.state;
    const auto world = worldSize(s);
    if (!world || *world <= 1)
        return;
    for (const auto& f : c.audit) {
        if (f.component == Component::Rng)
            return; // the audit already names the missing or extra per-rank files
    }
    std::set<int> ranks;
    for (const auto& g : s.rng->generators)
        ranks.insert(rankOf(g));
    std::string missingRanks;
    for (int r = 0; r < *world; ++r) {
        if (!ranks.contains(r))
            missingRanks += (missingRanks.empty() ? "" : ", ") + std::to_string(r);
    }
    if (missingRanks.empty())
        return;
    Finding f = makeFinding("rng.rank-missing",
        "no RNG state for rank(s) " + missingRanks + " of world size " + std::to_string(*world),
        hintWithNext("Only some ranks saved their RNG (often rank 0 only), or a rank's file never reached storage; those "
                     "ranks cannot continue their random streams (recovery guide §4.4 on per-rank RNG state and §7.2 on writing and reading sharded checkpoints).", Component::Rng));
    for (const char* name : {"world_size", "dp_world_size"}) {
        if (const StateField* w = findField(s.environment, name)) {
            f.evidence.push_back(evidence(*w));
            break;
        }
    }
    f.evidence.push_back({"ranks with RNG state", std::to_string(ranks.size()), s.path});
    out.push_back(std::move(f));
}

void kindsDiffer(const RngPart& rng, Findings& out)
{
    std::map<int, std::set<std::string>> kinds;
    std::set<std::string> all;
    for (const auto& g : rng.generators) {
        kinds[rankOf(g)].insert(rngKindName(g.state.kind));
        all.insert(rngKindName(g.state.kind));
    }
    if (kinds.size() < 2)
        return;
    for (const auto& [rank, have] : kinds) {
        std::string lacking;
        for (const auto& k : all) {
            if (!have.contains(k))
                lacking += (lacking.empty() ? "" : ", ") + k;
        }
        if (lacking.empty())
            continue;
        Finding f = makeFinding("rng.kinds-differ", "rank " + std::to_string(rank) + " saves no " + lacking + " generator state, which other ranks save",
            hintWithNext("The capture code differs between ranks (a generator captured only where it was created, a "
                         "try/except around one of them); that generator restarts from its seed on this rank (recovery guide §4.1 on the state of every random generator and §4.4 on per-rank RNG state).",
                         Component::Rng));
        for (const auto& g : rng.generators) {
            if (rankOf(g) == rank) {
                f.evidence.push_back(evidence("rank " + std::to_string(rank) + " has", rngKindName(g.state.kind), provenance(g)));
            }
        }
        out.push_back(std::move(f));
    }
}

// A run that declares per-rank seeds (manifest "rank_seed": "seed + rank") cannot have identical ranks.
const StateField* perRankSeeding(const TrainingState& s)
{
    for (const auto& f : s.environment) {
        if (f.name.find("rank_seed") != std::string::npos && f.value.find("rank") != std::string::npos)
            return &f;
    }
    return nullptr;
}

void ranksIdentical(const TrainingState& s, const RngPart& rng, Findings& out)
{
    std::map<std::string, std::map<int, std::string>> byKind; // kind -> rank -> fingerprint (first per rank)
    std::map<std::string, const Generator*> first;
    for (const auto& g : rng.generators) {
        if (g.state.kind == RngKind::TorchCuda || g.state.fingerprint.empty())
            continue;
        byKind[rngKindName(g.state.kind)].emplace(rankOf(g), g.state.fingerprint);
        first.emplace(rngKindName(g.state.kind), &g);
    }
    std::string kinds;
    std::size_t ranks = 0;
    for (const auto& [kind, perRank] : byKind) {
        std::set<std::string> distinct;
        for (const auto& [rank, fp] : perRank)
            distinct.insert(fp);
        if (perRank.size() >= 2 && distinct.size() == 1) {
            kinds += (kinds.empty() ? "" : ", ") + kind;
            ranks = perRank.size();
        }
    }
    if (kinds.empty())
        return;
    Finding f = makeFinding("rng.ranks-identical",
        "all " + std::to_string(ranks) + " ranks hold the same " + kinds + " generator state",
        hintWithNext("Right when every rank is seeded with the same seed on purpose (HF set_seed); wrong when the run seeds "
                     "rank r with seed + r: then every rank draws the same dropout masks and augmentations (recovery guide §4.4 on per-rank RNG state).",
                     Component::Rng));
    for (const auto& [kind, g] : first) {
        if (kinds.find(kind) != std::string::npos)
            f.evidence.push_back(evidence(kind + " fingerprint (every rank)", g->state.fingerprint, provenance(*g)));
    }
    if (const StateField* seeding = perRankSeeding(s)) {
        f.severity = Severity::Error;
        f.message += ", although the run seeds each rank apart (" + seeding->name + ": " + seeding->value + ")";
        f.hint = hintWithNext("The ranks were reseeded alike: a resume called seed_everything(seed) without the per-rank "
                              "offset (or instead of restoring each rank's saved state), so every rank draws the same "
                              "dropout masks and augmentations (recovery guide §4.1 on the state of every random generator, §4.4 on per-rank RNG state and §10.4 on same seed but different results).", Component::Rng);
        f.evidence.push_back(evidence(*seeding));
    }
    out.push_back(std::move(f));
}

} // namespace

void rngRules(const CheckpointFacts& c, Findings& out)
{
    missing(c.state, out);
    if (!c.state.rng)
        return;
    invalid(*c.state.rng, out);
    rankMissing(c, out);
    kindsDiffer(*c.state.rng, out);
    ranksIdentical(c.state, *c.state.rng, out);
}

} // namespace ckpt::rules
