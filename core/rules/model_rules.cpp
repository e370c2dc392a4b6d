// SPDX-License-Identifier: MIT
// Model state W_t (recovery guide §2.1): a training checkpoint carries the weights. Content rules
// (NaN/Inf) are in content_rules.cpp, pair rules (keys, shapes) in structure_pair_rules.cpp.
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"

namespace ckpt::rules {

void modelRules(const CheckpointFacts& c, Findings& out)
{
    const TrainingState& s = c.state;
    if (s.model || (!s.optimizer && !s.scheduler))
        return;
    Finding f = makeFinding("model.missing", "no model state_dict in this checkpoint",
        "Optimizer/scheduler state alone cannot resume training; the weights must be saved in the same commit (recovery guide §2.1 on what model state holds besides parameters and §6.2 on atomic writes and commit markers).");
    f.evidence.push_back({"layout", layoutName(s.layout.layout), s.path});
    out.push_back(std::move(f));
}

} // namespace ckpt::rules
