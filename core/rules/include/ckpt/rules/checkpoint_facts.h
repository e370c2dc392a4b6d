// SPDX-License-Identifier: MIT
// What the rules look at for one checkpoint: its TrainingState (S_t with provenance), what the
// manifest audit found, the per-file facts the state model does not keep (imports, storages
// shared between tensors), and optionally a source of tensor contents for the content rules.
#pragma once

#include "ckpt/findings/finding.h"
#include "ckpt/pickle/imports_report.h"
#include "ckpt/rules/tensor_content.h"
#include "ckpt/state/training_state.h"

#include <memory>
#include <string>
#include <vector>

namespace ckpt {

/// Two tensors of one file whose bytes overlap.
struct SharedStorage {
    KeyPath a, b;
};

struct FileFacts {
    std::string path;
    ImportsReport imports;
    std::vector<SharedStorage> shared;
};

struct CheckpointFacts {
    CheckpointFacts() = default;
    CheckpointFacts(CheckpointFacts&&) = default;
    CheckpointFacts(const CheckpointFacts&) = delete; // it would share the state, not copy it

    /// The state, on the heap so that a caller shown it before the rules run (checkPaths'
    /// stateRead, the desktop app) keeps it without a copy: a frontier model's 90k parameters
    /// took ~0.15 s to copy, on the GUI's way to its Tensors tab. Nothing writes to it once it
    /// was handed over.
    std::shared_ptr<TrainingState> sharedState = std::make_shared<TrainingState>();
    TrainingState& state = *sharedState;
    std::vector<Finding> audit;             // manifest-audit findings about this checkpoint
    bool audited = false;                   // the audit ran (a directory it understands)
    std::vector<FileFacts> files;
    std::shared_ptr<TensorContentSource> content; // null: content rules are skipped
};

struct FactOptions {
    bool audit = true;   // run the manifest audit (hashes every file)
    bool content = true; // read tensor bytes for the content rules (NaN/Inf, moments)
    bool keepFiles = false; // leave the parsed files in state.files (TrainingState::files)
};

/// Reads one checkpoint (file or directory) and everything the single-checkpoint rules need.
/// Throws std::runtime_error / OpenError when PATH does not exist or cannot be read at all.
CheckpointFacts gatherFacts(const std::string& path, const FactOptions& options = {});
/// The manifest audit part of gatherFacts (FactOptions::audit), on its own: a caller that shows the
/// state first (checkPaths' stateRead) gathers without it, then audits.
void auditFacts(CheckpointFacts& facts, const std::string& path);

/// Per-file facts of one opened file: imports and overlapping tensor storages.
FileFacts fileFacts(const CheckpointFile& file);

} // namespace ckpt
