// SPDX-License-Identifier: MIT
#include "app/validate/probe.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/tensor_bytes.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace ckpt::validate {
namespace {

// 1: one update; 2: several (update 1 at the top level as in 1, updates 2..K in "next_updates").
constexpr int kOldestProbeVersion = 1, kNewestProbeVersion = 2;

void requireUpdateKeys(const nlohmann::json& j, const std::string& where)
{
    for (const char* key : {"micro_batches", "parameters", "optimizer", "lr", "ranks"}) {
        if (!j.is_object() || !j.contains(key))
            throw std::runtime_error(where + ": the probe has no \"" + key + "\"");
    }
    if (!j["micro_batches"].is_array() || j["micro_batches"].empty())
        throw std::runtime_error(where + ": the probe records no micro-batch");
}

std::string insideProbe(const Probe& probe, const std::string& name)
{
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
        throw std::runtime_error(probe.dir + "/probe.json: '" + name + "' is not a file name inside the probe folder");
    return (fs::path(probe.dir) / name).string();
}

} // namespace

std::string defaultProbeDir(const std::string& checkpointPath)
{
    fs::path p = fs::path(checkpointPath);
    if (!p.has_filename())
        p = p.parent_path(); // "checkpoint-0000200/"
    return (p.parent_path() / "probes" / ("after-" + p.filename().string())).string();
}

Probe readProbe(const std::string& path)
{
    Probe probe;
    fs::path jsonPath = path;
    if (fs::is_directory(jsonPath) || jsonPath.extension() != ".json")
        jsonPath /= "probe.json";
    probe.dir = jsonPath.parent_path().string();
    std::ifstream in(jsonPath);
    if (!in)
        throw std::runtime_error(jsonPath.string() + ": no probe here (record one with ckpt_writer's writer.probe(); "
                                                     "or pass --probe)");
    std::stringstream text;
    text << in.rdbuf();
    try {
        probe.json = nlohmann::json::parse(text.str());
    } catch (const std::exception& e) {
        throw std::runtime_error(jsonPath.string() + ": not valid JSON: " + e.what());
    }
    const auto& j = probe.json;
    if (!j.is_object() || j.value("format", "") != "ckpt-probe")
        throw std::runtime_error(jsonPath.string() + ": not a ckpt-probe file (no \"format\": \"ckpt-probe\")");
    const int version = j.value("format_version", 0);
    if (version < kOldestProbeVersion || version > kNewestProbeVersion)
        throw std::runtime_error(jsonPath.string() + ": probe format_version " + j.value("format_version", nlohmann::json()).dump()
                                 + ", this validator reads versions " + std::to_string(kOldestProbeVersion) + " to "
                                 + std::to_string(kNewestProbeVersion));
    if (!j.contains("module"))
        throw std::runtime_error(jsonPath.string() + ": the probe has no \"module\"");
    requireUpdateKeys(j, jsonPath.string());
    if (version >= 2) {
        const auto& next = j.value("next_updates", nlohmann::json::array());
        if (!next.is_array() || next.size() + 1 != j.value("updates", std::size_t(1)))
            throw std::runtime_error(jsonPath.string() + ": \"updates\" says " + j.value("updates", nlohmann::json()).dump()
                                     + " but \"next_updates\" holds " + std::to_string(next.size()) + " more");
        for (std::size_t k = 0; k < next.size(); ++k)
            requireUpdateKeys(next[k], jsonPath.string() + " (update " + std::to_string(k + 2) + ")");
    }
    probe.modulePath = insideProbe(probe, j["module"].value("file", "module.pt"));
    return probe;
}

std::vector<const nlohmann::json*> updateRecords(const Probe& probe)
{
    std::vector<const nlohmann::json*> out = {&probe.json};
    if (probe.json.contains("next_updates") && probe.json["next_updates"].is_array()) {
        for (const auto& u : probe.json["next_updates"])
            out.push_back(&u);
    }
    return out;
}

std::vector<HostTensor> readMicroBatch(const Probe& probe, const nlohmann::json& mb)
{
    const std::string path = insideProbe(probe, mb.value("file", ""));
    const auto file = CheckpointFile::open(path);
    const int64_t within = mb.value("index", 0);
    std::vector<HostTensor> out;
    for (int64_t i = 0;; ++i) {
        const TensorInfo* t = tensorAt(*file, KeyPath{within, std::string("inputs"), i});
        if (!t)
            break;
        out.push_back({t->dtype, t->shape, contiguousTensorBytes(*file, *t)});
    }
    if (out.empty())
        throw std::runtime_error(path + ": micro-batch " + std::to_string(within) + " has no input tensors");
    return out;
}

std::map<std::string, std::map<std::string, RngState>> readProbeRng(const Probe& probe, const std::string& name)
{
    const auto file = CheckpointFile::open(insideProbe(probe, name));
    std::map<std::string, std::map<std::string, RngState>> out;
    for (auto& s : findRngStates(*file)) {
        if (s.key.empty() || !std::holds_alternative<std::string>(s.key[0]))
            continue;
        const std::string phase = std::get<std::string>(s.key[0]);
        out[phase].emplace(rngKindName(s.kind), std::move(s)); // the first of a kind (CUDA: device 0)
    }
    return out;
}

} // namespace ckpt::validate
