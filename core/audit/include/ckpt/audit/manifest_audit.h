// SPDX-License-Identifier: MIT
// Audit of checkpoint directories against their manifests (recovery guide §6.2-6.3, §8.3):
//
//   run/
//   ├── checkpoint-0001000/    manifest.json {world_size, files: {name: {bytes, sha256}}},
//   │                          the files it lists, COMPLETE (written last)
//   ├── checkpoint-0002000/
//   └── latest                 "checkpoint-0002000" (or a symlink to it)
//
// Every problem is a Finding (core/findings/include/ckpt/findings/finding.h) with a stable rule id:
//
//   integrity.manifest-unreadable  error    manifest.json absent, not JSON, no `files` object, or a bad entry
//                                  warning  an entry without sha256 (size only), a bad world_size
//   integrity.no-manifest          info     no manifest and no COMPLETE, but another layout's commit marker:
//                                           trainer_state.json (HF Trainer), .metadata or __N.metadata (DCP),
//                                           *_model_states.pt (DeepSpeed), random_states_N.pkl (accelerate);
//                                           nothing to verify sizes and hashes against
//   integrity.missing-file         error    listed in the manifest, absent on disk
//   integrity.file-unreadable      error    present but cannot be opened or read
//   integrity.size-mismatch        error    bytes on disk != manifest `bytes`
//   integrity.hash-mismatch        error    SHA-256 on disk != manifest `sha256`
//   integrity.unexpected-file      warning  on disk but not in the manifest (COMPLETE, manifest.json excepted)
//   integrity.no-complete-marker   error    no COMPLETE: the save may have died midway
//   integrity.rng-rank-missing     error    no rng-rank-N.pt / rng_state_N.pth for a rank < world_size
//   integrity.rng-rank-extra       warning  an RNG file for a rank >= world_size
//   integrity.latest-invalid       error    `latest` unreadable, empty or pointing at nothing;
//                                  warning  a run without `latest`
//   integrity.latest-incomplete    error    `latest` points at a checkpoint without COMPLETE / manifest,
//                                           or one that fails verification
//   integrity.latest-stale         warning  a newer complete checkpoint exists than the one `latest` names
//   integrity.safetensors-index    error    *.safetensors.index.json weight_map disagrees with the shard headers,
//                                           or its metadata.total_size with the bytes of the shards' tensors
//   integrity.shard-missing        error    a DeepSpeed ZeRO checkpoint lacks the optimizer partition of a rank
//                                           below the model states' dp_world_size
//   integrity.dcp-coverage         error    a DCP folder (formats.md §5) whose .metadata chunks do not tile a
//                                           tensor, point into a missing __R_N.distcp or past its end; data
//                                           files without .metadata (the save did not commit)
//                                  warning  .distcp files .metadata never refers to; .metadata unreadable
//                                           (a save without a process group has per-rank __N.metadata instead:
//                                           their union is checked)
//
// Findings about RNG files use Component::Rng, all others Component::Integrity. Evidence
// `where` strings name the source: "checkpoint-0000100/manifest.json: files.model.pt.sha256"
// or "checkpoint-0000100/model.pt" for what is on disk. Finding::checkpoints holds the
// checkpoint directory paths and Finding::file the file's path, both joined onto the PATH
// given (so a relative PATH gives relative paths).
#pragma once

#include "ckpt/findings/finding.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ckpt {

struct AuditProgress {
    uint64_t bytesDone = 0, bytesTotal = 0;
    std::size_t filesDone = 0, filesTotal = 0;
};

struct AuditOptions {
    unsigned threads = 0; // hashing threads; 0: std::thread::hardware_concurrency()
    /// Called before hashing starts, after every chunk (256 KiB) and every file hashed, and once at
    /// the end. It runs on the hashing threads but never concurrently with itself. Return false to
    /// cancel: the threads stop at their next chunk and the result has cancelled = true.
    std::function<bool(const AuditProgress&)> progress;
};

struct AuditResult {
    std::size_t filesChecked = 0; // manifest-listed files whose size and hash were checked to the end
    uint64_t bytesHashed = 0;     // bytes passed through SHA-256
    std::vector<Finding> findings;
    bool cancelled = false;       // when true, findings are partial (only what was checked)
    std::size_t checkpoints = 0;  // checkpoint directories audited
};

/// PATH: a checkpoint directory (has manifest.json, COMPLETE, or another layout's marker listed under
/// integrity.no-manifest, or is named checkpoint-*), a run directory holding checkpoint-*, checkpoint_*,
/// global_step* or step-* folders (directly, or under checkpoints/ as accelerate keeps them; audits
/// each, plus the `latest` pointer), or a manifest.json file (audits its directory). Files are opened read-only (O_NOATIME where
/// permitted); nothing is written or locked. Findings come in a stable order: by checkpoint,
/// then manifest order, then run-level findings.
/// Throws OpenError (core/formats/include/ckpt/formats/checkpoint_file.h; what() = "PATH: reason") when PATH does not exist,
/// cannot be listed, or is neither kind of directory.
AuditResult auditPath(const std::string& path, const AuditOptions& options = {});

/// `ckpt audit PATH --json`: {"path", "checkpoints", "files_checked", "bytes_hashed", "cancelled",
/// "counts": {"error", "warning", "info"}, "findings": [{"rule", "severity", "component", "message",
/// "evidence": [{"what", "value", "where"}], "checkpoints": [...], "file", "hint"}]}
nlohmann::json auditResultToJson(const std::string& path, const AuditResult& result);

} // namespace ckpt
