// SPDX-License-Identifier: MIT
// A finding: one thing about a checkpoint, a pair or a run that an engineer should look at.
// Shared by the manifest audit and the rule catalogue, so every report has the same shape.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ckpt {

enum class Severity : uint8_t { Info, Warning, Error };

/// The part of the training state a finding concerns.
enum class Component : uint8_t {
    Model,
    Optimizer,
    Scheduler,
    Scaler,
    Rng,
    Data,
    Progress,
    Environment,
    Integrity,
    Security,
};

const char* severityName(Severity severity);   // "info", "warning", "error"
const char* componentName(Component component); // "model", "optimizer", ... "security"

struct Evidence {
    std::string what;   // "sha256 in manifest", "bytes on disk"
    std::string value;  // the value, as text
    std::string where;  // provenance: file and key path, e.g. "checkpoint-0000100/manifest.json: files.model.pt.sha256"
};

struct Finding {
    std::string rule;                 // stable id, e.g. "integrity.hash-mismatch"
    Severity severity = Severity::Warning;
    Component component = Component::Integrity;
    std::string message;              // one sentence an engineer understands
    std::vector<Evidence> evidence;
    std::vector<std::string> checkpoints; // which checkpoints (paths) it concerns
    std::string file;                 // the file it concerns, when there is one
    std::string hint;                 // what usually causes it and what to check next
    /// The convention or framework version the finding rests on, when it is not proven by the
    /// files alone (a warning's premise, e.g. "Lightning 2.5+ repairs the batch counter on
    /// restore (pytorch-lightning_version 2.4.0 recorded)"); empty when the files prove it.
    std::string assumes;
};

} // namespace ckpt
