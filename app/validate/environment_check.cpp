// SPDX-License-Identifier: MIT
// GCC 12 reports nlohmann::json temporaries as maybe-uninitialized (a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "app/validate/environment_check.h"

#include "app/validate/replay.h"

#include <filesystem>

namespace fs = std::filesystem;

namespace ckpt::validate {
namespace {

using json = nlohmann::json;

const StateField* field(const std::vector<StateField>& fields, const std::string& name)
{
    for (const auto& f : fields) {
        if (f.name == name)
            return &f;
    }
    return nullptr;
}

// "1.13.0a0", "2.4.1+cu121" -> "1.13", "2.4": kernels change between minor versions.
std::string majorMinor(const std::string& version)
{
    const auto first = version.find('.');
    const auto second = first == std::string::npos ? first : version.find('.', first + 1);
    return version.substr(0, second);
}

json number(const std::string& text)
{
    try {
        std::size_t used = 0;
        const long long v = std::stoll(text, &used);
        if (used == text.size())
            return v;
    } catch (const std::exception&) {
    }
    return text;
}

} // namespace

json environmentChecks(const TrainingState& state, const json& probe, const std::string& checkpointPath,
                       std::vector<std::string>& notes)
{
    json checks = json::array();
    auto check = [&](const std::string& what, const json& checkpoint, const json& recorded, const std::string& meaning) {
        const bool same = checkpoint == recorded || checkpoint.is_null() || recorded.is_null();
        checks.push_back({{"check", what}, {"checkpoint", checkpoint}, {"probe", recorded}, {"match", same}});
        if (!same)
            notes.push_back("environment: " + what + " differs (" + meaning + "); not fatal");
    };
    const json probeTorch = probe.value("torch_version", json());
    const StateField* torch = field(state.environment, "torch_version");
    check("torch version", torch ? json(torch->value) : json(), probeTorch,
          "the checkpoint was written by another PyTorch than the probe's run");
    check("validator LibTorch (major.minor)", majorMinor(libtorchVersion()),
          probeTorch.is_string() ? json(majorMinor(probeTorch.get<std::string>())) : json(),
          "kernels may round differently: expect 'within tolerance'");
    const StateField* ws = field(state.environment, "world_size");
    check("world size", ws ? number(ws->value) : json(), probe.value("world_size", json()),
          "the probe was recorded with another number of ranks");
    fs::path p(checkpointPath);
    if (!p.has_filename())
        p = p.parent_path();
    check("checkpoint name", p.filename().string(), probe.value("checkpoint", json()),
          "the probe may belong to another checkpoint");
    if (const StateField* cfg = field(state.environment, "config_sha256"))
        checks.push_back({{"check", "config sha256"}, {"checkpoint", cfg->value}, {"probe", json()}, {"match", true}});
    return checks;
}

} // namespace ckpt::validate
