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

/// The position of a component in the recovery guide's order for diagnosing a loss jump after a
/// resume (§10.1: is the next batch the same, then the model's parameters, the optimizer step and
/// LR, the scaler, the RNG, then the distributed and hardware environment), after what makes the
/// files themselves untrustworthy (security, integrity). Lower comes first.
int diagnosisRank(Component component);

/// The message with its numbers masked, so that "step 8" and "step 16" fall into one group.
std::string messagePattern(const std::string& message);

/// The findings grouped by rule, severity, component and message pattern. Groups are ordered by
/// severity (errors first), then diagnosisRank, then rule id; members and checkpoints follow
/// `checkpointOrder` (the run's checkpoints oldest first) where given, else the findings' order.
std::vector<FindingGroup> groupFindings(const std::vector<Finding>& findings, const std::vector<std::string>& checkpointOrder = {});

} // namespace ckpt
