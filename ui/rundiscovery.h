// SPDX-License-Identifier: MIT
// What a path the user opens stands for: one checkpoint (a file or a checkpoint directory), a run
// directory, or a folder holding several runs (sample_runs/ holds eleven). Standard C++ over
// core/state/include/ckpt/state/run_history.h, so it can run on a worker thread and be tested without a window.
#pragma once

#include "ckpt/state/run_history.h"

#include <string>
#include <vector>

struct DiscoveredRun {
    std::string path; // the run directory, or the checkpoint itself when it was opened alone
    ckpt::RunHistory history;
    bool singleCheckpoint = false;
    bool looseFiles = false; // a folder of checkpoint files that is no run: each is checked alone
};

/// One entry per run found under `path`, in path order. A folder whose checkpoints all live in one
/// subtree is one run (lightning/checkpoints/*.ckpt belongs to lightning/); a folder whose
/// subfolders each hold checkpoints is one run per subfolder, looked for three levels deep. A folder
/// of loose checkpoint files (*.pt, *.bin, *.safetensors...) without step names is one run of them.
/// Throws std::runtime_error ("PATH: reason") when nothing there is a checkpoint.
std::vector<DiscoveredRun> discoverRuns(const std::string& path);
