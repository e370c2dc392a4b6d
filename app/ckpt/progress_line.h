// SPDX-License-Identifier: MIT
// A one-line percentage on stderr for long scans, only when stderr is a terminal.
#pragma once

#include "ckpt/rules/check.h"
#include "ckpt/stats/tensor_stats.h"

#include <chrono>
#include <functional>
#include <string>

class ProgressLine {
public:
    explicit ProgressLine(std::string what);
    ~ProgressLine() { clear(); }
    std::function<bool(const ckpt::StatsProgress&)> callback();
    /// "what: 3 of 12: reading checkpoint-0000300" for ckpt check and ckpt report (empty off a terminal).
    std::function<bool(const ckpt::CheckProgress&)> checkCallback();
    void clear();

private:
    std::string m_what;
    bool m_enabled = false, m_shown = false;
    std::chrono::steady_clock::time_point m_last;
};
