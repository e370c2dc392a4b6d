// SPDX-License-Identifier: MIT
// Findings as a readable report: grouped by component, the component with the most severe
// finding first, each finding with its evidence (value and provenance) and hint.
#pragma once

#include "ckpt/findings/finding.h"

#include <iosfwd>
#include <vector>

/// Prints the groups and a closing count line ("OK: no findings" when empty).
void printFindingsByComponent(std::ostream& out, const std::vector<ckpt::Finding>& findings);
