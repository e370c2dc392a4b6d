// SPDX-License-Identifier: MIT
#include "manifest_auditor.h"

#include "ckpt/io/errors.h"

#include <algorithm>
#include <filesystem>
#include <optional>

namespace ckpt::audit {

using nlohmann::json;

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

} // namespace ckpt::audit
