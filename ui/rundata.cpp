// SPDX-License-Identifier: MIT
#include "ui/rundata.h"

#include <algorithm>
#include <filesystem>

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

void RunData::applyAudit(const std::vector<ckpt::Finding>& auditFindings)
{
    audited = true;
    namespace fs = std::filesystem;
    for (const ckpt::Finding& finding : auditFindings) {
        bool placed = false;
        for (const std::string& path : finding.checkpoints) {
            const fs::path wanted = fs::path(path).lexically_normal();
            for (RunCheckpointData& checkpoint : checkpoints) {
                if (fs::path(checkpoint.info.path).lexically_normal() == wanted) {
                    checkpoint.findings.push_back(finding);
                    placed = true;
                }
            }
        }
        if (!placed)
            runFindings.push_back(finding);
    }
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
