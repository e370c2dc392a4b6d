// SPDX-License-Identifier: MIT
// Findings that say the same thing about several checkpoints, ranks or files, told once: one group
// per rule, severity, component and message pattern, with how many and where (first ... last). The
// CLI, the report, the JSON and the GUI all group with this, so a healthy run of 14 checkpoints
// says "rng.missing (14 checkpoints)" once instead of fourteen times.
#pragma once

#include "ckpt/findings/finding.h"

#include <string>
#include <vector>

namespace ckpt {

struct FindingGroup {
    std::string rule;
    Severity severity = Severity::Info;
    Component component = Component::Integrity;
    std::string message; // the first member's
    std::string hint;    // the first member's, told once
    std::string assumes;
    std::vector<std::size_t> members;     // indices into the findings, in their order
    std::vector<std::string> checkpoints; // every checkpoint the members concern, each once, oldest first
};

/// The parts of S_t in the recovery guide's order for diagnosing a loss jump after a resume (§10.1:
/// is the next batch the same, then the model's parameters, the optimizer step and LR, the scaler,
/// the RNG; then the counters, the environment and the files). The timeline names a resume's first
/// differing part in this order.
const std::vector<Component>& diagnosisOrder();

/// A finding group's place: what makes the files themselves untrustworthy (security, then
/// integrity) first, then diagnosisOrder(). Lower comes first.
int diagnosisRank(Component component);

/// The message with its numbers masked, so that "step 8" and "step 16" fall into one group.
std::string messagePattern(const std::string& message);

/// The findings grouped by rule, severity, component and message pattern. Groups are ordered by
/// severity (errors first), then diagnosisRank, then rule id; members and checkpoints follow
/// `checkpointOrder` (the run's checkpoints oldest first) where given, else the findings' order.
std::vector<FindingGroup> groupFindings(const std::vector<Finding>& findings, const std::vector<std::string>& checkpointOrder = {});

/// The findings with each repeat left out: a front-end that lists a pair's finding under both of its
/// checkpoints (the app's run browser) counts it once again, as checkPaths reports it. A repeat has
/// the same rule, message and checkpoints.
std::vector<Finding> withoutRepeats(const std::vector<Finding>& findings);

/// Where a group's findings are, short: "4 checkpoints: epoch=0-step=8.ckpt ... epoch=3-step=32.ckpt",
/// "1 checkpoint: step-15", "3 times" for findings of no checkpoint, empty for one such finding.
std::string groupWhere(const FindingGroup& group);

/// What a report opens with, the same in the CLI, the Markdown and HTML reports and the app: the
/// headline, to follow "Verdict: " ("nothing inconsistent found (85 rules over 4 checkpoints); 8 things
/// ... (info), in 2 groups." or "2 errors and 1 warning; in the order to look at them:"), then one line per error and
/// warning group ("error data.cursor-delta (2 checkpoints: a, b): the data cursor advanced ...").
struct Verdict {
    std::string headline;
    std::vector<std::string> lines;
};
Verdict verdictOf(const std::vector<Finding>& findings, const std::vector<FindingGroup>& groups, std::size_t checkpoints,
                  std::size_t rules);

} // namespace ckpt
