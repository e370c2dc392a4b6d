// SPDX-License-Identifier: MIT
#include "ckpt/report/probe_list.h"

#include "ckpt/io/read_only_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace ckpt {

std::vector<ProbeInfo> listProbes(const std::string& runDir)
{
    constexpr std::size_t kProbeJsonLimit = 256u << 20; // digests, not tensors
    std::vector<ProbeInfo> out;
    std::error_code ec;
    const fs::path dir = fs::path(runDir) / "probes";
    if (!fs::is_directory(dir, ec))
        return out;
    for (const auto& e : fs::directory_iterator(dir, fs::directory_options::skip_permission_denied, ec)) {
        const std::string name = e.path().filename().string();
        const fs::path json = e.path() / "probe.json";
        if (!name.starts_with("after-") || !fs::is_regular_file(json, ec))
            continue;
        ProbeInfo p;
        p.checkpoint = name.substr(6);
        try {
            const auto j = nlohmann::json::parse(readBoundedFile(json.string(), kProbeJsonLimit));
            p.checkpoint = j.value("checkpoint", p.checkpoint);
            p.recordedBy = j.value("recorded_by", std::string("?"));
            p.updates = j.value("updates", 1);
            if (j.value("global_step_before", nlohmann::json()).is_number_integer())
                p.stepBefore = j["global_step_before"].get<int64_t>();
        } catch (const std::exception&) {
            p.recordedBy = "unreadable probe.json"; // ckpt validate says why
        }
        out.push_back(std::move(p));
    }
    std::sort(out.begin(), out.end(), [](const ProbeInfo& a, const ProbeInfo& b) { return a.checkpoint < b.checkpoint; });
    return out;
}

} // namespace ckpt
