// SPDX-License-Identifier: MIT
// ckpt-validate's steps: environment check, module and strict W load, optimizer from O, LR
// for t+1 from the scheduler's reconstruction, scaler, RNG restore, one update on the probe's batch,
// then the comparison with the probe per component in the recovery guide's diagnosis order.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace ckpt::validate {

struct ValidateOptions {
    std::string checkpoint;  // a checkpoint folder or file (read by the core, never by LibTorch)
    std::string probe;       // "" -> <parent>/probes/after-<checkpoint name>/
    std::string device = "auto";
    double rtol = 1e-4;      // "within tolerance" bound for losses, norms and tensor digests
    int threads = 0;         // CPU threads for LibTorch (0: its default)
};

/// Exit codes: pass (every part the run has was compared and matches, exactly or within tolerance),
/// something differs, the validation cannot run (unreadable checkpoint or probe, strict load failure,
/// LibTorch error), or partial: nothing compared differs but some part the run has was not compared
/// (the report's first line and "not_compared" say which and why).
enum ExitCode { kPass = 0, kDiffers = 1, kCannotRun = 2, kPartial = 3 };

/// Each event is one JSON object: {"event": "progress", "stage", "index", "of", "message"} while it
/// runs, then exactly one {"event": "report", ...}. Returns the exit code.
int runValidation(const ValidateOptions& options, const std::function<void(const nlohmann::json&)>& emit);

} // namespace ckpt::validate
