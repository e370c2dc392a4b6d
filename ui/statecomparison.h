// SPDX-License-Identifier: MIT
// Two training states side by side, component by component: which values are the same, changed,
// saved in only one of them, or inconsistent with how far the global step moved (a scheduler that
// advanced twice as far, a counter that went backwards). Standard C++, so it is tested without a
// window; the compare view shows it through ComparisonModel.
#pragma once

#include "ckpt/state/training_state.h"

#include <string>
#include <vector>

enum class CompareStatus : uint8_t { Same, Changed, OnlyA, OnlyB, Inconsistent };

const char* compareStatusName(CompareStatus status); // "same", "changed", "only in A", "only in B", "inconsistent"

struct CompareRow {
    std::string field;
    std::string a, b; // "" when absent on that side
    CompareStatus status = CompareStatus::Same;
    std::string note; // why a row is inconsistent
};

struct CompareSection {
    std::string component; // "Progress counters (C)", "Scheduler (L)"...
    std::vector<CompareRow> rows;
};

struct StateComparison {
    std::vector<CompareSection> sections;
    /// One sentence per inconsistent row, for the top of the compare view.
    std::vector<std::string> inconsistencies;
};

StateComparison compareStates(const ckpt::TrainingState& a, const ckpt::TrainingState& b);
