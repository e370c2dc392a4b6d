// SPDX-License-Identifier: MIT
// What a path the user opens stands for: one checkpoint (a file or a checkpoint directory: a
// Trainer checkpoint-N/, a DCP step, a sharded Hugging Face model folder...), a run directory, or a
// folder holding several runs (sample_runs/ holds eleven). The one discovery every command and the
// desktop app use (`ckpt run`, `ckpt check`, `ckpt show`, the run browser), so a folder is the same
// thing everywhere. Reads names, pointers and headers only, like run_history.h.
#pragma once

#include "ckpt/state/run_history.h"

#include <string>
#include <vector>

namespace ckpt {

struct DiscoveredRun {
    std::string path; // the run directory, or the checkpoint itself when it was opened alone
    RunHistory history;
    bool singleCheckpoint = false;
    bool looseFiles = false; // a folder of checkpoint files that is no run: each is checked alone
};

/// One entry per run found under `path`, in path order. A folder whose checkpoints all live in one
/// subtree is one run (lightning/checkpoints/*.ckpt belongs to lightning/); a folder whose
/// subfolders each hold checkpoints is one run per subfolder, looked for three levels deep. A folder
/// of loose checkpoint files (*.pt, *.bin, *.safetensors...) without step names is one run of them.
/// Throws std::runtime_error ("PATH: reason") when nothing there is a checkpoint.
std::vector<DiscoveredRun> discoverRuns(const std::string& path);

} // namespace ckpt
