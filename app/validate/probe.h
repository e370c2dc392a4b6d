// SPDX-License-Identifier: MIT
// A probe (ckpt_writer.UpdateProbe): probe.json, the TorchScript loss module, each rank's batch and
// generator states. probe.json is parsed as JSON; the batch and generator files are torch.save
// archives read through the core's safe reader like any checkpoint.
#pragma once

#include "app/validate/replay.h"
#include "ckpt/state/rng_state.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace ckpt::validate {

struct Probe {
    std::string dir;        // the probe folder
    nlohmann::json json;    // probe.json
    std::string modulePath; // dir/module.pt
};

/// `path` is a probe folder or its probe.json. Throws std::runtime_error naming the file and the
/// reason when it is not a readable probe of a format version this validator knows.
Probe readProbe(const std::string& path);

/// The default probe of a checkpoint: <parent>/probes/after-<checkpoint name>/ (ckpt_writer.probe_dir_for).
std::string defaultProbeDir(const std::string& checkpointPath);

/// The probe's updates in order: probe.json itself (update 1, format versions 1 and 2), then each entry
/// of "next_updates" (version 2: updates 2..K, with update 1's keys).
std::vector<const nlohmann::json*> updateRecords(const Probe& probe);

/// The input tensors of one micro-batch entry of an update's "micro_batches" list.
std::vector<HostTensor> readMicroBatch(const Probe& probe, const nlohmann::json& microBatch);

/// Generator states a rank's probe-rng file holds, by phase ("before", "after") and kind
/// ("python", "numpy", "torch_cpu", "torch_cuda").
std::map<std::string, std::map<std::string, RngState>> readProbeRng(const Probe& probe, const std::string& file);

} // namespace ckpt::validate
