// SPDX-License-Identifier: MIT
#include "ui/rundata.h"

#include <QFileInfo>

#include <algorithm>
#include <filesystem>
#include <unordered_map>

std::optional<int64_t> RunCheckpointData::step() const
{
    if (state && state->globalStep)
        return state->globalStep;
    return info.step;
}

int RunCheckpointData::worstSeverity() const
{
    int worst = -1;
    for (const ckpt::Finding& finding : findings)
        worst = std::max(worst, static_cast<int>(finding.severity));
    return worst;
}

void RunData::applyState(int index, std::shared_ptr<const ckpt::TrainingState> state, const QString& error,
                         std::vector<std::pair<std::string, uint64_t>> sizes)
{
    if (index < 0 || index >= static_cast<int>(checkpoints.size()))
        return;
    RunCheckpointData& checkpoint = checkpoints[static_cast<std::size_t>(index)];
    checkpoint.scanned = true;
    checkpoint.stateError = error;
    checkpoint.fileSizes = std::move(sizes);
    if (!error.isEmpty())
        checkpoint.findings.push_back(loadWarningFinding(checkpoint.info.path, error.toStdString(), ckpt::Severity::Error));
    if (state) {
        for (const std::string& warning : state->warnings)
            checkpoint.findings.push_back(loadWarningFinding(checkpoint.info.path, warning, ckpt::Severity::Warning));
    }
    checkpoint.state = std::move(state);
}

PlacedFindings placeFindings(const std::vector<std::string>& checkpointPaths, const std::vector<ckpt::Finding>& findings)
{
    namespace fs = std::filesystem;
    PlacedFindings placed;
    placed.byCheckpoint.resize(checkpointPaths.size());
    // A run's audit names its checkpoints hundreds of times: normalise each path once.
    std::unordered_map<std::string, std::size_t> byPath;
    for (std::size_t i = 0; i < checkpointPaths.size(); ++i)
        byPath.emplace(fs::path(checkpointPaths[i]).lexically_normal().string(), i);
    std::unordered_map<std::string, std::size_t> seen(byPath);
    for (const ckpt::Finding& finding : findings) {
        bool found = false;
        for (const std::string& path : finding.checkpoints) {
            auto it = seen.find(path);
            if (it == seen.end()) {
                const auto normal = byPath.find(fs::path(path).lexically_normal().string());
                it = seen.emplace(path, normal == byPath.end() ? checkpointPaths.size() : normal->second).first;
            }
            if (it->second < checkpointPaths.size()) {
                placed.byCheckpoint[it->second].push_back(finding);
                found = true;
            }
        }
        if (!found)
            placed.run.push_back(finding);
    }
    return placed;
}

void RunData::applyAudit(PlacedFindings&& placed)
{
    audited = true;
    for (std::size_t i = 0; i < placed.byCheckpoint.size() && i < checkpoints.size(); ++i) {
        auto& target = checkpoints[i].findings;
        auto& source = placed.byCheckpoint[i];
        target.insert(target.end(), std::make_move_iterator(source.begin()), std::make_move_iterator(source.end()));
    }
    runFindings.insert(runFindings.end(), std::make_move_iterator(placed.run.begin()), std::make_move_iterator(placed.run.end()));
    if (placed.timeline)
        timeline = std::move(placed.timeline);
}

QString RunData::folder() const
{
    const QFileInfo info(path);
    return info.isFile() ? info.absolutePath() : path;
}

int RunData::latestIndex() const
{
    for (int i = 0; i < static_cast<int>(checkpoints.size()); ++i) {
        if (checkpoints[static_cast<std::size_t>(i)].info.latest)
            return i;
    }
    return checkpoints.empty() ? -1 : static_cast<int>(checkpoints.size()) - 1;
}

int RunData::bestIndex() const
{
    for (int i = 0; i < static_cast<int>(checkpoints.size()); ++i) {
        if (checkpoints[static_cast<std::size_t>(i)].info.best)
            return i;
    }
    return -1;
}

int RunData::indexOfPath(const QString& path) const
{
    const std::string p = path.toStdString();
    for (int i = 0; i < static_cast<int>(checkpoints.size()); ++i) {
        if (checkpoints[static_cast<std::size_t>(i)].info.path == p)
            return i;
    }
    return -1;
}

ckpt::Finding loadWarningFinding(const std::string& checkpoint, const std::string& message, ckpt::Severity severity)
{
    ckpt::Finding finding;
    finding.rule = severity == ckpt::Severity::Error ? "load.unreadable" : "load.warning";
    finding.severity = severity;
    finding.component = ckpt::Component::Integrity;
    finding.message = message;
    finding.checkpoints = {checkpoint};
    finding.hint = severity == ckpt::Severity::Error
        ? "The rest of the checkpoint is shown without this part; check the file's copy or permissions."
        : "Noticed while reading; the value it concerns may be missing from the views.";
    return finding;
}
