// SPDX-License-Identifier: MIT
// Findings as a person reads them: the verdict first, then each error and warning group in full
// (its first instance's evidence, "and N similar: first ... last", the hint once), then what is not
// recorded (info) one group a line. The groups are core's (ckpt/findings/finding_groups.h).
#pragma once

#include "ckpt/findings/finding.h"

#include <iosfwd>
#include <string>
#include <vector>

struct FindingTextOptions {
    /// Every group in full, each member's evidence, info included (ckpt check --verbose).
    bool verbose = false;
    /// The checkpoints oldest first, to say "first ... last" in the run's order.
    std::vector<std::string> checkpointOrder;
    /// How many checkpoints were checked and how many rules ran over them, for the verdict.
    std::size_t checkpoints = 0;
    std::size_t rules = 0;
};

/// The verdict paragraph, the groups, and the closing count line ("N error(s), M warning(s), K info").
void printFindings(std::ostream& out, const std::vector<ckpt::Finding>& findings, const FindingTextOptions& options);
