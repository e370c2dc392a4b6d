// SPDX-License-Identifier: MIT
// The manifest audit's working state, shared by its parts: manifest_audit.cpp (what is
// listed and on disk), audit_layout_checks.cpp (RNG files per rank, safetensors indexes, DCP
// coverage), audit_hashing.cpp (SHA-256 in parallel) and audit_latest.cpp (the `latest` pointer).
#pragma once

#include "audit_hints.h"
#include "audit_support.h"
#include "ckpt/audit/manifest_audit.h"

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ckpt::audit {

namespace fs = std::filesystem;

struct FileCheck {
    std::size_t checkpoint = 0;
    std::string name;    // as normalised from the manifest, relative to the checkpoint dir
    std::string path;    // display path (PATH-joined)
    std::string fsPath;  // what we open
    uint64_t sizeOnDisk = 0;
    std::optional<uint64_t> expectedBytes;
    std::optional<std::string> expectedSha;
    // filled by the hashing threads
    std::optional<std::string> actualSha;
    std::string readError;
    std::vector<Finding> findings; // in check order
};

struct Checkpoint {
    std::string dir;     // display path
    std::string fsDir;   // path we use for the filesystem
    std::string label;   // "checkpoint-0000100", prefix of `where` strings
    std::optional<int64_t> step;
    bool hasComplete = false;
    /// No manifest and no COMPLETE, but the commit marker of another layout: "trainer_state.json"
    /// (Hugging Face Trainer, written last) or ".metadata" (torch.distributed.checkpoint).
    std::string nativeMarker;
    bool manifestOk = false; // manifest read, parsed and has a `files` object
    std::optional<int64_t> worldSize;
    std::vector<Finding> manifestFindings;
    std::vector<std::size_t> files; // indices into Auditor::m_checks, manifest order
    /// Has its commit marker and something to verify against.
    bool committed() const { return (hasComplete && manifestOk) || !nativeMarker.empty(); }
    std::vector<Finding> laterFindings;
    std::size_t errors = 0;
};

class Auditor {
public:
    explicit Auditor(const AuditOptions& options) : m_options(options) {}

    AuditResult run(const std::string& path);

private:
    void addCheckpoint(const std::string& display, const fs::path& fsDir, const std::string& label);
    void inspect(Checkpoint& c, std::size_t index);
    void readManifest(Checkpoint& c, std::size_t index, std::set<std::string>& listed);
    void walk(Checkpoint& c, const std::set<std::string>& listed);
    void checkRng(Checkpoint& c, const std::set<std::string>& onDisk, const std::set<std::string>& listed);
    void checkSafetensorsIndex(Checkpoint& c, const std::string& indexName);
    void checkDcp(Checkpoint& c, const std::string& shown, std::vector<std::string> distcpFiles);
    void checkZeroRanks(Checkpoint& c);
    void hashAll();
    void finishFiles();
    void checkLatest(const std::string& runDisplay, const fs::path& runDir);

    Finding make(const std::string& rule, Severity severity, const Checkpoint& c, std::string message,
                 const char* hint, const std::string& file = {}) const
    {
        Finding f;
        f.rule = rule;
        f.severity = severity;
        f.component = !file.empty() && isRngFile(file) ? Component::Rng : Component::Integrity;
        f.message = std::move(message);
        f.checkpoints = {c.dir};
        if (!file.empty())
            f.file = joinDisplay(c.dir, file);
        f.hint = hint;
        return f;
    }
    std::string where(const Checkpoint& c, const std::string& rest) const { return c.label + "/" + rest; }

    const AuditOptions& m_options;
    std::vector<Checkpoint> m_checkpoints;
    std::vector<FileCheck> m_checks;
    std::vector<std::size_t> m_hashJobs; // indices into m_checks
    std::vector<Finding> m_runFindings;
    AuditResult m_result;
};

} // namespace ckpt::audit
