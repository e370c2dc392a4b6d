// SPDX-License-Identifier: MIT
// The report an engineer attaches to a bug about a loss jump after a resume: the run and its
// checkpoints, the findings grouped by part of S_t with their evidence, S_t in one line per part per
// checkpoint, the timeline (resume points, strips), the comparison of one pair (the resume's two
// sides, else the latest two), and the probes and validation results there are. One model, rendered
// without Qt as Markdown or JSON (`ckpt report`) and by the desktop app as one HTML file.
#pragma once

#include "ckpt/compare/checkpoint_diff.h"
#include "ckpt/report/probe_list.h"
#include "ckpt/report/timeline.h"
#include "ckpt/rules/check.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ckpt {

struct ReportOptions {
    bool audit = true;   // verify manifests (hashes every file)
    bool content = true; // read tensor bytes: content rules, moment norms, the pair's tensor figures
    /// The pair to compare (A, B); default: the sides of the first resume point, else the latest two.
    std::optional<std::pair<std::string, std::string>> pair;
    /// Validation reports (ckpt-validate's final JSON line) to include, e.g. what the app ran.
    std::vector<nlohmann::json> validations;
    std::function<bool(const CheckProgress&)> progress; // false: cancel
};

/// One pair of checkpoints, part by part: the non-tensor differences and the tensors that moved most.
struct PairSummary {
    std::string a, b;
    std::string why; // "the resume at step 200", "the latest two checkpoints", "chosen"
    std::vector<StateDiff> states;  // only what differs
    std::vector<TensorDiff> tensors; // the 10 model tensors that changed most (relative L2), then what only one side has
    DiffCounts counts;
};

struct RunReport {
    std::string path;
    CheckReport check;        // kind, checkpoints, findings, per-checkpoint S_t, series
    std::optional<Timeline> timeline; // runs only
    std::optional<PairSummary> pair;
    std::vector<ProbeInfo> probes;
    std::vector<nlohmann::json> validations;
};

/// Throws std::runtime_error ("PATH: reason") when PATH does not exist or holds nothing readable.
RunReport buildRunReport(const std::string& path, const ReportOptions& options = {});

nlohmann::json runReportToJson(const RunReport& report);

/// GitHub-flavoured Markdown in the order a reader needs: the verdict, the resume points, the errors
/// and warnings (each group once, with its first instance's evidence), the timeline, what is not
/// recorded (info, folded in <details>), S_t per checkpoint, the pair, the validations.
std::string runReportMarkdown(const RunReport& report);

} // namespace ckpt
