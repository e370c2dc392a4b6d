// SPDX-License-Identifier: MIT
#include "ckpt/formats/rank_names.h"

#include <charconv>
#include <filesystem>

namespace ckpt {

int rankInName(const std::string& name, const std::regex& pattern)
{
    std::smatch m;
    if (!std::regex_search(name, m, pattern) || m.size() < 2)
        return -1;
    // from_chars, not stoi: rng_state_99999999999.pth is a file we do not recognise, not an internal error.
    int rank = -1;
    const std::string digits = m[1].str();
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
    return ec == std::errc() && end == digits.data() + digits.size() ? rank : -1;
}

int rankFromFileName(const std::string& path)
{
    static const std::regex pattern(R"((?:rank|_pp_rank_)[-_]?(\d+))");
    return rankInName(std::filesystem::path(path).filename().string(), pattern);
}

std::optional<int64_t> stepFromName(const std::string& name)
{
    static const std::regex patterns[] = {
        std::regex(R"(^checkpoint[-_](\d+)$)"),
        std::regex(R"(^global_step(\d+)$)"),
        std::regex(R"(^iter_(\d+)$)"), // Megatron-LM's iter_{:07d}
        std::regex(R"(^checkpoint_\d+_(\d+)\.pt$)"), // fairseq's checkpoint_{epoch}_{updates}.pt
        std::regex(R"((?:^|-)ba(\d+)(?:-|\.))"),   // Composer's ep{E}-ba{B}-rank{R}.pt: B batches
        std::regex(R"(step[=_-]?(\d+))"),
        std::regex(R"(^checkpoint[-_](\d+)\.)"),
    };
    for (const auto& p : patterns) {
        std::smatch m;
        if (std::regex_search(name, m, p)) {
            try {
                return std::stoll(m[1].str());
            } catch (const std::out_of_range&) {
                return std::nullopt;
            }
        }
    }
    return std::nullopt;
}

} // namespace ckpt
