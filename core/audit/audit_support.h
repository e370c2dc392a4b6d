// SPDX-License-Identifier: MIT
// Small helpers of the manifest audit: limits, display paths, bounded reads of small files,
// and the names it recognises (rng-rank-N.pt, checkpoint-N, safe relative paths).
#pragma once

#include "ckpt/formats/rank_names.h" // stepFromName: the step a folder is named for

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt::audit {

inline constexpr std::size_t kManifestLimit = 64u << 20;     // bytes of manifest.json / index JSON we read
inline constexpr std::size_t kLatestLimit = 4096;            // a pointer file holds a name, not data
inline constexpr std::size_t kMaxFindingsPerKind = 16;       // per checkpoint, then one summary finding
inline constexpr std::size_t kMaxUnexpectedFiles = 50;
inline constexpr std::size_t kMaxNamesInMessage = 5;
inline constexpr int kMaxWalkDepth = 16;
inline constexpr int64_t kMaxWorldSize = int64_t{1} << 24;

std::string stripTrailingSlashes(std::string s);
std::string joinDisplay(const std::string& base, const std::string& rel);
std::string listNames(const std::vector<std::string>& names, std::size_t max = kMaxNamesInMessage);
/// Reads a small regular file; on failure returns nullopt and sets `error` to a reason.
std::optional<std::string> readSmallFile(const std::string& path, std::size_t limit, std::string& error);
/// "[json.exception.parse_error.101] parse error at line 1, ..." -> "parse error at line 1, ..."
std::string jsonErrorText(const std::exception& e);
/// A manifest value as evidence text; values nested deeper than a real entry are named by type.
std::string evidenceText(const nlohmann::json& value);
std::string trim(const std::string& s);
std::optional<uint64_t> parseDigits(std::string_view s);
/// The rank of an RNG state file name: rng-rank-N.pt, rng_state_N.pth; rng_state.pth is rank 0
/// of a single-process run (flagged through `single`).
std::optional<uint64_t> rngRank(std::string_view name, bool* single = nullptr);
bool isRngFile(const std::string& relative);
/// The commit marker of a layout without manifest, present in `dir`: "trainer_state.json" (HF),
/// ".metadata" or "__0.metadata" (DCP), "mp_rank_00_model_states.pt" (DeepSpeed),
/// "random_states_0.pkl" (accelerate); empty when none.
std::string nativeMarkerIn(const std::string& dir);
bool isNativeMarkerName(const std::string& name);
bool isAccelerateMarkerName(const std::string& name);
bool isHex64(const std::string& s);
std::string lower(std::string s);
/// A manifest file name we are willing to open: relative, no "..", no empty components.
std::optional<std::string> safeRelative(const std::string& name);

} // namespace ckpt::audit
