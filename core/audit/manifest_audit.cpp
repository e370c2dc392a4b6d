// SPDX-License-Identifier: MIT
#include "ckpt/audit/manifest_audit.h"

#include "manifest_auditor.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/formats/python_json.h"
#include "ckpt/io/errors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace ckpt {
namespace audit {

using nlohmann::json;

namespace {

// Why a directory entry that is not a directory cannot be read as a file, or "" when it can.
std::string unreadableEntry(const fs::directory_entry& e)
{
    std::error_code ec;
    const auto link = e.symlink_status(ec);
    const auto target = fs::status(e.path(), ec);
    if (ec) {
        if (ec == std::errc::too_many_symbolic_link_levels)
            return "is a symbolic link loop";
        if (fs::is_symlink(link) && ec == std::errc::no_such_file_or_directory)
            return "is a symbolic link to nothing (" + fs::read_symlink(e.path(), ec).string() + ")";
        return "cannot be examined: " + ec.message();
    }
    if (fs::is_regular_file(target) || fs::is_directory(target))
        return {};
    if (fs::is_fifo(target))
        return "is a FIFO: whoever reads it blocks until something writes to it";
    if (fs::is_socket(target))
        return "is a socket, not a file";
    if (fs::is_block_file(target) || fs::is_character_file(target))
        return "is a device, not a file";
    return "is not a regular file";
}

} // namespace

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
        // What the layout is, what its marker says, and what can still be checked.
        struct Native {
            const char* what;
            const char* marker;
            const char* hint;
            const char* still;
        };
        const std::string& m = c.nativeMarker;
        const Native n = m == "trainer_state.json"
            ? Native{" is a Hugging Face Trainer checkpoint", "present (the Trainer writes it last)", kHintHfTrainer, ""}
            : m.ends_with("metadata.json")
            ? Native{" is a Megatron-core distributed checkpoint", "present (written after every rank's data)",
                     kHintMegatronDistNoManifest, " (chunk coverage is checked against .metadata)"}
            : m.ends_with("/model_optim_rng.pt")
            ? Native{" is a Megatron-LM checkpoint", "present (the first rank's file)", kHintMegatronNoManifest, ""}
            : m.ends_with(".metadata")
            ? Native{" is a torch.distributed.checkpoint folder", "present (DCP's commit marker)", kHintDcpNoManifest,
                     " (chunk coverage is checked against .metadata)"}
            : m.ends_with("_model_states.pt")
            ? Native{" is a DeepSpeed checkpoint", "present (rank 0's model states)", kHintDeepSpeedNoManifest,
                     " (every data-parallel rank's optimizer partition is checked for)"}
            : isAccelerateMarkerName(m)
            ? Native{" is an accelerate save_state folder", "present (save_state writes the RNG states, then registered objects, last)",
                     kHintAccelerateNoManifest, ""}
            : Native{" is a model-only export (weights, no training state)", "present (the exported weights)",
                     kHintModelExportNoManifest, ""};
        Finding f = make("integrity.no-manifest", Severity::Info, c,
                         c.label + n.what + " without manifest.json: its file sizes and hashes cannot be verified" + n.still,
                         n.hint, "manifest.json");
        f.evidence.push_back({"manifest.json", "absent", c.label + "/"});
        f.evidence.push_back({m, n.marker, where(c, m)});
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
        doc = parsePythonJson(*text);
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
    if (!c.hasComplete && !fs::exists(fs::path(c.fsDir) / "manifest.json", ec))
        c.nativeMarker = nativeMarkerIn(c.fsDir);

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
    if (c.nativeMarker.ends_with("_model_states.pt"))
        checkZeroRanks(c);
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
        // A member nobody can read (a symlink loop, a dangling link, a FIFO that blocks its reader)
        // is said, never skipped: a loader that opens the folder's files fails or hangs on it.
        if (const std::string why = unreadableEntry(e); !why.empty()) {
            Finding fi = make("integrity.file-unreadable", Severity::Error, c, c.label + ": " + rel + " " + why,
                              kHintUnreadable, rel);
            fi.evidence.push_back({"on disk", why, where(c, rel)});
            c.laterFindings.push_back(std::move(fi));
            continue;
        }
        if (it.depth() == 0 && e.is_regular_file(sec)) // follows a symlinked RNG file
            topLevel.insert(base);
        if (base.ends_with(".safetensors.index.json"))
            indexFiles.push_back(rel);
        if (isDcpMetadataFile(base))
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
            checkDcp(c, shown, dcpDirs[dir]); // per-rank __N.metadata only (a save without a process group)
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
        if (path.ends_with(".nemo"))
            throw OpenError(pathIn, "is a .nemo archive, which records no sizes or hashes to audit against; ckpt check reads its "
                                    "members and reports the unreadable ones");
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
            else if (isNativeMarkerName(name))
                hasNativeMarker = true;
            std::error_code dec;
            // NeMo 2.0 names its checkpoint folders by epoch and samples, not step: its weights/ tell.
            if (it->is_directory(dec) && (stepFromName(name) || fs::exists(it->path() / "weights" / ".metadata", dec)))
                checkpointNames.push_back(name);
        }
    }
    // A model-only export has no marker file of its own (nativeMarkerIn names its weights).
    if (!hasManifest && !hasComplete && !hasNativeMarker && checkpointNames.empty())
        hasNativeMarker = !nativeMarkerIn(dirDisplay).empty();
    // accelerate keeps its checkpoint_<i>/ folders under <project>/checkpoints/.
    std::string nested;
    if (checkpointNames.empty() && !hasManifest && !hasComplete && !hasNativeMarker && fs::is_directory(fs::path(dirDisplay) / "checkpoints", ec)) {
        for (const auto& e : fs::directory_iterator(fs::path(dirDisplay) / "checkpoints", ec)) {
            const std::string name = e.path().filename().string();
            std::error_code dec;
            if (stepFromName(name) && e.is_directory(dec))
                checkpointNames.push_back("checkpoints/" + name);
        }
        nested = "checkpoints/";
    }
    const std::string ownName = canonical.filename().string();
    const bool singleCheckpoint = hasManifest || hasComplete || hasNativeMarker || ownName.starts_with("checkpoint-");
    if (singleCheckpoint) {
        addCheckpoint(dirDisplay, dirDisplay, ownName);
    } else if (!checkpointNames.empty()) {
        std::sort(checkpointNames.begin(), checkpointNames.end(), [&](const std::string& a, const std::string& b) {
            const auto sa = stepFromName(a.substr(nested.size())), sb = stepFromName(b.substr(nested.size()));
            if (sa && sb && *sa != *sb)
                return *sa < *sb;
            if (sa.has_value() != sb.has_value())
                return sa.has_value();
            return a < b;
        });
        for (const auto& name : checkpointNames)
            addCheckpoint(joinDisplay(dirDisplay, name), fs::path(dirDisplay) / name, name.substr(nested.size()));
    } else {
        throw OpenError(pathIn, "neither a checkpoint directory (no manifest.json, COMPLETE, trainer_state.json, DCP .metadata, "
                                "DeepSpeed *_model_states.pt or accelerate random_states_*.pkl) nor a run directory (no "
                                "checkpoint-*, checkpoint_*, global_step* or step-* folders)");
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

} // namespace audit

using nlohmann::json;

namespace {

json evidenceToJson(const Evidence& e) { return {{"what", e.what}, {"value", e.value}, {"where", e.where}}; }

} // namespace

using audit::Auditor;

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
                            {"hint", f.hint},
                            {"assumes", f.assumes.empty() ? json(nullptr) : json(f.assumes)}});
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
