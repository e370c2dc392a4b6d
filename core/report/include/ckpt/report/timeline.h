// SPDX-License-Identifier: MIT
// A run on one step axis, for the engineer whose loss jumped after a resume: the logged series,
// every checkpoint (coloured by its worst finding), the resume points (from the logs restarting,
// from probes recorded by a resume, from pairs of checkpoints whose state cannot follow), and one
// strip per part of S_t with the values that matter for a resume and where they break. Built from
// what `ckpt run` and `ckpt check` already read; no file is opened again except probe.json files.
#pragma once

#include "ckpt/findings/finding_groups.h" // diagnosisOrder
#include "ckpt/rules/check.h"
#include "ckpt/state/run_history.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckpt {

using StepSeries = std::vector<std::pair<int64_t, double>>;

struct TimelineCheckpoint {
    std::string path;
    std::optional<int64_t> step;
    std::optional<Severity> worst; // its worst finding (pair findings count for the later checkpoint); none: clean
    std::size_t findings = 0;
    bool latest = false, best = false;
};

/// Where the run was resumed, as a band of steps (from == to when the step is known exactly).
struct ResumePoint {
    int64_t from = 0, to = 0;
    std::vector<std::string> evidence; // one sentence per source: log restart, probe, pair findings
    std::string before, after;         // the checkpoints on both sides ("" when there is none)
    /// The first part that differs between `before` and `after` in the recovery guide's diagnosis
    /// order for a loss jump after a resume (§10.1: data, model, optimizer, scheduler, scaler,
    /// RNG); "" when no pair finding says so.
    std::string firstComponent;
    std::vector<std::string> rules; // the pair findings' rules between them, most severe first
};

/// One part of S_t along the run: its value at each checkpoint (and, where the run logged it, the
/// logged series) and the steps where a finding says it breaks.
struct TimelineStrip {
    std::string name;      // "lr", "loss scale", "optimizer step", "data cursor", "rng changed", "moment norm"
    std::string component; // the finding component it belongs to ("scheduler", "scaler", ...)
    StepSeries points;     // per checkpoint
    StepSeries reference;  // what it is compared with: the logged LR or scale, the global step
    std::string referenceName;
    /// lr only: the LR the latest checkpoint's scheduler reconstructs, drawn at step = position (one
    /// scheduler step per update, the usual loop); where the logged LR leaves it, the schedule broke.
    StepSeries reconstructed;
    std::vector<int64_t> breaks;
};

struct Timeline {
    std::string run;
    std::map<std::string, StepSeries> logged; // every logged series (loss, grad_norm, ...)
    std::vector<TimelineCheckpoint> checkpoints;
    std::vector<ResumePoint> resumes;
    std::vector<TimelineStrip> strips;
    std::optional<int64_t> firstStep, lastStep;
};

/// `history` and `report` of the same run (`report` from checkPaths on the run's folder).
Timeline buildTimeline(const RunHistory& history, const CheckReport& report);

nlohmann::json timelineToJson(const Timeline& timeline);

} // namespace ckpt
