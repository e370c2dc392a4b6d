// SPDX-License-Identifier: MIT
#include "audit_support.h"

#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/frameworks/model_export.h"
#include "ckpt/io/errors.h"
#include "ckpt/io/read_only_file.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace ckpt::audit {

namespace fs = std::filesystem;

std::string stripTrailingSlashes(std::string s)
{
    while (s.size() > 1 && s.back() == '/')
        s.pop_back();
    return s;
}

std::string joinDisplay(const std::string& base, const std::string& rel)
{
    if (base.empty() || base == ".")
        return rel;
    return base.back() == '/' ? base + rel : base + "/" + rel;
}

std::string listNames(const std::vector<std::string>& names, std::size_t max)
{
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < max; ++i)
        out += (i ? ", " : "") + names[i];
    if (names.size() > max)
        out += ", ... (" + std::to_string(names.size() - max) + " more)";
    return out;
}

/// Reads a small regular file; on failure returns nullopt and sets `error` to a reason.
std::optional<std::string> readSmallFile(const std::string& path, std::size_t limit, std::string& error)
{
    try {
        return readBoundedFile(path, limit);
    } catch (const FormatError& e) {
        error = e.what();
        return std::nullopt;
    }
}

/// "[json.exception.parse_error.101] parse error at line 1, ..." -> "parse error at line 1, ..."
std::string jsonErrorText(const std::exception& e)
{
    std::string s = e.what();
    if (s.starts_with("[json.exception.")) {
        const auto close = s.find("] ");
        if (close != std::string::npos)
            s = s.substr(close + 2);
    }
    return s;
}

/// json::dump() recurses once per nesting level, so a hostile manifest.json of 400 000 nested
/// brackets (800 KB) overflowed the stack (found fuzzing).
std::string evidenceText(const nlohmann::json& value)
{
    constexpr std::size_t kMaxDumpDepth = 32;
    std::vector<std::pair<const nlohmann::json*, std::size_t>> pending{{&value, 1}};
    while (!pending.empty()) {
        const auto [v, depth] = pending.back();
        pending.pop_back();
        if (!v->is_structured())
            continue;
        if (depth > kMaxDumpDepth)
            return std::string("a JSON ") + value.type_name() + " nested more than " + std::to_string(kMaxDumpDepth)
                 + " levels deep";
        for (const auto& child : *v)
            pending.emplace_back(&child, depth + 1);
    }
    return value.dump();
}

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

std::optional<uint64_t> parseDigits(std::string_view s)
{
    if (s.empty() || s.size() > 18)
        return std::nullopt;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return std::nullopt;
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    return v;
}

/// The rank of an RNG state file name: rng-rank-N.pt, rng_state_N.pth; rng_state.pth is rank 0
/// of a single-process run (flagged through `single`).
std::optional<uint64_t> rngRank(std::string_view name, bool* single)
{
    if (single)
        *single = false;
    if (name == "rng_state.pth") {
        if (single)
            *single = true;
        return 0;
    }
    if (name.starts_with("rng-rank-") && name.ends_with(".pt"))
        return parseDigits(name.substr(9, name.size() - 9 - 3));
    if (name.starts_with("rng_state_") && name.ends_with(".pth"))
        return parseDigits(name.substr(10, name.size() - 10 - 4));
    return std::nullopt;
}

bool isRngFile(const std::string& relative)
{
    const auto slash = relative.find_last_of('/');
    return rngRank(slash == std::string::npos ? relative : relative.substr(slash + 1)).has_value();
}

// accelerate's save_state writes the RNG states last of its own files, then each registered object's
// custom_checkpoint_<i>.pkl (accelerate@8d1479def0bb src/accelerate/accelerator.py save_state after
// checkpointing.py save_accelerator_state): either one marks a finished save.
bool isAccelerateMarkerName(const std::string& name)
{
    return (name.starts_with("random_states_") || name.starts_with("custom_checkpoint_")) && name.ends_with(".pkl");
}

bool isNativeMarkerName(const std::string& name)
{
    return name == "trainer_state.json" || isDcpMetadataFile(name) || name.ends_with("_model_states.pt") ||
           isAccelerateMarkerName(name) || name == "metadata.json";
}

namespace {

// Layouts whose commit marker is in a folder of the checkpoint: Megatron-LM's legacy iter_N/ (each
// rank's mp_rank_TT[_PPP]/model_optim_rng.pt; the tracker beside the folders names it complete), NeMo
// 2.0's checkpoint folder (weights/metadata.json, Megatron-core's last file).
std::string nestedMarkerIn(const std::string& dir)
{
    std::error_code ec;
    if (fs::exists(fs::path(dir) / "weights" / "metadata.json", ec))
        return "weights/metadata.json";
    if (fs::exists(fs::path(dir) / "weights" / ".metadata", ec))
        return "weights/.metadata";
    std::vector<std::string> ranks;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.starts_with("mp_rank_") && fs::exists(e.path() / "model_optim_rng.pt", ec))
            ranks.push_back(name + "/model_optim_rng.pt");
    }
    std::sort(ranks.begin(), ranks.end());
    return ranks.empty() ? std::string() : ranks.front();
}

} // namespace

std::string nativeMarkerIn(const std::string& dir)
{
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (isNativeMarkerName(name))
            names.push_back(name);
    }
    // By precedence, and within a kind the lowest rank (names sort "__0" < "__1").
    std::sort(names.begin(), names.end());
    if (names.empty()) {
        // A model-only export (torchtitan's last step, save_pretrained) has no marker: its weights stand in.
        std::vector<std::string> all;
        for (const auto& e : fs::directory_iterator(dir, ec)) {
            if (e.is_regular_file(ec))
                all.push_back(e.path().filename().string());
        }
        std::sort(all.begin(), all.end());
        if (isModelExportListing(all)) {
            for (const auto& n : all) {
                if (n.ends_with(".safetensors.index.json"))
                    return n;
            }
            for (const auto& n : all) {
                if (n.ends_with(".safetensors"))
                    return n;
            }
        }
    }
    if (names.empty())
        return nestedMarkerIn(dir);
    for (const auto pred : {+[](const std::string& n) { return n == "trainer_state.json"; },
                            +[](const std::string& n) { return n == "metadata.json"; }, // Megatron-core: after .metadata
                            +[](const std::string& n) { return n == ".metadata"; },
                            +[](const std::string& n) { return n.ends_with(".metadata"); },
                            +[](const std::string& n) { return n.ends_with("_model_states.pt"); },
                            +[](const std::string& n) { return n.starts_with("random_states_"); },
                            +[](const std::string& n) { return n.starts_with("custom_checkpoint_"); }}) {
        for (const auto& n : names) {
            if (pred(n))
                return n;
        }
    }
    return {};
}

bool isHex64(const std::string& s)
{
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
           });
}

std::string lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// A manifest file name we are willing to open: relative, no "..", no empty components.
std::optional<std::string> safeRelative(const std::string& name)
{
    if (name.empty() || name.find('\0') != std::string::npos || name.front() == '/')
        return std::nullopt;
    const fs::path p = fs::path(name).lexically_normal();
    for (const auto& part : p) {
        if (part == "..")
            return std::nullopt;
    }
    std::string out = p.generic_string();
    if (out.empty() || out == "." || out.back() == '/')
        return std::nullopt;
    return out;
}

} // namespace ckpt::audit
