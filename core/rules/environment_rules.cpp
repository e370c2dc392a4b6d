// SPDX-License-Identifier: MIT
// Environment metadata E_t (recovery guide §9.1, §6.3): the versions, world size and precision a
// resume must compare against are recorded, and the files of one checkpoint agree on them.
#include "ckpt/rules/rule_catalogue.h"
#include "environment_keys.h"
#include "rule_families.h"
#include "rule_support.h"

#include <map>
#include <set>

namespace ckpt::rules {
namespace {

bool hasAny(const TrainingState& s, std::initializer_list<const char*> suffixes)
{
    for (const auto& f : s.environment) {
        for (const char* suffix : suffixes) {
            if (f.name == suffix || f.name.ends_with(std::string(".") + suffix))
                return true;
        }
    }
    return false;
}

void notRecorded(const TrainingState& s, Findings& out)
{
    if (!s.optimizer && !s.scheduler)
        return; // a weights file: the recovery contract does not apply
    std::vector<std::string> missing;
    if (!hasAny(s, {"torch_version", "pytorch-lightning_version", "transformers_version", "ds_version"}))
        missing.push_back("torch version");
    std::set<int> ranks;
    if (s.rng) {
        for (const auto& g : s.rng->generators)
            ranks.insert(g.rank);
    }
    if (ranks.size() > 1 && !worldSize(s) && !hasAny(s, {"world_size"})) // Megatron: args.world_size
        missing.push_back("world size");
    if (!hasAny(s, {"precision", "fp16", "bf16", "dtype", "torch_dtype", "amp", "mixed_precision"}) && !s.scaler)
        missing.push_back("precision (fp32/fp16/bf16)");
    if (missing.empty())
        return;
    std::string list;
    for (const auto& m : missing)
        list += (list.empty() ? "" : ", ") + m;
    Finding f = makeFinding("environment.not-recorded", "not recorded in this checkpoint: " + list,
        hintWithNext("A resume cannot verify it runs in a compatible environment; record torch/CUDA versions, world size "
                     "and mixed-precision settings in the manifest (recovery guide §6.3 on what a manifest records and §9.1 on checking the environment).", Component::Environment));
    f.evidence.push_back({"environment fields", std::to_string(s.environment.size()), s.path});
    out.push_back(std::move(f));
}

void mixed(const TrainingState& s, Findings& out)
{
    std::map<std::string, std::vector<const StateField*>> byName;
    for (const auto& f : s.environment) {
        if (isCompatibilityKey(f.name))
            byName[f.name].push_back(&f);
    }
    for (const auto& [name, fields] : byName) {
        std::set<std::string> values;
        for (const StateField* f : fields)
            values.insert(f->value);
        if (values.size() < 2)
            continue;
        Finding f = makeFinding("environment.mixed", "files of this checkpoint record different " + name + " values",
            hintWithNext("Files from different runs or software versions were combined into one checkpoint (a shard "
                         "copied from another save, a rank running another image) (recovery guide §9.1 on checking the environment).", Component::Environment));
        for (const StateField* field : fields)
            f.evidence.push_back(evidence(*field));
        out.push_back(std::move(f));
    }
}

} // namespace

void environmentRules(const CheckpointFacts& c, Findings& out)
{
    notRecorded(c.state, out);
    mixed(c.state, out);
}

} // namespace ckpt::rules
