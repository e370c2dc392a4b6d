// SPDX-License-Identifier: MIT
// The JSON shapes of the `ckpt` command-line contract, built in one place so the CLI, the GUI
// ("copy as JSON") and the tests agree on them.
#pragma once

#include "ckpt/formats/checkpoint_file.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace ckpt {

struct TensorStats;

nlohmann::json keyPathToJson(const KeyPath& path);

/// {"key", "dtype", "shape", "stride", "storage_offset", "nbytes", "layout", "device", ...}
nlohmann::json tensorEntryToJson(const CheckpointFile& file, const TensorEntry& entry);
/// The same entry appended to `out` as the text dumpJson(tensorEntryToJson(...)) gives, byte for
/// byte, without building the object (tensor_entry_json.cpp); with `stats`, the entry of
/// `ckpt tensors --stats --json`, its "stats" as tensorStatsToJson gives it.
void appendTensorEntryJson(std::string& out, const CheckpointFile& file, const TensorEntry& entry,
                           const TensorStats* stats = nullptr);

/// `ckpt tensors FILE --json`: {"file", "format", "tensors": [...], "warnings": [...]}, keys sorted
/// and dumped compactly (dumpJson), written to `out` one tensor at a time: never the whole report
/// in memory (a frontier model lists ~90k tensors). A `role` adds {"role": role}, as a folder's
/// listing names each file's part.
void writeTensorsReportJson(std::ostream& out, const CheckpointFile& file, const std::optional<std::string>& role = std::nullopt);

/// What a folder's file adds to those keys, in their sorted places.
struct TensorsReportExtras {
    std::optional<nlohmann::json> rank;  // {"rank": ...} (null allowed), before "role"
    std::optional<std::string> role;
};
/// The same in three parts, for entries that arrive one at a time (streamed statistics): the keys
/// before the tensors, the index-th entry (in tensorEntries() order, every one of them, in order;
/// with `stats`, the "stats" of `ckpt tensors --stats --json`, as tensorStatsToJson gives them),
/// and the closing keys.
void writeTensorsReportBegin(std::ostream& out, const CheckpointFile& file, const TensorsReportExtras& extras);
void writeTensorsReportEntry(std::ostream& out, const CheckpointFile& file, std::size_t index,
                             const TensorStats* stats = nullptr);
void writeTensorsReportEnd(std::ostream& out, const CheckpointFile& file);

/// `ckpt tree FILE --json`: {"file", "format", "properties", "root": node, "warnings"}. A container
/// reached a second time becomes {"type": "ref", "path": [...]} so shared structure stays small.
nlohmann::json treeReportToJson(const CheckpointFile& file);

/// `ckpt imports FILE --json`: {"file", "dangerous", "counts", "globals": [...], "notes": [...]}
nlohmann::json importsReportToJson(const std::string& path, const ImportsReport& report);

/// Dumps with invalid UTF-8 replaced, so a hostile string never aborts the output.
/// A double as a JSON number; NaN and infinities as the strings "nan", "inf", "-inf".
nlohmann::json jsonNumber(double v);

std::string dumpJson(const nlohmann::json& json, int indent = -1);

} // namespace ckpt
