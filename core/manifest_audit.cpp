// SPDX-License-Identifier: MIT
#include "core/manifest_audit.h"

#include "core/read_only_file.h"

#include "core/checkpoint_file.h"
#include "core/dcp_checkpoint.h"
#include "core/errors.h"
#include "core/mapped_file.h"
#include "core/safetensors_format.h"
#include "core/sha256.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace ckpt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kManifestLimit = 64u << 20;     // bytes of manifest.json / index JSON we read
constexpr std::size_t kLatestLimit = 4096;            // a pointer file holds a name, not data
constexpr std::size_t kMaxFindingsPerKind = 16;       // per checkpoint, then one summary finding
constexpr std::size_t kMaxUnexpectedFiles = 50;
constexpr std::size_t kMaxNamesInMessage = 5;
constexpr int kMaxWalkDepth = 16;
constexpr int64_t kMaxWorldSize = int64_t{1} << 24;

// ---- hints (recovery guide §4.4, §6.2, §6.3, §7.2, §7.3, §8.3; formats.md §5, §6) ----------

constexpr const char* kHintHash =
    "The bytes differ from what the manifest recorded at save time: damage in a copy, upload or on the storage, "
    "or the file was rewritten after its manifest. The hash detects corruption, not semantic correctness (guide "
    "§6.3). Do not resume from this checkpoint: re-copy the file from its source, or roll back to the previous "
    "checkpoint whose manifest verifies (§8.3).";
constexpr const char* kHintSize =
    "A shorter file usually means a truncated write or an interrupted copy/upload; a longer one a file rewritten "
    "or appended to after the manifest was written. Re-copy it from the source, or roll back to the previous "
    "checkpoint whose manifest verifies (guide §8.3).";
constexpr const char* kHintMissing =
    "Listed in the manifest but absent: a partial copy or sync, a retention job that deleted part of the "
    "checkpoint, or a rank that never finished writing. Without it the directory is not a complete training "
    "state (guide §7.2); restore the file or roll back to the previous complete checkpoint.";
constexpr const char* kHintUnreadable =
    "The file exists but could not be read, so it cannot be verified: check its permissions and the storage "
    "(I/O errors often precede data loss).";
constexpr const char* kHintUnexpected =
    "Not covered by the manifest, so it cannot be verified: left over from an earlier save into the same "
    "directory, or added afterwards. If the training code reads it on resume, the saver should list it in "
    "manifest.json (guide §6.3); otherwise remove it or keep it outside the checkpoint directory.";
constexpr const char* kHintComplete =
    "COMPLETE is written last, after every shard and the manifest (guide §6.2): without it the save may have "
    "died midway. A recovery should only accept directories that have COMPLETE and a manifest that verifies; "
    "resume from the previous complete checkpoint.";
constexpr const char* kHintHfTrainer =
    "Hugging Face Trainer checkpoints carry no manifest (formats.md §7): trainer_state.json, written last, is the "
    "only completeness signal, and nothing records the files' sizes or hashes. To make copies verifiable, write a "
    "manifest.json with the size and SHA-256 of every file at save time (guide §6.3).";
constexpr const char* kHintDcpNoManifest =
    "torch.distributed.checkpoint writes .metadata last as its commit marker (formats.md §5.1) and records no "
    "hashes: truncation inside a chunk or bit rot cannot be detected. To make copies verifiable, write a "
    "manifest.json with the size and SHA-256 of every file and a COMPLETE marker after the save (guide §6.2-6.3).";
constexpr const char* kHintManifest =
    "manifest.json records the size and SHA-256 of every file and the world size (guide §6.3); it is written "
    "just before COMPLETE. Without a readable manifest nothing in this directory can be verified: treat it as "
    "incomplete and resume from the previous checkpoint whose manifest verifies.";
constexpr const char* kHintRngMissing =
    "Every rank keeps its own RNG state (guide §4.4) and each rank must save it (§7.1). Resuming without one "
    "rank's file changes that rank's dropout, augmentation and sampling streams, so the run no longer continues "
    "the same trajectory. Check that all ranks finished writing before COMPLETE was written (§7.2), and that "
    "world_size in the manifest is the one the job ran with.";
constexpr const char* kHintRngExtra =
    "An RNG file for a rank the manifest's world_size does not have: left over from a save with more ranks, or "
    "a wrong world_size in the manifest. Changing the world size is not a plain reload (guide §7.3).";
constexpr const char* kHintLatest =
    "`latest` is only a pointer, registered after COMPLETE (guide §6.2, §8.3). A broken pointer makes a resume "
    "start from scratch or fail; point it at the newest checkpoint whose manifest verifies.";
constexpr const char* kHintLatestBad =
    "`latest` must only name a checkpoint that has COMPLETE and a manifest that verifies (guide §6.2): a resume "
    "from this one would load damaged or partial state. Point `latest` back at the newest checkpoint that "
    "verifies (§8.3) and keep the damaged one for inspection.";
constexpr const char* kHintNoLatest =
    "The guide's layout registers each committed checkpoint as `latest` (§6.2). Without it a resume script has to "
    "guess which directory to use; write the newest verified checkpoint's name into `latest`.";
constexpr const char* kHintStale =
    "The save may have died between writing COMPLETE and updating `latest` (guide §8): resuming from `latest` "
    "repeats work already done. Check the newer checkpoint and, if it verifies, point `latest` at it.";
constexpr const char* kHintIndex =
    "The sharded index and the shard headers disagree (formats.md §6-7): shards from different saves mixed "
    "together, a shard rewritten after the index, or a partial copy. Loading maps tensors to the wrong file or "
    "fails with missing keys; re-copy the shards and the index from one save.";
constexpr const char* kHintDcp =
    "A torch.distributed.checkpoint directory (formats.md §5): the .distcp files are verified like any other file "
    "through the manifest, but whether their chunks cover every tensor in .metadata is not checked yet.";
constexpr const char* kHintDcpCoverage =
    "In a torch.distributed.checkpoint folder .metadata is the only index (formats.md §5.2-5.3): every tensor's "
    "chunks must tile its global shape and each chunk must lie inside its __<rank>_<n>.distcp file. A gap means "
    "a rank's data is missing or from another save (guide §7.2: a partial set of shards is not a recoverable "
    "checkpoint); do not load it, use the previous checkpoint.";
constexpr const char* kHintDcpUnreadable =
    "The DCP .metadata could not be read by the safe pickle reader, so chunk coverage was not checked; the files "
    "are still verified through manifest.json. Inspect it with `ckpt tree` or torch.distributed.checkpoint.";
constexpr const char* kHintDcpUncommitted =
    "DCP writes .metadata last, as its commit marker (formats.md §5.1): data files without it mean the save did "
    "not finish on the coordinator. Do not load this directory; use the previous checkpoint.";

// ---- small helpers -------------------------------------------------------------------------

std::string stripTrailingSlashes(std::string s)
{
    while (s.size() > 1 && s.back() == '/')
        s.pop_back();
    return s;
}

std::string joinDisplay(const std::string& base, const std::string& rel)
{
    if (base.empty() || base == ".")
        return rel;
    return base.back() == '/' ? base + rel : base + "/" + rel;
}

std::string listNames(const std::vector<std::string>& names, std::size_t max = kMaxNamesInMessage)
{
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < max; ++i)
        out += (i ? ", " : "") + names[i];
    if (names.size() > max)
        out += ", ... (" + std::to_string(names.size() - max) + " more)";
    return out;
}

/// Reads a small regular file; on failure returns nullopt and sets `error` to a reason.
std::optional<std::string> readSmallFile(const std::string& path, std::size_t limit, std::string& error)
{
    uint64_t size = 0;
    std::optional<FileDescriptor> opened;
    try {
        opened.emplace(openRegularFileReadOnly(path, &size));
    } catch (const FormatError& e) {
        error = e.what();
        return std::nullopt;
    }
    const int fd = opened->get();
    if (size > limit) {
        error = "is " + std::to_string(size) + " bytes, more than the " + std::to_string(limit) + " read";
        return std::nullopt;
    }
    std::string out;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            error = std::string("read error: ") + std::strerror(errno);
            return std::nullopt;
        }
        if (n == 0)
            break;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > limit) {
            error = "is larger than the " + std::to_string(limit) + " bytes read";
            return std::nullopt;
        }
    }
    return out;
}

/// "[json.exception.parse_error.101] parse error at line 1, ..." -> "parse error at line 1, ..."
std::string jsonErrorText(const std::exception& e)
{
    std::string s = e.what();
    if (s.starts_with("[json.exception.")) {
        const auto close = s.find("] ");
        if (close != std::string::npos)
            s = s.substr(close + 2);
    }
    return s;
}

/// A manifest value as evidence text. json::dump() recurses once per nesting level, so a hostile
/// manifest.json of 400 000 nested brackets (800 KB) overflowed the stack (found fuzzing): values
/// nested deeper than a real entry ever is are named by type instead.
std::string evidenceText(const json& value)
{
    constexpr std::size_t kMaxDumpDepth = 32;
    std::vector<std::pair<const json*, std::size_t>> pending{{&value, 1}};
    while (!pending.empty()) {
        const auto [v, depth] = pending.back();
        pending.pop_back();
        if (!v->is_structured())
            continue;
        if (depth > kMaxDumpDepth)
            return std::string("a JSON ") + value.type_name() + " nested more than " + std::to_string(kMaxDumpDepth)
                 + " levels deep";
        for (const auto& child : *v)
            pending.emplace_back(&child, depth + 1);
    }
    return value.dump();
}

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

std::optional<uint64_t> parseDigits(std::string_view s)
{
    if (s.empty() || s.size() > 18)
        return std::nullopt;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return std::nullopt;
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    return v;
}

/// The rank of an RNG state file name: rng-rank-N.pt, rng_state_N.pth; rng_state.pth is rank 0
/// of a single-process run (flagged through `single`).
std::optional<uint64_t> rngRank(std::string_view name, bool* single = nullptr)
{
    if (single)
        *single = false;
    if (name == "rng_state.pth") {
        if (single)
            *single = true;
        return 0;
    }
    if (name.starts_with("rng-rank-") && name.ends_with(".pt"))
        return parseDigits(name.substr(9, name.size() - 9 - 3));
    if (name.starts_with("rng_state_") && name.ends_with(".pth"))
        return parseDigits(name.substr(10, name.size() - 10 - 4));
    return std::nullopt;
}

bool isRngFile(const std::string& relative)
{
    const auto slash = relative.find_last_of('/');
    return rngRank(slash == std::string::npos ? relative : relative.substr(slash + 1)).has_value();
}

std::optional<uint64_t> stepFromName(const std::string& name)
{
    if (!name.starts_with("checkpoint-"))
        return std::nullopt;
    return parseDigits(std::string_view(name).substr(11));
}

bool isHex64(const std::string& s)
{
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
           });
}

std::string lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// A manifest file name we are willing to open: relative, no "..", no empty components.
std::optional<std::string> safeRelative(const std::string& name)
{
    if (name.empty() || name.find('\0') != std::string::npos || name.front() == '/')
        return std::nullopt;
    const fs::path p = fs::path(name).lexically_normal();
    for (const auto& part : p) {
        if (part == "..")
            return std::nullopt;
    }
    std::string out = p.generic_string();
    if (out.empty() || out == "." || out.back() == '/')
        return std::nullopt;
    return out;
}

// ---- the audit -------------------------------------------------------------------------

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
    std::optional<uint64_t> step;
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

void Auditor::addCheckpoint(const std::string& display, const fs::path& fsDir, const std::string& label)
{
    Checkpoint c;
    c.dir = display;
    c.fsDir = fsDir.string();
    c.label = label;
    c.step = stepFromName(label);
    m_checkpoints.push_back(std::move(c));
}

void Auditor::readManifest(Checkpoint& c, std::size_t index, std::set<std::string>& listed)
{
    const std::string manifestPath = (fs::path(c.fsDir) / "manifest.json").string();
    const std::string mWhere = where(c, "manifest.json");
    auto unreadable = [&](Severity sev, std::string message, std::string what, std::string value, std::string at) {
        Finding f = make("integrity.manifest-unreadable", sev, c, std::move(message), kHintManifest, "manifest.json");
        f.evidence.push_back({std::move(what), std::move(value), std::move(at)});
        c.manifestFindings.push_back(std::move(f));
    };

    std::error_code ec;
    const auto st = fs::symlink_status(manifestPath, ec);
    if ((ec || !fs::exists(st)) && !c.nativeMarker.empty()) {
        const bool hf = c.nativeMarker == "trainer_state.json";
        Finding f = make("integrity.no-manifest", Severity::Info, c,
                         c.label + (hf ? " is a Hugging Face Trainer checkpoint" : " is a torch.distributed.checkpoint folder") +
                             " without manifest.json: its file sizes and hashes cannot be verified" +
                             (hf ? "" : " (chunk coverage is checked against .metadata)"),
                         hf ? kHintHfTrainer : kHintDcpNoManifest, "manifest.json");
        f.evidence.push_back({"manifest.json", "absent", c.label + "/"});
        f.evidence.push_back({c.nativeMarker, hf ? "present (the Trainer writes it last)" : "present (DCP's commit marker)",
                              where(c, c.nativeMarker)});
        c.manifestFindings.push_back(std::move(f));
        return;
    }
    if (ec || !fs::exists(st)) {
        unreadable(Severity::Error, c.label + " has no manifest.json, so none of its files can be verified",
                   "manifest.json", "absent", c.label + "/");
        return;
    }
    std::string error;
    const auto text = readSmallFile(manifestPath, kManifestLimit, error);
    if (!text) {
        unreadable(Severity::Error, c.label + "/manifest.json cannot be read: " + error, "manifest.json", error, mWhere);
        return;
    }
    json doc;
    try {
        doc = json::parse(*text);
    } catch (const std::exception& e) {
        unreadable(Severity::Error, c.label + "/manifest.json is not valid JSON: " + jsonErrorText(e), "JSON parser",
                   jsonErrorText(e), mWhere);
        return;
    }
    if (!doc.is_object()) {
        unreadable(Severity::Error, c.label + "/manifest.json is not a JSON object", "top-level JSON type",
                   doc.type_name(), mWhere);
        return;
    }
    const auto files = doc.find("files");
    if (files == doc.end() || !files->is_object()) {
        unreadable(Severity::Error, c.label + "/manifest.json has no \"files\" object listing the checkpoint's files",
                   "files", files == doc.end() ? "absent" : files->type_name(), mWhere + ": files");
        return;
    }
    c.manifestOk = true;

    if (const auto ws = doc.find("world_size"); ws != doc.end()) {
        if (ws->is_number_integer() && ws->get<int64_t>() >= 1 && ws->get<int64_t>() <= kMaxWorldSize)
            c.worldSize = ws->get<int64_t>();
        else
            unreadable(Severity::Warning,
                       c.label + "/manifest.json: world_size is not a positive integer, so RNG files per rank are not checked",
                       "world_size", evidenceText(*ws), mWhere + ": world_size");
    }
    if (!c.step) {
        if (const auto gs = doc.find("global_step"); gs != doc.end() && gs->is_number_unsigned())
            c.step = gs->get<uint64_t>();
    }

    for (const auto& [rawName, entry] : files->items()) {
        const std::string key = mWhere + ": files." + rawName;
        const auto name = safeRelative(rawName);
        if (!name) {
            unreadable(Severity::Error,
                       c.label + "/manifest.json lists \"" + rawName + "\", which is not a path inside the checkpoint directory",
                       "file name", rawName, key);
            continue;
        }
        if (!listed.insert(*name).second)
            continue; // "./a" and "a": the same file, checked once
        FileCheck check;
        check.checkpoint = index;
        check.name = *name;
        check.path = joinDisplay(c.dir, *name);
        check.fsPath = (fs::path(c.fsDir) / *name).string();
        if (!entry.is_object()) {
            unreadable(Severity::Error, c.label + "/manifest.json: the entry for " + *name + " is not an object",
                       "entry", entry.type_name(), key);
        } else {
            if (const auto b = entry.find("bytes"); b != entry.end()) {
                if (b->is_number_unsigned())
                    check.expectedBytes = b->get<uint64_t>();
                else
                    unreadable(Severity::Error,
                               c.label + "/manifest.json: \"bytes\" of " + *name + " is not a non-negative integer",
                               "bytes", evidenceText(*b), key + ".bytes");
            }
            if (const auto h = entry.find("sha256"); h != entry.end()) {
                if (h->is_string() && isHex64(h->get<std::string>()))
                    check.expectedSha = lower(h->get<std::string>());
                else
                    unreadable(Severity::Error,
                               c.label + "/manifest.json: \"sha256\" of " + *name + " is not 64 hex digits",
                               "sha256", evidenceText(*h), key + ".sha256");
            }
            if (!entry.contains("sha256") && !entry.contains("bytes"))
                unreadable(Severity::Warning,
                           c.label + "/manifest.json records neither bytes nor sha256 for " + *name + ": only its presence is checked",
                           "entry", evidenceText(entry), key);
            else if (!entry.contains("sha256"))
                unreadable(Severity::Warning,
                           c.label + "/manifest.json records no sha256 for " + *name + ": only its size is checked",
                           "entry", evidenceText(entry), key);
        }
        c.files.push_back(m_checks.size());
        m_checks.push_back(std::move(check));
    }
}

void Auditor::inspect(Checkpoint& c, std::size_t index)
{
    std::error_code ec;
    c.hasComplete = fs::exists(fs::path(c.fsDir) / "COMPLETE", ec);
    if (!c.hasComplete && !fs::exists(fs::path(c.fsDir) / "manifest.json", ec)) {
        for (const char* marker : {"trainer_state.json", ".metadata"}) {
            if (fs::exists(fs::path(c.fsDir) / marker, ec)) {
                c.nativeMarker = marker;
                break;
            }
        }
    }

    std::set<std::string> listed;
    readManifest(c, index, listed);

    // Listed files: present? right size? Hashing comes later, in parallel.
    for (std::size_t i : c.files) {
        FileCheck& f = m_checks[i];
        const std::string mKey = where(c, "manifest.json: files." + f.name);
        struct stat st {};
        if (::stat(f.fsPath.c_str(), &st) != 0) {
            const int err = errno;
            if (err == ENOENT || err == ENOTDIR) {
                Finding fi = make("integrity.missing-file", Severity::Error, c,
                                  c.label + ": " + f.name + " is listed in manifest.json but does not exist", kHintMissing, f.name);
                if (f.expectedBytes)
                    fi.evidence.push_back({"bytes in manifest", std::to_string(*f.expectedBytes), mKey + ".bytes"});
                else
                    fi.evidence.push_back({"listed in manifest", f.name, mKey});
                fi.evidence.push_back({"on disk", "absent", where(c, f.name)});
                f.findings.push_back(std::move(fi));
            } else {
                f.readError = std::string("cannot stat: ") + std::strerror(err);
            }
            continue;
        }
        if (!S_ISREG(st.st_mode)) {
            f.readError = S_ISDIR(st.st_mode) ? "is a directory, not a file" : "is not a regular file";
            continue;
        }
        f.sizeOnDisk = static_cast<uint64_t>(st.st_size);
        if (f.expectedBytes && *f.expectedBytes != f.sizeOnDisk) {
            const bool shorter = f.sizeOnDisk < *f.expectedBytes;
            Finding fi = make("integrity.size-mismatch", Severity::Error, c,
                              c.label + ": " + f.name + " has " + std::to_string(f.sizeOnDisk) + " bytes but manifest.json records " +
                                  std::to_string(*f.expectedBytes) + (shorter ? " (truncated?)" : ""),
                              kHintSize, f.name);
            fi.evidence.push_back({"bytes in manifest", std::to_string(*f.expectedBytes), mKey + ".bytes"});
            fi.evidence.push_back({"bytes on disk", std::to_string(f.sizeOnDisk), where(c, f.name)});
            f.findings.push_back(std::move(fi));
        }
        if (f.expectedSha)
            m_hashJobs.push_back(i);
        else
            ++m_result.filesChecked; // size (or presence) is all the manifest lets us check
    }

    if (!c.hasComplete && c.nativeMarker.empty()) {
        Finding fi = make("integrity.no-complete-marker", Severity::Error, c,
                          c.label + " has no COMPLETE marker: the save may not have finished", kHintComplete, "COMPLETE");
        fi.evidence.push_back({"COMPLETE", "absent", where(c, "COMPLETE")});
        c.laterFindings.push_back(std::move(fi));
    }
    walk(c, listed);
}

void Auditor::walk(Checkpoint& c, const std::set<std::string>& listed)
{
    const fs::path root(c.fsDir);
    std::set<std::string> topLevel;                    // names of regular files directly inside
    std::vector<std::string> unexpected;
    std::vector<std::string> indexFiles;               // *.safetensors.index.json
    std::map<std::string, std::vector<std::string>> dcpDirs; // dir -> .distcp files
    std::set<std::string> dcpMetadata;                 // dirs with a .metadata (or only __N.metadata)
    std::set<std::string> dcpIndexed;                  // dirs with the coordinator's .metadata

    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    if (ec) {
        Finding fi = make("integrity.file-unreadable", Severity::Error, c,
                          c.label + " cannot be listed: " + ec.message(), kHintUnreadable);
        fi.evidence.push_back({"directory listing", ec.message(), c.label + "/"});
        c.laterFindings.push_back(std::move(fi));
        return;
    }
    for (; it != end; it.increment(ec)) {
        if (ec)
            break;
        const fs::directory_entry& e = *it;
        std::error_code sec;
        const auto st = e.symlink_status(sec);
        if (fs::is_directory(st)) {
            if (it.depth() >= kMaxWalkDepth)
                it.disable_recursion_pending();
            continue;
        }
        const std::string rel = e.path().lexically_relative(root).generic_string();
        const std::string base = e.path().filename().string();
        const std::string parent = e.path().parent_path().lexically_relative(root).generic_string();
        if (it.depth() == 0 && e.is_regular_file(sec)) // follows a symlinked RNG file
            topLevel.insert(base);
        if (base.ends_with(".safetensors.index.json"))
            indexFiles.push_back(rel);
        if (base == ".metadata" || (base.starts_with("__") && base.ends_with(".metadata")))
            dcpMetadata.insert(parent);
        if (base == ".metadata")
            dcpIndexed.insert(parent);
        if (base.starts_with("__") && base.ends_with(".distcp"))
            dcpDirs[parent].push_back(base);
        if (c.manifestOk && !listed.contains(rel) && !(it.depth() == 0 && (base == "COMPLETE" || base == "manifest.json")))
            unexpected.push_back(rel);
    }
    if (ec) {
        Finding fi = make("integrity.file-unreadable", Severity::Error, c,
                          c.label + " could not be listed completely: " + ec.message(), kHintUnreadable);
        fi.evidence.push_back({"directory listing", ec.message(), c.label + "/"});
        c.laterFindings.push_back(std::move(fi));
    }

    std::sort(unexpected.begin(), unexpected.end());
    for (std::size_t i = 0; i < unexpected.size() && i < kMaxUnexpectedFiles; ++i) {
        Finding fi = make("integrity.unexpected-file", Severity::Warning, c,
                          c.label + ": " + unexpected[i] + " is not listed in manifest.json, so it cannot be verified",
                          kHintUnexpected, unexpected[i]);
        fi.evidence.push_back({"on disk", unexpected[i], where(c, unexpected[i])});
        fi.evidence.push_back({"listed in manifest", "no", where(c, "manifest.json: files")});
        c.laterFindings.push_back(std::move(fi));
    }
    if (unexpected.size() > kMaxUnexpectedFiles) {
        std::vector<std::string> rest(unexpected.begin() + kMaxUnexpectedFiles, unexpected.end());
        Finding fi = make("integrity.unexpected-file", Severity::Warning, c,
                          c.label + ": " + std::to_string(rest.size()) + " more files are not listed in manifest.json: " + listNames(rest),
                          kHintUnexpected);
        fi.evidence.push_back({"unlisted files", std::to_string(unexpected.size()), c.label + "/"});
        c.laterFindings.push_back(std::move(fi));
    }

    checkRng(c, topLevel, listed);

    std::sort(indexFiles.begin(), indexFiles.end());
    for (const auto& idx : indexFiles)
        checkSafetensorsIndex(c, idx);

    std::set<std::string> dcpAll = dcpMetadata;
    for (const auto& [dir, _] : dcpDirs)
        dcpAll.insert(dir);
    for (const auto& dir : dcpAll) {
        const std::string shown = dir.empty() || dir == "." ? std::string() : dir + "/";
        if (dcpIndexed.contains(dir)) {
            checkDcp(c, shown, dcpDirs[dir]);
        } else if (dcpMetadata.contains(dir)) {
            Finding fi = make("integrity.dcp-coverage", Severity::Info, c,
                              c.label + "/" + shown + " is a torch.distributed.checkpoint directory with per-rank "
                              "__N.metadata files only: DCP coverage not checked yet (its files are verified only through "
                              "manifest.json)",
                              kHintDcp, shown + ".metadata");
            fi.evidence.push_back({".metadata", "present", where(c, shown + ".metadata")});
            c.laterFindings.push_back(std::move(fi));
        } else {
            auto& names = dcpDirs[dir];
            std::sort(names.begin(), names.end());
            Finding fi = make("integrity.dcp-coverage", Severity::Error, c,
                              c.label + "/" + shown + " holds DCP data files (" + listNames(names) +
                                  ") but no .metadata: the distributed save did not commit",
                              kHintDcpUncommitted, shown + ".metadata");
            fi.evidence.push_back({".metadata", "absent", where(c, shown + ".metadata")});
            fi.evidence.push_back({".distcp files", std::to_string(names.size()), where(c, shown)});
            c.laterFindings.push_back(std::move(fi));
        }
    }
}

void Auditor::checkRng(Checkpoint& c, const std::set<std::string>& onDisk, const std::set<std::string>& listed)
{
    if (!c.worldSize)
        return;
    const auto ws = static_cast<uint64_t>(*c.worldSize);
    std::set<uint64_t> present;
    bool hfStyle = false, rankStyle = false;
    std::vector<std::string> extra;
    auto consider = [&](const std::string& name, bool fromDisk) {
        bool single = false;
        const auto rank = rngRank(name, &single);
        if (!rank)
            return;
        if (single && ws != 1)
            return;
        (name.starts_with("rng_state") ? hfStyle : rankStyle) = true;
        present.insert(*rank);
        if (fromDisk && *rank >= ws)
            extra.push_back(name);
    };
    for (const auto& name : onDisk)
        consider(name, true);
    for (const auto& name : listed) {
        if (name.find('/') == std::string::npos)
            consider(name, false); // a listed but missing file is already a missing-file finding
    }

    const std::string wsWhere = where(c, "manifest.json: world_size");
    std::vector<uint64_t> missing;
    for (uint64_t r = 0; r < ws; ++r) {
        if (!present.contains(r))
            missing.push_back(r);
    }
    auto expectedName = [&](uint64_t r) {
        return hfStyle && !rankStyle ? "rng_state_" + std::to_string(r) + ".pth" : "rng-rank-" + std::to_string(r) + ".pt";
    };
    for (std::size_t i = 0; i < missing.size() && i < kMaxFindingsPerKind; ++i) {
        const std::string name = expectedName(missing[i]);
        Finding fi = make("integrity.rng-rank-missing", Severity::Error, c,
                          c.label + ": no RNG state for rank " + std::to_string(missing[i]) + " of world_size " +
                              std::to_string(ws) + " (expected " + name + ")",
                          kHintRngMissing, name);
        fi.component = Component::Rng;
        fi.evidence.push_back({"world_size in manifest", std::to_string(ws), wsWhere});
        fi.evidence.push_back({"RNG files found", std::to_string(present.size()), c.label + "/"});
        c.laterFindings.push_back(std::move(fi));
    }
    if (missing.size() > kMaxFindingsPerKind) {
        const std::size_t more = missing.size() - kMaxFindingsPerKind;
        Finding fi = make("integrity.rng-rank-missing", Severity::Error, c,
                          c.label + ": RNG state is also missing for " + std::to_string(more) + " more ranks (" +
                              std::to_string(missing[kMaxFindingsPerKind]) + " to " + std::to_string(missing.back()) + ")",
                          kHintRngMissing);
        fi.component = Component::Rng;
        fi.evidence.push_back({"world_size in manifest", std::to_string(ws), wsWhere});
        fi.evidence.push_back({"ranks without RNG state", std::to_string(missing.size()), c.label + "/"});
        c.laterFindings.push_back(std::move(fi));
    }
    for (std::size_t i = 0; i < extra.size() && i < kMaxFindingsPerKind; ++i) {
        Finding fi = make("integrity.rng-rank-extra", Severity::Warning, c,
                          c.label + ": " + extra[i] + " belongs to a rank outside world_size " + std::to_string(ws),
                          kHintRngExtra, extra[i]);
        fi.evidence.push_back({"world_size in manifest", std::to_string(ws), wsWhere});
        fi.evidence.push_back({"RNG file", extra[i], where(c, extra[i])});
        c.laterFindings.push_back(std::move(fi));
    }
}

void Auditor::checkSafetensorsIndex(Checkpoint& c, const std::string& indexName)
{
    const fs::path indexPath = fs::path(c.fsDir) / indexName;
    const std::string indexDirRel = fs::path(indexName).parent_path().generic_string();
    auto rel = [&](const std::string& shard) { return indexDirRel.empty() ? shard : indexDirRel + "/" + shard; };
    auto problem = [&](std::string message, const std::string& file) {
        return make("integrity.safetensors-index", Severity::Error, c, std::move(message), kHintIndex, file);
    };

    std::string error;
    const auto text = readSmallFile(indexPath.string(), kManifestLimit, error);
    SafetensorsIndex index;
    try {
        if (!text)
            throw FormatError("cannot be read: " + error);
        index = parseSafetensorsIndex(*text);
    } catch (const std::exception& e) {
        Finding fi = problem(c.label + ": " + indexName + " is not a usable safetensors index: " + e.what(), indexName);
        fi.evidence.push_back({"index", e.what(), where(c, indexName)});
        c.laterFindings.push_back(std::move(fi));
        return;
    }

    std::map<std::string, std::vector<std::string>> byShard; // shard -> tensors, in index order
    std::map<std::string, std::string> shardOf;
    for (const auto& [tensor, shard] : index.weightMap) {
        byShard[shard].push_back(tensor);
        shardOf[tensor] = shard;
    }
    for (const auto& [shard, tensors] : byShard) {
        const std::string shardRel = rel(shard);
        std::set<std::string> held;
        try {
            const MappedFile file = MappedFile::open((fs::path(c.fsDir) / shardRel).string());
            for (const auto& t : parseSafetensors(file.bytes()).tensors)
                held.insert(t.name);
        } catch (const std::exception& e) {
            Finding fi = problem(c.label + ": shard " + shardRel + " that " + indexName + " maps " +
                                     std::to_string(tensors.size()) + " tensors to cannot be read: " + e.what(),
                                 shardRel);
            fi.evidence.push_back({"tensors mapped to the shard", std::to_string(tensors.size()),
                                   where(c, indexName + ": weight_map." + tensors.front())});
            fi.evidence.push_back({"shard", e.what(), where(c, shardRel)});
            c.laterFindings.push_back(std::move(fi));
            continue;
        }
        std::vector<std::string> absent;
        for (const auto& t : tensors) {
            if (!held.contains(t))
                absent.push_back(t);
        }
        std::vector<std::string> unlisted; // in the shard, not mapped to it
        for (const auto& t : held) {
            const auto it = shardOf.find(t);
            if (it == shardOf.end() || it->second != shard)
                unlisted.push_back(t);
        }
        if (!absent.empty()) {
            Finding fi = problem(c.label + ": " + indexName + " maps " + std::to_string(absent.size()) + " tensor" +
                                     (absent.size() == 1 ? "" : "s") + " to " + shardRel + " that its header lacks: " +
                                     listNames(absent),
                                 shardRel);
            for (std::size_t i = 0; i < absent.size() && i < kMaxNamesInMessage; ++i)
                fi.evidence.push_back({"tensor in weight_map", absent[i] + " -> " + shard,
                                       where(c, indexName + ": weight_map." + absent[i])});
            fi.evidence.push_back({"tensors in shard header", std::to_string(held.size()), where(c, shardRel)});
            c.laterFindings.push_back(std::move(fi));
        }
        if (!unlisted.empty()) {
            Finding fi = problem(c.label + ": " + shardRel + " holds " + std::to_string(unlisted.size()) + " tensor" +
                                     (unlisted.size() == 1 ? "" : "s") + " that " + indexName + " does not map to it: " +
                                     listNames(unlisted),
                                 shardRel);
            for (std::size_t i = 0; i < unlisted.size() && i < kMaxNamesInMessage; ++i) {
                const auto it = shardOf.find(unlisted[i]);
                fi.evidence.push_back({"tensor in shard header", unlisted[i], where(c, shardRel)});
                fi.evidence.push_back({"weight_map entry", it == shardOf.end() ? "absent" : unlisted[i] + " -> " + it->second,
                                       where(c, indexName + ": weight_map." + unlisted[i])});
            }
            c.laterFindings.push_back(std::move(fi));
        }
    }
}

void Auditor::checkDcp(Checkpoint& c, const std::string& shown, std::vector<std::string> distcpFiles)
{
    const fs::path dir = fs::path(c.fsDir) / shown;
    const std::string metaRel = shown + ".metadata";
    DcpCheckpoint dcp;
    try {
        dcp = readDcpCheckpoint(dir.lexically_normal().string());
    } catch (const std::exception& e) {
        Finding fi = make("integrity.dcp-coverage", Severity::Warning, c,
                          c.label + "/" + metaRel + " cannot be read (" + e.what() + "): DCP coverage not checked",
                          kHintDcpUnreadable, metaRel);
        fi.evidence.push_back({".metadata", e.what(), where(c, metaRel)});
        c.laterFindings.push_back(std::move(fi));
        return;
    }

    std::vector<std::string> untiled;                         // "fqn (problem)"
    std::vector<Evidence> untiledEvidence;
    std::map<std::string, std::vector<std::string>> absent;   // data file -> tensors with chunks in it
    std::vector<std::string> outside;                         // "fqn in file"
    std::vector<Evidence> outsideEvidence;
    std::map<std::string, std::optional<uint64_t>> sizes;     // data file -> size, nullopt when absent
    std::set<std::string> referenced;
    for (const auto& e : dcp.entries) {
        if (!e.problem.empty()) {
            untiled.push_back(e.fqn + " (" + e.problem + ")");
            if (untiledEvidence.size() < kMaxNamesInMessage)
                untiledEvidence.push_back({"chunks of " + e.fqn, e.problem, where(c, metaRel + ": state_dict_metadata." + e.fqn)});
        }
        for (const auto& chunk : e.chunks) {
            if (chunk.file.empty())
                continue; // already an entry problem
            const auto rel = safeRelative(chunk.file);
            if (!rel) {
                untiled.push_back(e.fqn + " (stored at \"" + chunk.file + "\", outside the folder)");
                continue;
            }
            referenced.insert(*rel);
            auto [it, fresh] = sizes.try_emplace(*rel);
            if (fresh) {
                struct stat st {};
                if (::stat((dir / *rel).c_str(), &st) == 0 && S_ISREG(st.st_mode))
                    it->second = static_cast<uint64_t>(st.st_size);
            }
            if (!it->second) {
                auto& names = absent[*rel];
                if (names.empty() || names.back() != e.fqn)
                    names.push_back(e.fqn);
            } else if (chunk.offset > *it->second || chunk.length > *it->second - chunk.offset) {
                outside.push_back(e.fqn + " in " + *rel);
                if (outsideEvidence.size() < kMaxNamesInMessage)
                    outsideEvidence.push_back({"chunk of " + e.fqn,
                                               "bytes " + std::to_string(chunk.offset) + "+" + std::to_string(chunk.length) +
                                                   " of a " + std::to_string(*it->second) + "-byte file",
                                               where(c, metaRel + ": storage_data." + e.fqn)});
            }
        }
    }
    for (const auto& [file, tensors] : absent) {
        Finding fi = make("integrity.dcp-coverage", Severity::Error, c,
                          c.label + "/" + metaRel + " stores chunks of " + std::to_string(tensors.size()) + " tensor" +
                              (tensors.size() == 1 ? "" : "s") + " in " + file + ", which does not exist: " + listNames(tensors),
                          kHintDcpCoverage, shown + file);
        fi.evidence.push_back({"chunk location", file, where(c, metaRel + ": storage_data." + tensors.front())});
        fi.evidence.push_back({"on disk", "absent", where(c, shown + file)});
        c.laterFindings.push_back(std::move(fi));
    }
    if (!outside.empty()) {
        Finding fi = make("integrity.dcp-coverage", Severity::Error, c,
                          c.label + "/" + metaRel + ": " + std::to_string(outside.size()) + " chunk" +
                              (outside.size() == 1 ? " lies beyond the end of its data file: " : "s lie beyond the end of their data files: ") +
                              listNames(outside),
                          kHintDcpCoverage, metaRel);
        fi.evidence = std::move(outsideEvidence);
        c.laterFindings.push_back(std::move(fi));
    }
    if (!untiled.empty()) {
        Finding fi = make("integrity.dcp-coverage", Severity::Error, c,
                          c.label + "/" + metaRel + ": " + std::to_string(untiled.size()) + " tensor" +
                              (untiled.size() == 1 ? " is" : "s are") + " not covered exactly by their chunks: " + listNames(untiled),
                          kHintDcpCoverage, metaRel);
        fi.evidence = std::move(untiledEvidence);
        c.laterFindings.push_back(std::move(fi));
    }
    std::sort(distcpFiles.begin(), distcpFiles.end());
    std::vector<std::string> unreferenced;
    for (const auto& f : distcpFiles) {
        if (!referenced.contains(f))
            unreferenced.push_back(f);
    }
    if (!unreferenced.empty()) {
        Finding fi = make("integrity.dcp-coverage", Severity::Warning, c,
                          c.label + "/" + shown + " holds data files that .metadata never refers to (left over from "
                                                  "another save?): " + listNames(unreferenced),
                          kHintDcpCoverage, shown + unreferenced.front());
        fi.evidence.push_back({"data files referenced by .metadata", std::to_string(referenced.size()), where(c, metaRel)});
        fi.evidence.push_back({"unreferenced data file", unreferenced.front(), where(c, shown + unreferenced.front())});
        c.laterFindings.push_back(std::move(fi));
    }
}

void Auditor::hashAll()
{
    if (m_hashJobs.empty())
        return;
    // Largest first, so the last file to finish is a small one and the threads end together.
    std::vector<std::size_t> order = m_hashJobs;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return m_checks[a].sizeOnDisk > m_checks[b].sizeOnDisk; });

    AuditProgress totals;
    totals.filesTotal = order.size();
    for (std::size_t i : order)
        totals.bytesTotal += m_checks[i].sizeOnDisk;

    std::atomic<uint64_t> bytesDone{0};
    std::atomic<std::size_t> filesDone{0}, next{0};
    std::atomic<bool> cancel{false};
    std::mutex progressMutex;
    std::exception_ptr callbackError;

    auto report = [&]() -> bool {
        if (!m_options.progress)
            return !cancel.load(std::memory_order_relaxed);
        std::lock_guard lock(progressMutex);
        if (cancel.load())
            return false;
        AuditProgress p = totals;
        p.bytesDone = bytesDone.load();
        p.filesDone = filesDone.load();
        bool keepGoing = false;
        try {
            keepGoing = m_options.progress(p);
        } catch (...) {
            callbackError = std::current_exception();
        }
        if (!keepGoing)
            cancel = true;
        return keepGoing;
    };

    auto worker = [&]() {
        Sha256 hasher;
        while (!cancel.load(std::memory_order_relaxed)) {
            const std::size_t k = next.fetch_add(1);
            if (k >= order.size())
                break;
            FileCheck& f = m_checks[order[k]];
            try {
                const auto r = sha256File(
                    f.fsPath,
                    [&](uint64_t n) {
                        bytesDone.fetch_add(n);
                        return report();
                    },
                    &hasher);
                f.actualSha = r.hex();
            } catch (const CancelledError&) {
                break;
            } catch (const std::exception& e) {
                f.readError = e.what();
            }
            filesDone.fetch_add(1);
            if (!report())
                break;
        }
    };

    if (!report()) {
        m_result.cancelled = true;
    } else {
        unsigned threads = m_options.threads ? m_options.threads : std::max(1u, std::thread::hardware_concurrency());
        threads = static_cast<unsigned>(std::min<std::size_t>(threads, order.size()));
        std::vector<std::thread> pool;
        for (unsigned t = 1; t < threads; ++t)
            pool.emplace_back(worker);
        worker(); // the calling thread is one of the workers
        for (auto& t : pool)
            t.join();
        if (cancel.load())
            m_result.cancelled = true;
        else
            report(); // the final 100%
    }
    if (callbackError)
        std::rethrow_exception(callbackError);
    m_result.bytesHashed = bytesDone.load();
}

void Auditor::finishFiles()
{
    for (auto& f : m_checks) {
        const Checkpoint& c = m_checkpoints[f.checkpoint];
        if (!f.readError.empty()) {
            Finding fi = make("integrity.file-unreadable", Severity::Error, c,
                              c.label + ": " + f.name + " cannot be read: " + f.readError, kHintUnreadable, f.name);
            fi.evidence.push_back({"read", f.readError, where(c, f.name)});
            f.findings.push_back(std::move(fi));
            continue;
        }
        if (!f.actualSha)
            continue;
        ++m_result.filesChecked;
        if (*f.actualSha != *f.expectedSha) {
            Finding fi = make("integrity.hash-mismatch", Severity::Error, c,
                              c.label + ": the SHA-256 of " + f.name + " does not match manifest.json", kHintHash, f.name);
            fi.evidence.push_back({"sha256 in manifest", *f.expectedSha, where(c, "manifest.json: files." + f.name + ".sha256")});
            fi.evidence.push_back({"sha256 on disk", *f.actualSha, where(c, f.name)});
            f.findings.push_back(std::move(fi));
        }
    }
    for (auto& c : m_checkpoints) {
        std::vector<Finding> all = std::move(c.manifestFindings);
        for (std::size_t i : c.files) {
            for (auto& fi : m_checks[i].findings)
                all.push_back(std::move(fi));
        }
        for (auto& fi : c.laterFindings)
            all.push_back(std::move(fi));
        c.errors = static_cast<std::size_t>(
            std::count_if(all.begin(), all.end(), [](const Finding& f) { return f.severity == Severity::Error; }));
        for (auto& fi : all)
            m_result.findings.push_back(std::move(fi));
    }
}

void Auditor::checkLatest(const std::string& runDisplay, const fs::path& runDir)
{
    const std::string latestDisplay = joinDisplay(runDisplay, "latest");
    const fs::path latestPath = runDir / "latest";
    auto finding = [&](const char* rule, Severity sev, std::string message, const char* hint) {
        Finding f;
        f.rule = rule;
        f.severity = sev;
        f.component = Component::Integrity;
        f.message = std::move(message);
        f.file = latestDisplay;
        f.hint = hint;
        return f;
    };
    // The newest checkpoint that is complete and verified: where a resume should go.
    const Checkpoint* newestGood = nullptr;
    for (const auto& c : m_checkpoints) {
        if (c.committed() && c.errors == 0 &&
            (!newestGood || (c.step.value_or(0) > newestGood->step.value_or(0)) ||
             (c.step == newestGood->step && c.label > newestGood->label)))
            newestGood = &c;
    }
    const std::string fallback = newestGood ? " The newest checkpoint that verifies is " + newestGood->dir + "."
                                            : " No checkpoint in this run verifies.";

    std::error_code ec;
    const auto st = fs::symlink_status(latestPath, ec);
    if (ec || !fs::exists(st)) {
        if (std::all_of(m_checkpoints.begin(), m_checkpoints.end(), [](const Checkpoint& c) { return !c.nativeMarker.empty(); }))
            return; // the Trainer and DCP keep no pointer; resumes pick the highest checkpoint-N
        Finding f = finding("integrity.latest-invalid", Severity::Warning, "the run has no `latest` pointer", kHintNoLatest);
        f.evidence.push_back({"latest", "absent", "latest"});
        f.hint += fallback;
        m_runFindings.push_back(std::move(f));
        return;
    }
    std::string named;
    if (fs::is_symlink(st)) {
        named = fs::read_symlink(latestPath, ec).string();
    } else if (fs::is_directory(st)) {
        Finding f = finding("integrity.latest-invalid", Severity::Warning,
                            "`latest` is a directory, not a pointer to a checkpoint-*/ folder; it is not audited", kHintLatest);
        f.evidence.push_back({"latest", "directory", "latest"});
        m_runFindings.push_back(std::move(f));
        return;
    } else {
        std::string error;
        const auto text = readSmallFile(latestPath.string(), kLatestLimit, error);
        if (!text) {
            Finding f = finding("integrity.latest-invalid", Severity::Error, "`latest` cannot be read: " + error, kHintLatest);
            f.evidence.push_back({"latest", error, "latest"});
            f.hint += fallback;
            m_runFindings.push_back(std::move(f));
            return;
        }
        named = trim(*text);
        if (named.empty() || named.find_first_of(std::string("\n\0", 2)) != std::string::npos) {
            Finding f = finding("integrity.latest-invalid", Severity::Error,
                                named.empty() ? "`latest` is empty" : "`latest` holds more than one line", kHintLatest);
            f.evidence.push_back({"`latest` holds", named.substr(0, 200), "latest"});
            f.hint += fallback;
            m_runFindings.push_back(std::move(f));
            return;
        }
    }

    const fs::path target = fs::path(named).is_absolute() ? fs::path(named) : runDir / named;
    const std::string targetDisplay = fs::path(named).is_absolute() ? named : joinDisplay(runDisplay, stripTrailingSlashes(named));
    std::error_code tec;
    const auto tst = fs::status(target, tec);
    if (tec || !fs::exists(tst) || !fs::is_directory(tst)) {
        Finding f = finding("integrity.latest-invalid", Severity::Error,
                            "`latest` points at " + named + ", which " +
                                (fs::exists(tst) ? "is not a directory" : "does not exist"),
                            kHintLatest);
        f.evidence.push_back({"`latest` names", named, "latest"});
        f.evidence.push_back({"target", fs::exists(tst) ? "not a directory" : "absent", named});
        f.checkpoints = {targetDisplay};
        f.hint += fallback;
        m_runFindings.push_back(std::move(f));
        return;
    }
    const Checkpoint* hit = nullptr;
    for (const auto& c : m_checkpoints) {
        std::error_code e1;
        if (fs::equivalent(target, c.fsDir, e1) && !e1)
            hit = &c;
    }
    if (!hit) {
        const bool complete = fs::exists(target / "COMPLETE", tec);
        const bool manifest = fs::exists(target / "manifest.json", tec);
        Finding f = complete && manifest
            ? finding("integrity.latest-invalid", Severity::Warning,
                      "`latest` points at " + named + ", which is not one of this run's checkpoint-*/ folders; it was not audited",
                      kHintLatest)
            : finding("integrity.latest-incomplete", Severity::Error,
                      "`latest` points at " + named + ", which has no " + (complete ? "manifest.json" : "COMPLETE marker"),
                      kHintComplete);
        f.evidence.push_back({"`latest` names", named, "latest"});
        f.checkpoints = {targetDisplay};
        f.hint += fallback;
        m_runFindings.push_back(std::move(f));
        return;
    }

    if (!hit->committed() || (hit->errors > 0 && !m_result.cancelled)) {
        std::string why = hit->committed() ? std::string()
            : !hit->hasComplete            ? "has no COMPLETE marker"
                                           : "has no readable manifest.json";
        if (why.empty())
            why = "fails verification (" + std::to_string(hit->errors) + " error" + (hit->errors == 1 ? "" : "s") + " above)";
        Finding f = finding("integrity.latest-incomplete", Severity::Error,
                            "`latest` points at " + hit->label + ", which " + why + ": a resume from it is not safe",
                            kHintComplete);
        f.evidence.push_back({"`latest` names", named, "latest"});
        f.evidence.push_back({"COMPLETE", hit->hasComplete ? "present" : "absent", hit->label + "/COMPLETE"});
        if (hit->errors)
            f.evidence.push_back({"errors in the checkpoint", std::to_string(hit->errors), hit->label + "/"});
        f.checkpoints = {hit->dir};
        f.hint = std::string(kHintLatestBad) + fallback;
        m_runFindings.push_back(std::move(f));
        return;
    }
    if (!m_result.cancelled && newestGood && newestGood != hit && hit->step && newestGood->step &&
        *newestGood->step > *hit->step) {
        Finding f = finding("integrity.latest-stale", Severity::Warning,
                            "`latest` points at " + hit->label + " but " + newestGood->label + " is newer, complete and verifies",
                            kHintStale);
        f.evidence.push_back({"`latest` names", named, "latest"});
        f.evidence.push_back({"newer complete checkpoint", newestGood->label, newestGood->label + "/COMPLETE"});
        f.checkpoints = {hit->dir, newestGood->dir};
        m_runFindings.push_back(std::move(f));
    }
}

AuditResult Auditor::run(const std::string& pathIn)
{
    const std::string path = stripTrailingSlashes(pathIn);
    struct stat st {};
    if (path.empty())
        throw OpenError(pathIn, "empty path");
    if (::stat(path.c_str(), &st) != 0)
        throw OpenError(pathIn, std::strerror(errno));

    std::string dirDisplay = path;
    if (S_ISREG(st.st_mode)) {
        if (fs::path(path).filename() != "manifest.json")
            throw OpenError(pathIn, "is a file; ckpt audit takes a checkpoint directory, a run directory or a manifest.json");
        dirDisplay = fs::path(path).parent_path().string();
        if (dirDisplay.empty())
            dirDisplay = ".";
    } else if (!S_ISDIR(st.st_mode)) {
        throw OpenError(pathIn, "is neither a directory nor a file");
    }

    std::error_code ec;
    const fs::path canonical = fs::canonical(dirDisplay, ec);
    if (ec)
        throw OpenError(pathIn, ec.message());
    std::vector<std::string> checkpointNames;
    bool hasManifest = false, hasComplete = false, hasNativeMarker = false;
    {
        fs::directory_iterator it(dirDisplay, ec), end;
        if (ec)
            throw OpenError(pathIn, "cannot list: " + ec.message());
        for (; it != end; it.increment(ec)) {
            if (ec)
                throw OpenError(pathIn, "cannot list: " + ec.message());
            const std::string name = it->path().filename().string();
            if (name == "manifest.json")
                hasManifest = true;
            else if (name == "COMPLETE")
                hasComplete = true;
            else if (name == "trainer_state.json" || name == ".metadata")
                hasNativeMarker = true;
            std::error_code dec;
            if (name.starts_with("checkpoint-") && it->is_directory(dec))
                checkpointNames.push_back(name);
        }
    }
    const std::string ownName = canonical.filename().string();
    const bool singleCheckpoint = hasManifest || hasComplete || hasNativeMarker || ownName.starts_with("checkpoint-");
    if (singleCheckpoint) {
        addCheckpoint(dirDisplay, dirDisplay, ownName);
    } else if (!checkpointNames.empty()) {
        std::sort(checkpointNames.begin(), checkpointNames.end(), [](const std::string& a, const std::string& b) {
            const auto sa = stepFromName(a), sb = stepFromName(b);
            if (sa && sb && *sa != *sb)
                return *sa < *sb;
            if (sa.has_value() != sb.has_value())
                return sa.has_value();
            return a < b;
        });
        for (const auto& name : checkpointNames)
            addCheckpoint(joinDisplay(dirDisplay, name), fs::path(dirDisplay) / name, name);
    } else {
        throw OpenError(pathIn, "neither a checkpoint directory (no manifest.json or COMPLETE) nor a run directory "
                                "(no checkpoint-*/ folders)");
    }

    for (std::size_t i = 0; i < m_checkpoints.size(); ++i)
        inspect(m_checkpoints[i], i);
    hashAll();
    finishFiles();
    if (!singleCheckpoint)
        checkLatest(dirDisplay, dirDisplay);
    for (auto& f : m_runFindings)
        m_result.findings.push_back(std::move(f));
    m_result.checkpoints = m_checkpoints.size();
    return std::move(m_result);
}

json evidenceToJson(const Evidence& e) { return {{"what", e.what}, {"value", e.value}, {"where", e.where}}; }

} // namespace

AuditResult auditPath(const std::string& path, const AuditOptions& options)
{
    Auditor auditor(options);
    return auditor.run(path);
}

json auditResultToJson(const std::string& path, const AuditResult& result)
{
    json findings = json::array();
    std::size_t counts[3] = {0, 0, 0};
    for (const auto& f : result.findings) {
        ++counts[static_cast<int>(f.severity)];
        json evidence = json::array();
        for (const auto& e : f.evidence)
            evidence.push_back(evidenceToJson(e));
        findings.push_back({{"rule", f.rule},
                            {"severity", severityName(f.severity)},
                            {"component", componentName(f.component)},
                            {"message", f.message},
                            {"evidence", std::move(evidence)},
                            {"checkpoints", f.checkpoints},
                            {"file", f.file.empty() ? json(nullptr) : json(f.file)},
                            {"hint", f.hint}});
    }
    return {{"path", path},
            {"checkpoints_audited", result.checkpoints},
            {"files_checked", result.filesChecked},
            {"bytes_hashed", result.bytesHashed},
            {"cancelled", result.cancelled},
            {"counts", {{"error", counts[2]}, {"warning", counts[1]}, {"info", counts[0]}}},
            {"findings", std::move(findings)}};
}

} // namespace ckpt
