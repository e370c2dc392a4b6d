// SPDX-License-Identifier: MIT
// The rule families, one source file each (core/rules/<family>_rules.cpp). Each function
// appends the findings of its rules; the ids, default severities, components and guide sections
// are in rule_catalogue.cpp. check.h runs them all.
#pragma once

#include "ckpt/rules/checkpoint_facts.h"
#include "ckpt/state/run_history.h"

#include <vector>

namespace ckpt::rules {

using Findings = std::vector<Finding>;

// One checkpoint.
void modelRules(const CheckpointFacts& c, Findings& out);
void configRules(const CheckpointFacts& c, Findings& out);
void adapterRules(const CheckpointFacts& c, Findings& out);
void optimizerRules(const CheckpointFacts& c, Findings& out);
void schedulerRules(const CheckpointFacts& c, Findings& out);
void scalerRules(const CheckpointFacts& c, Findings& out);
void rngRules(const CheckpointFacts& c, Findings& out);
void dataRules(const CheckpointFacts& c, Findings& out);
void progressRules(const CheckpointFacts& c, Findings& out);
void environmentRules(const CheckpointFacts& c, Findings& out);
void integrityRules(const CheckpointFacts& c, Findings& out);
void securityRules(const CheckpointFacts& c, Findings& out);
void contentRules(const CheckpointFacts& c, Findings& out);

// A pair: `a` saved before `b` (or b a resume of a).
void counterPairRules(const CheckpointFacts& a, const CheckpointFacts& b, Findings& out);  // optimizer, scheduler, data, progress
void scalerPairRules(const CheckpointFacts& a, const CheckpointFacts& b, Findings& out);
void rngPairRules(const CheckpointFacts& a, const CheckpointFacts& b, Findings& out);
void structurePairRules(const CheckpointFacts& a, const CheckpointFacts& b, Findings& out); // model keys, environment
void contentPairRules(const CheckpointFacts& a, const CheckpointFacts& b, Findings& out);

// A whole run (checkpoints in history order, facts in the same order).
/// A point where a run's per-checkpoint series breaks, found by a run rule.
struct RunMark {
    std::string series;
    int64_t step = 0;
    std::string rule;
    std::string checkpoint;
};

/// `latestAudited`: the manifest audit already judged `latest` (its findings are reported instead).
void runRules(const RunHistory& run, const std::vector<const CheckpointFacts*>& checkpoints, bool latestAudited, Findings& out,
              std::vector<RunMark>& marks);

} // namespace ckpt::rules
