// SPDX-License-Identifier: MIT
#include "ckpt/formats/dcp_checkpoint.h"

#include "ckpt/formats/rank_names.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>

namespace ckpt {
namespace {

std::string stateClass(const ValueGraph& g, NodeId id)
{
    if (!g.valid(id) || g[id].kind != Kind::Object)
        return {};
    const std::string& t = g[id].text;
    return t.substr(t.rfind('.') + 1);
}

NodeId field(const ValueGraph& g, NodeId object, std::string_view name)
{
    if (!g.valid(object))
        return kNoNode;
    return g.get(g[object].kind == Kind::Object ? g[object].state : object, name);
}

std::vector<int64_t> ints(const ValueGraph& g, NodeId id)
{
    std::vector<int64_t> out;
    if (!g.valid(id))
        return out;
    for (NodeId d : g[id].items) {
        if (g[d].kind == Kind::Int)
            out.push_back(g[d].i);
    }
    return out;
}

std::string text(const ValueGraph& g, NodeId id) { return g.valid(id) && g[id].kind == Kind::String ? g[id].text : std::string(); }

int64_t intOf(const ValueGraph& g, NodeId id) { return g.valid(id) && g[id].kind == Kind::Int ? g[id].i : -1; }

// The chunks of one tensor must cover its global box exactly: inside it, no overlaps, and
// volumes adding up to the whole.
std::string checkTiling(const DcpEntry& e)
{
    Int128 total = 1;
    for (int64_t d : e.size)
        total *= d;
    Int128 covered = 0;
    for (std::size_t i = 0; i < e.chunks.size(); ++i) {
        const DcpChunk& c = e.chunks[i];
        if (c.offsets.size() != e.size.size() || c.sizes.size() != e.size.size())
            return "chunk " + std::to_string(i) + " has a different rank than the tensor";
        Int128 volume = 1;
        for (std::size_t d = 0; d < e.size.size(); ++d) {
            if (c.offsets[d] < 0 || c.sizes[d] < 0 || c.offsets[d] + c.sizes[d] > e.size[d])
                return "chunk " + std::to_string(i) + " reaches outside the tensor in dimension " + std::to_string(d);
            volume *= c.sizes[d];
        }
        covered += volume;
        for (std::size_t j = 0; j < i && e.chunks.size() <= 4096; ++j) {
            const DcpChunk& o = e.chunks[j];
            bool overlap = true;
            for (std::size_t d = 0; d < e.size.size(); ++d)
                overlap = overlap && c.offsets[d] < o.offsets[d] + o.sizes[d] && o.offsets[d] < c.offsets[d] + c.sizes[d];
            if (overlap && volume > 0)
                return "chunks " + std::to_string(j) + " and " + std::to_string(i) + " overlap";
        }
    }
    if (covered != total)
        return "the chunks cover " + std::to_string(static_cast<int64_t>(covered)) + " of "
             + std::to_string(static_cast<int64_t>(total)) + " elements";
    return {};
}

} // namespace

bool isDcpMetadataFile(const std::string& path)
{
    const std::string name = std::filesystem::path(path).filename().string();
    if (name == ".metadata")
        return true;
    if (!name.starts_with("__") || !name.ends_with(".metadata") || name.size() <= 11)
        return false;
    const std::string rank = name.substr(2, name.size() - 11);
    return std::all_of(rank.begin(), rank.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::unique_ptr<CheckpointFile> DcpCheckpoint::openChunk(const DcpChunk& chunk) const
{
    if (chunk.file.empty())
        throw OpenError(dir, "this item has no storage location in .metadata");
    return CheckpointFile::openSlice(dir + "/" + chunk.file, chunk.offset, chunk.length);
}

namespace {

// One metadata file's entries; chunk tiling is checked once all files are merged.
std::vector<DcpEntry> readEntries(const std::string& dir, const std::string& metaName, DcpCheckpoint& out)
{
    const std::string metaPath = dir + "/" + metaName;
    auto meta = CheckpointFile::open(metaPath);
    if (out.metadataFiles.empty())
        out.imports = meta->imports();
    const ValueGraph& g = meta->graph();
    const NodeId root = meta->root();
    if (stateClass(g, root) != "Metadata")
        throw OpenError(metaPath, "not a torch.distributed.checkpoint Metadata object");
    if (out.version.empty())
        out.version = text(g, field(g, root, "version"));
    std::vector<DcpEntry> entries;

    // storage_data: MetadataIndex(fqn, offset) -> _StorageInfo(relative_path, offset, length)
    std::map<std::pair<std::string, std::vector<int64_t>>, DcpChunk> storage;
    const NodeId storageData = field(g, root, "storage_data");
    if (g.valid(storageData) && g[storageData].kind == Kind::Dict) {
        const auto& items = g[storageData].items;
        for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
            const std::string fqn = text(g, field(g, items[i], "fqn"));
            const std::vector<int64_t> offsets = ints(g, field(g, items[i], "offset"));
            DcpChunk c;
            c.file = text(g, field(g, items[i + 1], "relative_path"));
            static const std::regex chunkFile(R"(__(\d+)_\d+\.distcp$)");
            c.rank = rankInName(c.file, chunkFile);
            c.offset = static_cast<uint64_t>(std::max<int64_t>(0, intOf(g, field(g, items[i + 1], "offset"))));
            c.length = static_cast<uint64_t>(std::max<int64_t>(0, intOf(g, field(g, items[i + 1], "length"))));
            if (field(g, items[i + 1], "transform_descriptors") != kNoNode)
                out.warnings.push_back(fqn + ": stored with stream transforms, which are not decoded");
            storage[{fqn, offsets}] = c;
        }
    }
    std::map<std::string, KeyPath> planner;
    const NodeId plannerData = field(g, root, "planner_data");
    if (g.valid(plannerData) && g[plannerData].kind == Kind::Dict) {
        const auto& items = g[plannerData].items;
        for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
            KeyPath path;
            for (NodeId part : g[items[i + 1]].items)
                path.push_back(keyPartOf(g, part));
            planner[text(g, items[i])] = path;
        }
    }

    // Megatron-core <= 0.15 pickles its MCoreMetadata subclass with mcore_data: {key: {} or
    // {nd_reformulated_orig_global_shape: shape}} (megatron/core/dist_checkpointing/strategies/torch.py).
    std::map<std::string, std::vector<int64_t>> originalShapes;
    if (const NodeId mcore = field(g, root, "mcore_data"); g.valid(mcore) && g[mcore].kind == Kind::Dict) {
        const auto& items = g[mcore].items;
        for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
            const std::vector<int64_t> shape = ints(g, field(g, items[i + 1], "nd_reformulated_orig_global_shape"));
            if (!shape.empty())
                originalShapes[text(g, items[i])] = shape;
        }
    }
    const NodeId sdm = field(g, root, "state_dict_metadata");
    if (!g.valid(sdm) || g[sdm].kind != Kind::Dict)
        throw OpenError(metaPath, "Metadata has no state_dict_metadata");
    const auto& items = g[sdm].items;
    for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
        DcpEntry e;
        e.fqn = text(g, items[i]);
        if (const auto it = planner.find(e.fqn); it != planner.end()) {
            e.path = it->second;
        } else {
            std::size_t start = 0;
            for (std::size_t dot; (dot = e.fqn.find('.', start)) != std::string::npos; start = dot + 1)
                e.path.push_back(e.fqn.substr(start, dot - start));
            e.path.push_back(e.fqn.substr(start));
        }
        const NodeId md = items[i + 1];
        if (const auto it = originalShapes.find(e.fqn); it != originalShapes.end())
            e.originalShape = it->second;
        e.isBytes = stateClass(g, md) == "BytesStorageMetadata";
        if (e.isBytes) {
            const auto it = storage.find({e.fqn, {}});
            if (it != storage.end())
                e.chunks.push_back(it->second);
            else
                e.problem = "no storage entry for this bytes item";
        } else {
            const NodeId props = field(g, md, "properties");
            const NodeId propState = g.valid(props) && g[props].kind == Kind::Object ? g[props].state : kNoNode;
            if (g.valid(propState) && g[propState].kind == Kind::Tuple && !g[propState].items.empty())
                e.dtype = g[g[propState].items[0]].text;
            else if (const NodeId dt = field(g, props, "dtype"); g.valid(dt))
                e.dtype = g[dt].text;
            e.size = ints(g, field(g, md, "size"));
            const NodeId chunks = field(g, md, "chunks");
            for (NodeId c : g.valid(chunks) ? g[chunks].items : std::vector<NodeId>{}) {
                DcpChunk chunk;
                chunk.offsets = ints(g, field(g, c, "offsets"));
                chunk.sizes = ints(g, field(g, c, "sizes"));
                const auto it = storage.find({e.fqn, chunk.offsets});
                if (it != storage.end()) {
                    chunk.file = it->second.file;
                    chunk.rank = it->second.rank;
                    chunk.offset = it->second.offset;
                    chunk.length = it->second.length;
                } else if (e.problem.empty()) {
                    e.problem = "a chunk has no storage entry in " + metaName;
                }
                e.chunks.push_back(std::move(chunk));
            }
        }
        entries.push_back(std::move(e));
    }
    return entries;
}

// The coordinator's .metadata, or else every rank's __<rank>.metadata (saves without a process
// group, formats.md §5.1), in rank order.
std::vector<std::string> metadataFileNames(const std::string& dir)
{
    std::error_code ec;
    if (std::filesystem::exists(dir + "/.metadata", ec))
        return {".metadata"};
    static const std::regex perRank(R"(^__(\d+)\.metadata$)");
    std::vector<std::pair<int, std::string>> ranks;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (const int rank = rankInName(name, perRank); rank >= 0)
            ranks.emplace_back(rank, name);
    }
    std::sort(ranks.begin(), ranks.end());
    std::vector<std::string> names;
    for (auto& [rank, name] : ranks)
        names.push_back(std::move(name));
    return names.empty() ? std::vector<std::string>{".metadata"} : names; // opening it names the missing file
}

} // namespace

DcpCheckpoint readDcpCheckpoint(const std::string& dir)
{
    DcpCheckpoint out;
    out.dir = dir;
    std::map<std::string, std::size_t> byFqn;
    for (const auto& name : metadataFileNames(dir)) {
        for (auto& e : readEntries(dir, name, out)) {
            const auto [it, fresh] = byFqn.try_emplace(e.fqn, out.entries.size());
            if (fresh) {
                out.entries.push_back(std::move(e));
                continue;
            }
            // Per-rank metadata: each rank lists its own chunks; a replicated tensor or a byte item
            // appears once per rank, with the same box (a replica, not an overlap).
            DcpEntry& merged = out.entries[it->second];
            if (merged.isBytes || e.isBytes)
                continue;
            for (auto& c : e.chunks) {
                const bool replica = std::any_of(merged.chunks.begin(), merged.chunks.end(), [&](const DcpChunk& o) {
                    return o.offsets == c.offsets && o.sizes == c.sizes;
                });
                if (!replica)
                    merged.chunks.push_back(std::move(c));
            }
            if (merged.problem.empty())
                merged.problem = e.problem;
        }
        out.metadataFiles.push_back(name);
    }
    for (auto& e : out.entries) {
        if (!e.isBytes && e.problem.empty())
            e.problem = checkTiling(e);
        if (!e.problem.empty())
            out.warnings.push_back(e.fqn + ": " + e.problem);
    }
    return out;
}

} // namespace ckpt
