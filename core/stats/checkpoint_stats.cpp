// SPDX-License-Identifier: MIT
#include "ckpt/stats/checkpoint_stats.h"

#include "ckpt/frameworks/framework_registry.h"
#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/formats/rank_names.h"
#include "ckpt/formats/tensor_view_reader.h"
#include "ckpt/io/errors.h"
#include "stats_state.h"

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

namespace ckpt {
namespace {

namespace fs = std::filesystem;

TensorStats problemStats(const TensorInfo& t, const std::string& problem)
{
    TensorStats s;
    s.dtype = t.dtypeName;
    s.numel = static_cast<uint64_t>(t.numel());
    s.problem = problem;
    return s;
}

using KeepFn = std::function<bool(const TensorEntry&)>;

// Statistics of every tensor of a file; accumulators of the entries `keep` selects are copied
// into `kept` (for merging shards across files). With `stream`, each entry goes there in entry
// order as soon as it and every earlier one are ready, and FileStats::tensors stays empty.
FileStats fileStats(const CheckpointFile& file, const StatsOptions& options, const KeepFn& keep,
                    std::map<uint32_t, StatsAccumulator>* kept, const EntryStatsSink& stream = {})
{
    // Indexed by tensor, not maps: a frontier model's 90k tensors each carry two 64-bin histograms
    // (1.3 KiB with the figures). They move into the result at their last entry instead of being
    // copied; streamed, they are freed there, so only those waiting for an earlier entry are held.
    const auto& entries = file.tensorEntries();
    const std::size_t tensorCount = file.tensors().size();
    std::vector<std::unique_ptr<TensorStats>> stats(tensorCount);
    std::vector<std::size_t> lastEntry(tensorCount);
    std::vector<std::optional<TensorViewReader>> readers;
    std::vector<uint32_t> tensorOf;
    std::vector<bool> keepSet(tensorCount), seen(tensorCount);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const TensorEntry& e = entries[i];
        lastEntry[e.tensor] = i;
        if (e.alias || seen[e.tensor])
            continue;
        seen[e.tensor] = true;
        const TensorInfo& t = file.tensors()[e.tensor];
        if (!statsSupported(t.dtype)) {
            stats[e.tensor] = std::make_unique<TensorStats>(problemStats(t, "no statistics for elements of type " + t.dtypeName));
            continue;
        }
        try {
            readers.emplace_back(std::in_place, file, t);
            tensorOf.push_back(e.tensor);
            if (keep && kept && keep(e))
                keepSet[e.tensor] = true;
        } catch (const std::exception& ex) {
            stats[e.tensor] = std::make_unique<TensorStats>(problemStats(t, ex.what()));
        }
    }
    std::vector<const TensorViewReader*> views;
    views.reserve(readers.size());
    for (const auto& r : readers)
        views.push_back(&*r);
    FileStats out;
    out.path = file.path();
    if (!stream)
        out.tensors.reserve(entries.size());
    // Hands entries over in order from `next` on: while they are ready, or all of them once the scan
    // is over (`all`).
    std::size_t next = 0;
    auto handOver = [&](bool all) {
        for (; next < entries.size(); ++next) {
            const TensorEntry& e = entries[next];
            std::unique_ptr<TensorStats>& s = stats[e.tensor];
            if (!s && !all)
                return;
            if (!s)
                s = std::make_unique<TensorStats>(); // an alias whose tensor came first under no entry
            TensorStatsEntry entry{e.key, e.tensor, e.alias, next == lastEntry[e.tensor] ? std::move(*s) : *s};
            if (next == lastEntry[e.tensor])
                s.reset();
            if (stream)
                stream(next, std::move(entry));
            else
                out.tensors.push_back(std::move(entry));
        }
    };
    std::mutex mutex;
    detail::scanViewsForStats(views, options, [&](std::size_t i, StatsAccumulator&& acc) {
        const uint32_t t = tensorOf[i];
        auto s = std::make_unique<TensorStats>(acc.finish());
        std::lock_guard lock(mutex);
        stats[t] = std::move(s);
        if (keepSet[t])
            kept->emplace(t, std::move(acc));
        if (stream)
            handOver(false);
    });
    handOver(true);
    return out;
}

// Progress of one part of a larger job, reported against the whole.
StatsOptions partOf(const StatsOptions& options, uint64_t bytesBefore, uint64_t bytesTotal, std::size_t tensorsBefore)
{
    StatsOptions part = options;
    if (options.progress) {
        part.progress = [=, &options](const StatsProgress& p) {
            StatsProgress whole = p;
            whole.bytesDone = bytesBefore + p.bytesDone;
            whole.bytesTotal = std::max(bytesTotal, whole.bytesDone);
            whole.tensorsDone = tensorsBefore + p.tensorsDone;
            whole.tensorsTotal = tensorsBefore + p.tensorsTotal;
            return options.progress(whole);
        };
    }
    return part;
}

struct OpenedFile {
    LayoutFile info;
    std::unique_ptr<CheckpointFile> file;
    std::size_t statsIndex = 0;
};

void addPartitions(CheckpointStats& out, const std::vector<OpenedFile>& files,
                   std::map<std::pair<std::size_t, uint32_t>, StatsAccumulator>& kept, bool exact)
{
    // key -> pieces in rank order
    std::map<std::string, std::vector<std::pair<const OpenedFile*, uint32_t>>> byKey;
    for (const auto& f : files) {
        for (const auto& e : f.file->tensorEntries()) {
            if (!e.alias && kept.contains({f.statsIndex, e.tensor}))
                byKey[formatKeyPath(e.key)].push_back({&f, e.tensor});
        }
    }
    for (auto& [key, pieces] : byKey) {
        if (pieces.size() < 2)
            continue;
        std::sort(pieces.begin(), pieces.end(), [](const auto& a, const auto& b) { return a.first->info.rank < b.first->info.rank; });
        ShardedTensorStats s;
        s.key = key;
        s.kind = "rank_partitions";
        int64_t offset = 0;
        std::optional<StatsAccumulator> merged;
        std::vector<TensorPart> parts;
        for (const auto& [f, t] : pieces) {
            const TensorInfo& info = f->file->tensors()[t];
            parts.push_back({f->file.get(), &info});
            const StatsAccumulator& acc = kept.at({f->statsIndex, t});
            s.dtype = info.dtypeName;
            ShardInfo shard;
            shard.rank = f->info.rank;
            shard.file = f->info.path;
            shard.offsets = {offset};
            shard.sizes = {info.numel()};
            shard.stats = acc.finish();
            offset += info.numel();
            if (!merged)
                merged.emplace(acc);
            else if (merged->dtype() == acc.dtype())
                merged->merge(acc);
            else
                s.problem = "partitions have different dtypes";
            s.shards.push_back(std::move(shard));
        }
        s.shape = {offset};
        if (s.problem.empty() && (exact || !binMergedFromSketches(*merged)))
            rebinMergedStats(*merged, parts);
        s.merged = merged->finish();
        out.sharded.push_back(std::move(s));
    }
}

void addReplicas(CheckpointStats& out, const std::vector<OpenedFile>& files, const StatsOptions& options)
{
    // role -> files of distinct ranks holding that role
    std::map<std::string, std::vector<const OpenedFile*>> byRole;
    for (const auto& f : files) {
        if (f.info.rank >= 0 && f.info.role != "rng")
            byRole[f.info.role].push_back(&f);
    }
    for (auto& [role, group] : byRole) {
        if (group.size() < 2)
            continue;
        std::sort(group.begin(), group.end(), [](auto* a, auto* b) { return a->info.rank < b->info.rank; });
        const OpenedFile& first = *group.front();
        for (const auto& e : first.file->tensorEntries()) {
            if (e.alias)
                continue;
            const TensorInfo& t0 = first.file->tensors()[e.tensor];
            ReplicaGroup rg;
            rg.key = formatKeyPath(e.key);
            rg.ranks.push_back(first.info.rank);
            rg.files.push_back(first.info.path);
            for (std::size_t i = 1; i < group.size(); ++i) {
                const OpenedFile& other = *group[i];
                const auto& others = other.file->tensorEntries();
                const auto it = std::find_if(others.begin(), others.end(), [&](const TensorEntry& o) { return o.key == e.key; });
                if (it == others.end())
                    continue;
                TensorDiff d = compareTensors(*first.file, t0, *other.file, other.file->tensors()[it->tensor], options);
                d.key = rg.key;
                d.fileA = first.info.path;
                d.fileB = other.info.path;
                d.keyA = d.keyB = e.key;
                rg.identical = rg.identical && d.status == DiffStatus::Equal;
                rg.ranks.push_back(other.info.rank);
                rg.files.push_back(other.info.path);
                rg.vsFirst.push_back(std::move(d));
            }
            if (rg.ranks.size() > 1)
                out.replicas.push_back(std::move(rg));
        }
    }
}

void dcpStats(CheckpointStats& out, const std::string& dir, const StatsOptions& options)
{
    const DcpCheckpoint dcp = readDcpCheckpoint(dir);
    out.warnings.insert(out.warnings.end(), dcp.warnings.begin(), dcp.warnings.end());
    uint64_t total = 0, before = 0;
    for (const auto& e : dcp.entries) {
        for (const auto& c : e.chunks)
            total += e.isBytes ? 0 : c.length;
    }
    std::size_t tensorsBefore = 0;
    for (const auto& e : dcp.entries) {
        if (e.isBytes)
            continue;
        out.sharded.push_back(computeDcpTensorStats(dcp, e, partOf(options, before, total, tensorsBefore)));
        for (const auto& c : e.chunks)
            before += c.length;
        ++tensorsBefore;
    }
}

} // namespace

FileStats computeFileStats(const CheckpointFile& file, const StatsOptions& options)
{
    return fileStats(file, options, {}, nullptr);
}

void streamFileStats(const CheckpointFile& file, const StatsOptions& options, const EntryStatsSink& entries)
{
    fileStats(file, options, {}, nullptr, entries);
}

// A DCP tensor's row before its chunks are added: name, dtype, global shape, problem.
ShardedTensorStats dcpTensorShell(const DcpEntry& e)
{
    ShardedTensorStats s;
    s.key = e.fqn;
    s.kind = "dcp_chunks";
    s.dtype = e.dtype;
    s.shape = e.size;
    s.problem = e.problem;
    return s;
}

std::vector<ShardedTensorStats> dcpShardMaps(const DcpCheckpoint& dcp)
{
    std::vector<ShardedTensorStats> out;
    for (const auto& e : dcp.entries) {
        if (e.isBytes)
            continue;
        ShardedTensorStats s = dcpTensorShell(e);
        for (const auto& c : e.chunks)
            s.shards.push_back({c.rank, c.file, c.offsets, c.sizes, c.offset, c.length, {}});
        out.push_back(std::move(s));
    }
    return out;
}

namespace {

// Exact merged histograms of a DCP tensor: its chunks were closed after their scan, so they
// are opened again for a second read. A chunk unreadable this time leaves the merged
// histograms out (exactHistograms false).
void rebinFromChunks(const DcpCheckpoint& dcp, const DcpEntry& e, StatsAccumulator& merged)
{
    std::vector<std::unique_ptr<CheckpointFile>> opened;
    std::vector<TensorPart> parts;
    try {
        for (const auto& c : e.chunks) {
            opened.push_back(dcp.openChunk(c));
            const auto& entries = opened.back()->tensorEntries();
            if (!entries.empty())
                parts.push_back({opened.back().get(), &opened.back()->tensors()[entries.front().tensor]});
        }
        rebinMergedStats(merged, parts);
    } catch (const CancelledError&) {
        throw;
    } catch (const std::exception&) {
    }
}

} // namespace

ShardedTensorStats computeDcpTensorStats(const DcpCheckpoint& dcp, const DcpEntry& e, const StatsOptions& options)
{
    ShardedTensorStats s = dcpTensorShell(e);
    std::optional<StatsAccumulator> merged;
    StatsOptions chunkOptions = options;
    chunkOptions.mergeableHistograms = true; // the merged histograms come from the chunks' sketches
    for (const auto& c : e.chunks) {
        ShardInfo shard{c.rank, c.file, c.offsets, c.sizes, c.offset, c.length, {}};
        try {
            const auto chunk = dcp.openChunk(c);
            const auto& entries = chunk->tensorEntries();
            if (entries.empty())
                throw FormatError("the chunk holds no tensor");
            const TensorInfo& t = chunk->tensors()[entries.front().tensor];
            StatsAccumulator acc = accumulateTensorStats(*chunk, t, chunkOptions);
            shard.stats = acc.finish();
            if (!merged)
                merged.emplace(std::move(acc));
            else
                merged->merge(acc);
        } catch (const CancelledError&) {
            throw;
        } catch (const std::exception& ex) {
            shard.stats.dtype = e.dtype;
            shard.stats.problem = ex.what();
            s.problem += (s.problem.empty() ? "" : "; ") + std::string(ex.what());
        }
        s.shards.push_back(std::move(shard));
    }
    if (merged) {
        if (s.problem.empty() && (options.exactHistograms || !binMergedFromSketches(*merged)))
            rebinFromChunks(dcp, e, *merged);
        s.merged = merged->finish();
    } else
        s.merged.problem = s.problem.empty() ? "no readable chunk" : s.problem;
    s.merged.dtype = e.dtype;
    return s;
}

CheckpointStats computeCheckpointStats(const std::string& path, const StatsOptions& options)
{
    return computeCheckpointStats(path, options, StatsStream());
}

CheckpointStats computeCheckpointStats(const std::string& path, const StatsOptions& options, const StatsStream& stream)
{
    const bool streamed = stream.beginFile || stream.entry || stream.endFile;
    CheckpointStats out;
    out.path = path;
    const CheckpointLayout layout = detectLayout(path);
    out.layout = layoutName(layout.layout);
    try {
        if (const std::string dcp = dcpFolder(layout); !dcp.empty()) {
            dcpStats(out, dcp, options);
            return out;
        }
        std::vector<OpenedFile> files;
        uint64_t total = 0;
        for (const auto& info : layout.files) {
            if (!opensAsCheckpointFile(info))
                continue;
            try {
                OpenedFile f{info, CheckpointFile::open(info.path), 0};
                if (f.info.rank < 0)
                    f.info.rank = rankFromFileName(info.path);
                total += f.file->fileSize();
                files.push_back(std::move(f));
            } catch (const std::exception& e) {
                out.warnings.push_back(e.what());
            }
        }
        const bool partitions = conventionsOf(layout.layout).optimizerPartitionedAcrossRanks.holds;
        std::map<std::pair<std::size_t, uint32_t>, StatsAccumulator> kept;
        uint64_t before = 0;
        std::size_t tensorsBefore = 0;
        for (auto& f : files) {
            std::map<uint32_t, StatsAccumulator> keptHere;
            const bool keepAll = partitions && f.info.rank >= 0 && f.info.role == "optimizer";
            f.statsIndex = static_cast<std::size_t>(&f - files.data()); // the key of its kept partials
            StatsOptions part = partOf(options, before, total, tensorsBefore);
            part.mergeableHistograms = keepAll; // partitions merge from their sketches, without a second read
            if (stream.beginFile)
                stream.beginFile(*f.file, FileStats{f.file->path(), f.info.role, f.info.rank, {}});
            // streamed without an entry sink, the figures are dropped, not kept
            EntryStatsSink entries = stream.entry;
            if (streamed && !entries)
                entries = [](std::size_t, TensorStatsEntry&&) {};
            FileStats fs = fileStats(*f.file, part, keepAll ? KeepFn([](const TensorEntry&) { return true; }) : KeepFn(),
                                     &keptHere, entries);
            for (auto& [t, acc] : keptHere)
                kept.emplace(std::make_pair(f.statsIndex, t), std::move(acc));
            fs.role = f.info.role;
            fs.rank = f.info.rank;
            before += f.file->fileSize();
            tensorsBefore += f.file->tensorEntries().size();
            if (streamed) {
                if (stream.endFile)
                    stream.endFile(*f.file);
            } else {
                out.files.push_back(std::move(fs));
            }
        }
        if (partitions)
            addPartitions(out, files, kept, options.exactHistograms);
        else
            addReplicas(out, files, options);
    } catch (const CancelledError&) {
        out.cancelled = true;
    } catch (const OpenError& e) {
        out.warnings.push_back(e.what());
    }
    return out;
}

} // namespace ckpt
