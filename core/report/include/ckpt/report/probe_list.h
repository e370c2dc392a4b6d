// SPDX-License-Identifier: MIT
// The probes a run holds (ckpt_writer's probes/after-<checkpoint>/probe.json): which checkpoint each
// follows, who recorded it ("save" or "resume"), how many updates, and the step it starts from. Read
// as JSON only (bounded); the timeline and the report both list them from here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ckpt {

struct ProbeInfo {
    std::string checkpoint;           // the checkpoint's name (after-<name>)
    std::string recordedBy = "?";     // "save", "resume"; "unreadable probe.json" when it could not be read
    int updates = 1;
    std::optional<int64_t> stepBefore; // global_step_before
};

/// Probes under `runDir`/probes, by checkpoint name.
std::vector<ProbeInfo> listProbes(const std::string& runDir);

} // namespace ckpt
