// SPDX-License-Identifier: MIT
#include "manifest_auditor.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/formats/rank_names.h"
#include "ckpt/formats/safetensors_format.h"
#include "ckpt/io/errors.h"
#include "ckpt/io/mapped_file.h"

#include <algorithm>
#include <regex>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sys/stat.h>

namespace ckpt::audit {

using nlohmann::json;

void Auditor::checkRng(Checkpoint& c, const std::set<std::string>& onDisk, const std::set<std::string>& listed)
{
    if (!c.worldSize)
        return;
    const auto ws = static_cast<uint64_t>(*c.worldSize);
    std::set<uint64_t> present;
    bool hfStyle = false, rankStyle = false;
    std::vector<std::string> extra;
    auto consider = [&](const std::string& name, bool fromDisk) {
        bool single = false;
        const auto rank = rngRank(name, &single);
        if (!rank)
            return;
        if (single && ws != 1)
            return;
        (name.starts_with("rng_state") ? hfStyle : rankStyle) = true;
        present.insert(*rank);
        if (fromDisk && *rank >= ws)
            extra.push_back(name);
    };
    for (const auto& name : onDisk)
        consider(name, true);
    for (const auto& name : listed) {
        if (name.find('/') == std::string::npos)
            consider(name, false); // a listed but missing file is already a missing-file finding
    }

    const std::string wsWhere = where(c, "manifest.json: world_size");
    std::vector<uint64_t> missing;
    for (uint64_t r = 0; r < ws; ++r) {
        if (!present.contains(r))
            missing.push_back(r);
    }
    auto expectedName = [&](uint64_t r) {
        return hfStyle && !rankStyle ? "rng_state_" + std::to_string(r) + ".pth" : "rng-rank-" + std::to_string(r) + ".pt";
    };
    for (std::size_t i = 0; i < missing.size() && i < kMaxFindingsPerKind; ++i) {
        const std::string name = expectedName(missing[i]);
        Finding fi = make("integrity.rng-rank-missing", Severity::Error, c,
                          c.label + ": no RNG state for rank " + std::to_string(missing[i]) + " of world_size " +
                              std::to_string(ws) + " (expected " + name + ")",
                          kHintRngMissing, name);
        fi.component = Component::Rng;
        fi.evidence.push_back({"world_size in manifest", std::to_string(ws), wsWhere});
        fi.evidence.push_back({"RNG files found", std::to_string(present.size()), c.label + "/"});
        c.laterFindings.push_back(std::move(fi));
    }
    if (missing.size() > kMaxFindingsPerKind) {
        const std::size_t more = missing.size() - kMaxFindingsPerKind;
        Finding fi = make("integrity.rng-rank-missing", Severity::Error, c,
                          c.label + ": RNG state is also missing for " + std::to_string(more) + " more ranks (" +
                              std::to_string(missing[kMaxFindingsPerKind]) + " to " + std::to_string(missing.back()) + ")",
                          kHintRngMissing);
        fi.component = Component::Rng;
        fi.evidence.push_back({"world_size in manifest", std::to_string(ws), wsWhere});
        fi.evidence.push_back({"ranks without RNG state", std::to_string(missing.size()), c.label + "/"});
        c.laterFindings.push_back(std::move(fi));
    }
    for (std::size_t i = 0; i < extra.size() && i < kMaxFindingsPerKind; ++i) {
        Finding fi = make("integrity.rng-rank-extra", Severity::Warning, c,
                          c.label + ": " + extra[i] + " belongs to a rank outside world_size " + std::to_string(ws),
                          kHintRngExtra, extra[i]);
        fi.evidence.push_back({"world_size in manifest", std::to_string(ws), wsWhere});
        fi.evidence.push_back({"RNG file", extra[i], where(c, extra[i])});
        c.laterFindings.push_back(std::move(fi));
    }
}

void Auditor::checkSafetensorsIndex(Checkpoint& c, const std::string& indexName)
{
    const fs::path indexPath = fs::path(c.fsDir) / indexName;
    const std::string indexDirRel = fs::path(indexName).parent_path().generic_string();
    auto rel = [&](const std::string& shard) { return indexDirRel.empty() ? shard : indexDirRel + "/" + shard; };
    auto problem = [&](std::string message, const std::string& file) {
        return make("integrity.safetensors-index", Severity::Error, c, std::move(message), kHintIndex, file);
    };

    std::string error;
    const auto text = readSmallFile(indexPath.string(), kManifestLimit, error);
    SafetensorsIndex index;
    try {
        if (!text)
            throw FormatError("cannot be read: " + error);
        index = parseSafetensorsIndex(*text);
    } catch (const std::exception& e) {
        Finding fi = problem(c.label + ": " + indexName + " is not a usable safetensors index: " + e.what(), indexName);
        fi.evidence.push_back({"index", e.what(), where(c, indexName)});
        c.laterFindings.push_back(std::move(fi));
        return;
    }

    std::map<std::string, std::vector<std::string>> byShard; // shard -> tensors, in index order
    std::map<std::string, std::string> shardOf;
    for (const auto& [tensor, shard] : index.weightMap) {
        byShard[shard].push_back(tensor);
        shardOf[tensor] = shard;
    }
    uint64_t tensorBytes = 0;     // over all shards, what metadata.total_size must equal
    bool allShardsRead = true;
    for (const auto& [shard, tensors] : byShard) {
        const std::string shardRel = rel(shard);
        std::set<std::string> held;
        try {
            const MappedFile file = MappedFile::open((fs::path(c.fsDir) / shardRel).string());
            for (const auto& t : parseSafetensors(file.bytes()).tensors) {
                held.insert(t.name);
                tensorBytes += t.end - t.begin;
            }
        } catch (const std::exception& e) {
            allShardsRead = false;
            Finding fi = problem(c.label + ": shard " + shardRel + " that " + indexName + " maps " +
                                     std::to_string(tensors.size()) + " tensors to cannot be read: " + e.what(),
                                 shardRel);
            fi.evidence.push_back({"tensors mapped to the shard", std::to_string(tensors.size()),
                                   where(c, indexName + ": weight_map." + tensors.front())});
            fi.evidence.push_back({"shard", e.what(), where(c, shardRel)});
            c.laterFindings.push_back(std::move(fi));
            continue;
        }
        std::vector<std::string> absent;
        for (const auto& t : tensors) {
            if (!held.contains(t))
                absent.push_back(t);
        }
        std::vector<std::string> unlisted; // in the shard, not mapped to it
        for (const auto& t : held) {
            const auto it = shardOf.find(t);
            if (it == shardOf.end() || it->second != shard)
                unlisted.push_back(t);
        }
        if (!absent.empty()) {
            Finding fi = problem(c.label + ": " + indexName + " maps " + std::to_string(absent.size()) + " tensor" +
                                     (absent.size() == 1 ? "" : "s") + " to " + shardRel + " that its header lacks: " +
                                     listNames(absent),
                                 shardRel);
            for (std::size_t i = 0; i < absent.size() && i < kMaxNamesInMessage; ++i)
                fi.evidence.push_back({"tensor in weight_map", absent[i] + " -> " + shard,
                                       where(c, indexName + ": weight_map." + absent[i])});
            fi.evidence.push_back({"tensors in shard header", std::to_string(held.size()), where(c, shardRel)});
            c.laterFindings.push_back(std::move(fi));
        }
        if (!unlisted.empty()) {
            Finding fi = problem(c.label + ": " + shardRel + " holds " + std::to_string(unlisted.size()) + " tensor" +
                                     (unlisted.size() == 1 ? "" : "s") + " that " + indexName + " does not map to it: " +
                                     listNames(unlisted),
                                 shardRel);
            for (std::size_t i = 0; i < unlisted.size() && i < kMaxNamesInMessage; ++i) {
                const auto it = shardOf.find(unlisted[i]);
                fi.evidence.push_back({"tensor in shard header", unlisted[i], where(c, shardRel)});
                fi.evidence.push_back({"weight_map entry", it == shardOf.end() ? "absent" : unlisted[i] + " -> " + it->second,
                                       where(c, indexName + ": weight_map." + unlisted[i])});
            }
            c.laterFindings.push_back(std::move(fi));
        }
    }
    // metadata.total_size: the bytes of every tensor of the set (formats.md §7), what loaders
    // size their allocation by; a different sum means a shard from another save or a lost tensor.
    const auto total = std::find_if(index.metadata.begin(), index.metadata.end(), [](const auto& kv) { return kv.first == "total_size"; });
    if (total != index.metadata.end() && allShardsRead) {
        const auto recorded = parseDigits(total->second);
        if (!recorded || *recorded != tensorBytes) {
            Finding fi = problem(c.label + ": " + indexName + " records metadata.total_size " + total->second + " but its shards hold " +
                                     std::to_string(tensorBytes) + " bytes of tensors",
                                 indexName);
            fi.evidence.push_back({"metadata.total_size", total->second, where(c, indexName + ": metadata.total_size")});
            fi.evidence.push_back({"tensor bytes in the shards", std::to_string(tensorBytes), where(c, indexDirRel.empty() ? "" : indexDirRel + "/")});
            c.laterFindings.push_back(std::move(fi));
        }
    }
}

void Auditor::checkDcp(Checkpoint& c, const std::string& shown, std::vector<std::string> distcpFiles)
{
    const fs::path dir = fs::path(c.fsDir) / shown;
    std::string metaRel = shown + ".metadata";
    DcpCheckpoint dcp;
    try {
        dcp = readDcpCheckpoint(dir.lexically_normal().string());
        if (dcp.metadataFiles.size() > 1) // per-rank files, merged: name the set
            metaRel = shown + "__0.metadata.." + dcp.metadataFiles.back();
    } catch (const std::exception& e) {
        Finding fi = make("integrity.dcp-coverage", Severity::Warning, c,
                          c.label + "/" + metaRel + " cannot be read (" + e.what() + "): DCP coverage not checked",
                          kHintDcpUnreadable, metaRel);
        fi.evidence.push_back({".metadata", e.what(), where(c, metaRel)});
        c.laterFindings.push_back(std::move(fi));
        return;
    }

    std::vector<std::string> untiled;                         // "fqn (problem)"
    std::vector<Evidence> untiledEvidence;
    std::map<std::string, std::vector<std::string>> absent;   // data file -> tensors with chunks in it
    std::vector<std::string> outside;                         // "fqn in file"
    std::vector<Evidence> outsideEvidence;
    std::map<std::string, std::optional<uint64_t>> sizes;     // data file -> size, nullopt when absent
    std::set<std::string> referenced;
    for (const auto& e : dcp.entries) {
        if (!e.problem.empty()) {
            untiled.push_back(e.fqn + " (" + e.problem + ")");
            if (untiledEvidence.size() < kMaxNamesInMessage)
                untiledEvidence.push_back({"chunks of " + e.fqn, e.problem, where(c, metaRel + ": state_dict_metadata." + e.fqn)});
        }
        for (const auto& chunk : e.chunks) {
            if (chunk.file.empty())
                continue; // already an entry problem
            const auto rel = safeRelative(chunk.file);
            if (!rel) {
                untiled.push_back(e.fqn + " (stored at \"" + chunk.file + "\", outside the folder)");
                continue;
            }
            referenced.insert(*rel);
            auto [it, fresh] = sizes.try_emplace(*rel);
            if (fresh) {
                struct stat st {};
                if (::stat((dir / *rel).c_str(), &st) == 0 && S_ISREG(st.st_mode))
                    it->second = static_cast<uint64_t>(st.st_size);
            }
            if (!it->second) {
                auto& names = absent[*rel];
                if (names.empty() || names.back() != e.fqn)
                    names.push_back(e.fqn);
            } else if (chunk.offset > *it->second || chunk.length > *it->second - chunk.offset) {
                outside.push_back(e.fqn + " in " + *rel);
                if (outsideEvidence.size() < kMaxNamesInMessage)
                    outsideEvidence.push_back({"chunk of " + e.fqn,
                                               "bytes " + std::to_string(chunk.offset) + "+" + std::to_string(chunk.length) +
                                                   " of a " + std::to_string(*it->second) + "-byte file",
                                               where(c, metaRel + ": storage_data." + e.fqn)});
            }
        }
    }
    for (const auto& [file, tensors] : absent) {
        Finding fi = make("integrity.dcp-coverage", Severity::Error, c,
                          c.label + "/" + metaRel + " stores chunks of " + std::to_string(tensors.size()) + " tensor" +
                              (tensors.size() == 1 ? "" : "s") + " in " + file + ", which does not exist: " + listNames(tensors),
                          kHintDcpCoverage, shown + file);
        fi.evidence.push_back({"chunk location", file, where(c, metaRel + ": storage_data." + tensors.front())});
        fi.evidence.push_back({"on disk", "absent", where(c, shown + file)});
        c.laterFindings.push_back(std::move(fi));
    }
    if (!outside.empty()) {
        Finding fi = make("integrity.dcp-coverage", Severity::Error, c,
                          c.label + "/" + metaRel + ": " + std::to_string(outside.size()) + " chunk" +
                              (outside.size() == 1 ? " lies beyond the end of its data file: " : "s lie beyond the end of their data files: ") +
                              listNames(outside),
                          kHintDcpCoverage, metaRel);
        fi.evidence = std::move(outsideEvidence);
        c.laterFindings.push_back(std::move(fi));
    }
    if (!untiled.empty()) {
        Finding fi = make("integrity.dcp-coverage", Severity::Error, c,
                          c.label + "/" + metaRel + ": " + std::to_string(untiled.size()) + " tensor" +
                              (untiled.size() == 1 ? " is" : "s are") + " not covered exactly by their chunks: " + listNames(untiled),
                          kHintDcpCoverage, metaRel);
        fi.evidence = std::move(untiledEvidence);
        c.laterFindings.push_back(std::move(fi));
    }
    std::sort(distcpFiles.begin(), distcpFiles.end());
    std::vector<std::string> unreferenced;
    for (const auto& f : distcpFiles) {
        if (!referenced.contains(f))
            unreferenced.push_back(f);
    }
    if (!unreferenced.empty()) {
        Finding fi = make("integrity.dcp-coverage", Severity::Warning, c,
                          c.label + "/" + shown + " holds data files that .metadata never refers to (left over from "
                                                  "another save?): " + listNames(unreferenced),
                          kHintDcpCoverage, shown + unreferenced.front());
        fi.evidence.push_back({"data files referenced by .metadata", std::to_string(referenced.size()), where(c, metaRel)});
        fi.evidence.push_back({"unreferenced data file", unreferenced.front(), where(c, shown + unreferenced.front())});
        c.laterFindings.push_back(std::move(fi));
    }
}

// DeepSpeed ZeRO: one optimizer partition file per data-parallel rank (formats.md §9.1), as many
// as the model states' dp_world_size.
void Auditor::checkZeroRanks(Checkpoint& c)
{
    static const std::regex zeroFile(R"(^(?:bf16_)?zero_pp_rank_(\d+)_mp_rank_(\d+)_optim_states\.pt$)");
    std::set<uint64_t> ranks;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(c.fsDir, ec)) {
        const std::string name = e.path().filename().string();
        if (const int rank = rankInName(name, zeroFile); rank >= 0)
            ranks.insert(static_cast<uint64_t>(rank));
    }
    if (ranks.empty())
        return; // not ZeRO: the optimizer state is in the model states file
    const std::string statesName = c.nativeMarker;
    std::optional<int64_t> world;
    try {
        const auto states = CheckpointFile::open((fs::path(c.fsDir) / statesName).string());
        const NodeId n = states->graph().get(states->root(), "dp_world_size");
        if (n != kNoNode && states->graph()[n].kind == Kind::Int)
            world = states->graph()[n].i;
    } catch (const std::exception&) {
    }
    const uint64_t expected = world && *world > 0 && *world <= kMaxWorldSize ? static_cast<uint64_t>(*world) : *ranks.rbegin() + 1;
    std::vector<std::string> missing;
    for (uint64_t r = 0; r < expected; ++r) {
        if (!ranks.contains(r))
            missing.push_back("zero_pp_rank_" + std::to_string(r) + "_mp_rank_00_optim_states.pt");
    }
    if (missing.empty())
        return;
    Finding fi = make("integrity.shard-missing", Severity::Error, c,
                      c.label + ": the ZeRO optimizer partition of " + std::to_string(missing.size()) + " of " +
                          std::to_string(expected) + " data-parallel ranks is missing: " + listNames(missing),
                      kHintZeroRanks, missing.front());
    fi.evidence.push_back({"dp_world_size", world ? std::to_string(*world) : "not recorded (ranks counted from the files)",
                           where(c, statesName + (world ? ": dp_world_size" : ""))});
    fi.evidence.push_back({"optimizer partitions found", std::to_string(ranks.size()), c.label + "/"});
    c.laterFindings.push_back(std::move(fi));
}

} // namespace ckpt::audit
