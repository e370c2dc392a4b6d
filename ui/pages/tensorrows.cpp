// SPDX-License-Identifier: MIT
#include "ui/pages/tensorrows.h"

#include "ckpt/frameworks/framework_registry.h"
#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/formats/rank_names.h"
#include "ckpt/state/training_state.h"
#include "ckpt/stats/checkpoint_stats.h"
#include "ckpt/stats/tensor_compare.h"
#include "ckpt/stats/tensor_stats.h"
#include "ui/textformat.h"

#include <QDir>
#include <QObject>
#include <QFileInfo>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

using namespace ckpt;

namespace {


int64_t product(const std::vector<int64_t>& shape)
{
    int64_t n = 1;
    for (const int64_t d : shape)
        n = d > 0 && n > INT64_MAX / d ? INT64_MAX : n * d;
    return n;
}

void addFileRows(const std::shared_ptr<const CheckpointFile>& file, int fileIndex, const QString& name,
                 std::vector<TensorRow>& rows)
{
    // One QString per shard file and per dtype, shared by the rows (implicit sharing): a frontier
    // model's 90k rows each built their own from the same few texts.
    std::vector<QString> shardNames(file->shards().size());
    std::map<std::string, QString> dtypes;
    rows.reserve(rows.size() + file->tensorEntries().size());
    for (const TensorEntry& entry : file->tensorEntries()) {
        if (entry.alias)
            continue;
        const TensorInfo& t = file->tensors()[entry.tensor];
        TensorRow row;
        row.name = formatKey(entry.key);
        auto dtype = dtypes.find(t.dtypeName);
        if (dtype == dtypes.end())
            dtype = dtypes.emplace(t.dtypeName, fromUtf8(t.dtypeName)).first;
        row.dtype = dtype->second;
        row.shape = t.shape;
        row.numel = t.numel();
        row.bytes = t.nbytes();
        row.file = name;
        // A sharded safetensors index keeps each tensor in one of its shard files.
        if (t.storage >= 0 && file->format() == FileFormat::SafetensorsIndex) {
            const uint32_t shard = file->storages()[static_cast<std::size_t>(t.storage)].fileIndex;
            if (shard > 0 && shard <= file->shards().size()) {
                QString& shardName = shardNames[shard - 1];
                if (shardName.isNull())
                    shardName = QFileInfo(fromUtf8(file->shards()[shard - 1].path())).fileName();
                row.file = shardName;
            }
        }
        if (!t.problem.empty())
            row.problem = fromUtf8(t.problem);
        row.fileIndex = fileIndex;
        row.tensor = entry.tensor;
        rows.push_back(std::move(row));
    }
}

void addDcpRows(const DcpCheckpoint& dcp, std::vector<TensorRow>& rows)
{
    for (std::size_t i = 0; i < dcp.entries.size(); ++i) {
        const DcpEntry& e = dcp.entries[i];
        if (e.isBytes)
            continue;
        TensorRow row;
        row.dcpEntry = static_cast<int>(i);
        row.name = fromUtf8(e.fqn);
        std::string dtype = e.dtype;
        if (dtype.starts_with("torch."))
            dtype.erase(0, 6);
        row.dtype = fromUtf8(dtype);
        row.shape = e.size;
        row.numel = product(e.size);
        row.bytes = static_cast<uint64_t>(row.numel) * dtypeSize(dtypeFromTorchName(dtype));
        QStringList files;
        for (const DcpChunk& chunk : e.chunks) {
            row.shards.push_back({chunk.rank, chunk.offsets, chunk.sizes, fromUtf8(chunk.file)});
            if (!files.contains(fromUtf8(chunk.file)))
                files.append(fromUtf8(chunk.file));
        }
        row.file = files.join(QStringLiteral(", "));
        row.shardKind = QObject::tr("DCP chunks");
        row.problem = fromUtf8(e.problem);
        rows.push_back(std::move(row));
    }
}

struct OpenedFile {
    int rank = -1;
    std::string role;
};

// The same key in the files of several ranks: ZeRO partitions of one flat tensor (DeepSpeed's
// per-rank optimizer files), or copies each DDP rank saved of the same tensor. One row more per
// key merges them (partitions) or checks they agree (replicas); the per-rank rows stay. RNG
// files are per-rank states, different by design: never grouped.
void addRankGroups(Layout layout, const std::vector<OpenedFile>& opened, std::vector<TensorRow>& rows)
{
    std::map<QString, std::vector<int>> byKey; // ordered: the group rows come in name order
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const TensorRow& row = rows[i];
        if (row.fileIndex < 0)
            continue;
        const OpenedFile& file = opened[static_cast<std::size_t>(row.fileIndex)];
        if (file.rank >= 0 && file.role != "rng")
            byKey[row.name].push_back(static_cast<int>(i));
    }
    for (auto& [name, members] : byKey) {
        std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
            return opened[static_cast<std::size_t>(rows[static_cast<std::size_t>(a)].fileIndex)].rank
                < opened[static_cast<std::size_t>(rows[static_cast<std::size_t>(b)].fileIndex)].rank;
        });
        if (members.size() < 2)
            continue;
        const TensorRow& first = rows[static_cast<std::size_t>(members.front())];
        // A scalar in every rank's ZeRO file (Adam's step) is a copy, not a piece.
        const bool partitions = conventionsOf(layout).optimizerPartitionedAcrossRanks.holds && !first.shape.empty()
            && opened[static_cast<std::size_t>(first.fileIndex)].role == "optimizer";
        bool sameShape = true;
        for (const int m : members) {
            const TensorRow& r = rows[static_cast<std::size_t>(m)];
            sameShape = sameShape && r.shape == first.shape && r.dtype == first.dtype;
        }
        if (!partitions && !sameShape)
            continue; // not copies of one tensor, nor pieces of one
        TensorRow group;
        group.name = name;
        group.dtype = first.dtype;
        group.shardKind = partitions ? QObject::tr("ZeRO partitions") : QObject::tr("replicas");
        group.members = members;
        group.replicated = !partitions;
        QStringList files;
        int64_t offset = 0;
        for (const int m : members) {
            const TensorRow& r = rows[static_cast<std::size_t>(m)];
            const int rank = opened[static_cast<std::size_t>(r.fileIndex)].rank;
            files.append(r.file);
            if (partitions) {
                group.shards.push_back({rank, {offset}, {r.numel}, r.file, {}});
                offset += r.numel;
                group.bytes += r.bytes;
            } else {
                group.shards.push_back({rank, std::vector<int64_t>(r.shape.size(), 0), r.shape, r.file, {}});
            }
            if (!r.problem.isEmpty() && group.problem.isEmpty())
                group.problem = r.problem;
        }
        group.shape = partitions ? std::vector<int64_t>{offset} : first.shape;
        group.numel = partitions ? offset : first.numel;
        if (!partitions)
            group.bytes = first.bytes;
        group.file = files.join(QStringLiteral(", "));
        const int at = static_cast<int>(rows.size());
        for (const int m : members)
            rows[static_cast<std::size_t>(m)].group = at;
        rows.push_back(std::move(group));
    }
}

// Parameters a layout stores in pieces across its files (Megatron-LM's tensor-parallel shards, one
// per mp_rank file: ParameterEntry::pieces). One row more per parameter, under its global name,
// joins the pieces along the split dimension, or checks the copies of a replicated parameter
// (layernorms, row-parallel biases) agree; the per-file rows stay.
void addPieceGroups(const TrainingState& state, const std::vector<std::shared_ptr<const CheckpointFile>>& files,
                    std::vector<TensorRow>& rows)
{
    if (!state.model)
        return;
    std::map<std::pair<int, QString>, int> rowOf; // (file index, key) -> row
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].fileIndex >= 0)
            rowOf.emplace(std::pair{rows[i].fileIndex, rows[i].name}, static_cast<int>(i));
    }
    std::map<std::string, int> fileIndex;
    for (std::size_t i = 0; i < files.size(); ++i)
        fileIndex.emplace(files[i]->path(), static_cast<int>(i));
    for (const ParameterEntry& p : state.model->parameters) {
        if (p.pieces.size() < 2)
            continue;
        std::vector<int> members;
        for (const Provenance& piece : p.pieces) {
            const auto file = fileIndex.find(piece.file);
            const auto row = file == fileIndex.end() ? rowOf.end() : rowOf.find({file->second, formatKey(piece.key)});
            if (row == rowOf.end())
                break;
            members.push_back(row->second);
        }
        if (members.size() != p.pieces.size())
            continue; // a piece's file did not open: its error is listed, the pieces stay per file
        TensorRow group;
        group.name = fromUtf8(p.name);
        group.dtype = fromUtf8(p.dtype);
        group.shape = p.shape;
        group.numel = p.numel;
        group.replicated = p.splitDim < 0;
        group.shardKind = group.replicated ? QObject::tr("replicas") : QObject::tr("tensor-parallel shards");
        group.members = members;
        QStringList names;
        int64_t offset = 0;
        for (std::size_t i = 0; i < members.size(); ++i) {
            const TensorRow& r = rows[static_cast<std::size_t>(members[i])];
            std::vector<int64_t> offsets(r.shape.size(), 0);
            if (!group.replicated && static_cast<std::size_t>(p.splitDim) < offsets.size()) {
                offsets[static_cast<std::size_t>(p.splitDim)] = offset;
                offset += r.shape[static_cast<std::size_t>(p.splitDim)];
            }
            group.shards.push_back({static_cast<int>(i), offsets, r.shape, r.file, {}});
            group.bytes += group.replicated && i > 0 ? 0 : r.bytes;
            names.append(r.file);
            if (!r.problem.isEmpty() && group.problem.isEmpty())
                group.problem = r.problem;
        }
        group.file = names.join(QStringLiteral(", "));
        const int at = static_cast<int>(rows.size());
        for (const int m : members)
            rows[static_cast<std::size_t>(m)].group = at;
        rows.push_back(std::move(group));
    }
}

} // namespace

CheckpointTensors collectTensors(const TrainingState& state, const std::function<bool(int, int)>& progress)
{
    CheckpointTensors out;
    if (const std::string dcp = dcpFolder(state.layout); !dcp.empty()) {
        try {
            out.dcp = std::make_shared<const DcpCheckpoint>(readDcpCheckpoint(dcp));
            addDcpRows(*out.dcp, out.rows);
        } catch (const std::exception& e) {
            out.errors.append(fromUtf8(e.what()));
        }
        return out;
    }
    std::vector<const LayoutFile*> files;
    for (const LayoutFile& f : state.layout.files) {
        if (opensAsCheckpointFile(f)) // each tensor in one file: a safetensors index stands for its shards
            files.push_back(&f);
    }
    const int total = static_cast<int>(files.size());
    QStringList paths;
    for (const LayoutFile& f : state.layout.files)
        paths.append(fromUtf8(f.path));
    const QString base = checkpointFileBase(fromUtf8(state.layout.path), paths);
    std::vector<OpenedFile> opened;
    for (int i = 0; i < total; ++i) {
        if (progress && !progress(i, total))
            return out;
        const LayoutFile& info = *files[static_cast<std::size_t>(i)];
        try {
            std::shared_ptr<const CheckpointFile> file = state.keptFile(info.path);
            if (!file)
                file = CheckpointFile::open(info.path);
            addFileRows(file, static_cast<int>(out.files.size()), nameInCheckpoint(base, fromUtf8(info.path)), out.rows);
            out.files.push_back(std::move(file));
            opened.push_back({info.rank >= 0 ? info.rank : ckpt::rankFromFileName(info.path), info.role});
        } catch (const std::exception& e) {
            out.errors.append(fromUtf8(e.what()));
        }
    }
    addRankGroups(state.layout.layout, opened, out.rows);
    addPieceGroups(state, out.files, out.rows);
    if (progress)
        progress(total, total);
    return out;
}

TensorStatsView toStatsView(const TensorStats& stats)
{
    TensorStatsView v;
    v.problem = fromUtf8(stats.problem);
    v.min = stats.min;
    v.max = stats.max;
    v.mean = stats.mean;
    v.std = stats.std;
    v.l2 = stats.l2;
    v.absMax = stats.absmax;
    v.nan = stats.nan;
    v.posInf = stats.posinf;
    v.negInf = stats.neginf;
    v.zeros = stats.zeros;
    v.histLo = stats.hist.lo;
    v.histHi = stats.hist.hi;
    v.histCounts = stats.hist.counts;
    v.logHistLo = stats.logHist.lo;
    v.logHistHi = stats.logHist.hi;
    v.logHistCounts = stats.logHist.counts;
    v.histUncertain = stats.histUncertain;
    v.logHistUncertain = stats.logHistUncertain;
    return v;
}

namespace {

QString number(double v)
{
    return QString::number(v, 'g', 4);
}

QString shardNote(const TensorStatsView& v)
{
    if (!v.problem.isEmpty())
        return v.problem;
    return QObject::tr("mean %1, L2 %2").arg(number(v.mean), number(v.l2));
}

TensorStatsView partitionStats(const CheckpointTensors& tensors, const TensorRow& row, const StatsOptions& options)
{
    std::optional<StatsAccumulator> merged;
    std::vector<TensorPart> parts;
    StatsOptions partOptions = options;
    partOptions.mergeableHistograms = true; // the merged histograms come from the partitions' sketches
    TensorStatsView out;
    for (const int m : row.members) {
        const TensorRow& member = tensors.rows.at(static_cast<std::size_t>(m));
        const CheckpointFile& file = *tensors.files.at(static_cast<std::size_t>(member.fileIndex));
        try {
            const TensorInfo& tensor = file.tensors().at(member.tensor);
            parts.push_back({&file, &tensor});
            const StatsAccumulator part = accumulateTensorStats(file, tensor, partOptions);
            out.shardStats.push_back(toStatsView(part.finish()));
            if (!merged)
                merged.emplace(part);
            else
                merged->merge(part);
        } catch (const CancelledError&) {
            throw;
        } catch (const std::exception& e) {
            TensorStatsView failed;
            failed.problem = fromUtf8(e.what());
            out.shardStats.push_back(std::move(failed));
            if (out.problem.isEmpty())
                out.problem = QObject::tr("rank %1's partition: %2").arg(row.shards[out.shardStats.size() - 1].rank).arg(fromUtf8(e.what()));
        }
        out.shardNotes.append(shardNote(out.shardStats.back()));
    }
    if (merged && out.problem.isEmpty()) {
        if (!binMergedFromSketches(*merged))
            rebinMergedStats(*merged, parts);
        std::vector<TensorStatsView> shards = std::move(out.shardStats);
        const QStringList notes = out.shardNotes;
        out = toStatsView(merged->finish());
        out.shardStats = std::move(shards);
        out.shardNotes = notes;
    }
    return out;
}

TensorStatsView replicaStats(const CheckpointTensors& tensors, const TensorRow& row, const StatsOptions& options)
{
    const TensorRow& first = tensors.rows.at(static_cast<std::size_t>(row.members.front()));
    const CheckpointFile& firstFile = *tensors.files.at(static_cast<std::size_t>(first.fileIndex));
    const TensorInfo& firstTensor = firstFile.tensors().at(first.tensor);
    TensorStatsView out = toStatsView(computeTensorStats(firstFile, firstTensor, options));
    int differing = 0;
    for (std::size_t i = 0; i < row.members.size(); ++i) {
        if (i == 0) {
            out.shardNotes.append(QObject::tr("the reference"));
            continue;
        }
        const TensorRow& member = tensors.rows.at(static_cast<std::size_t>(row.members[i]));
        const CheckpointFile& file = *tensors.files.at(static_cast<std::size_t>(member.fileIndex));
        const TensorDiff d = compareTensors(firstFile, firstTensor, file, file.tensors().at(member.tensor), options);
        if (!d.problem.empty()) {
            out.shardNotes.append(fromUtf8(d.problem));
            ++differing;
        } else if (d.status == DiffStatus::Equal) {
            out.shardNotes.append(QObject::tr("identical"));
        } else {
            out.shardNotes.append(QObject::tr("differs: %n element(s), max |Δ| %1", nullptr, static_cast<int>(d.nDiff))
                                      .arg(number(d.maxAbsDiff)));
            ++differing;
        }
    }
    if (differing)
        out.shardSummary = QObject::tr("%n rank(s) hold a different copy", nullptr, differing);
    return out;
}

} // namespace

TensorStatsView computeRowStats(const CheckpointTensors& tensors, const TensorRow& row, const StatsOptions& options)
{
    if (row.dcpEntry >= 0 && tensors.dcp) {
        const DcpEntry& entry = tensors.dcp->entries.at(static_cast<std::size_t>(row.dcpEntry));
        const ShardedTensorStats sharded = computeDcpTensorStats(*tensors.dcp, entry, options);
        TensorStatsView v = toStatsView(sharded.merged);
        if (v.problem.isEmpty() && !sharded.problem.empty())
            v.problem = fromUtf8(sharded.problem);
        for (const ShardInfo& shard : sharded.shards) {
            v.shardStats.push_back(toStatsView(shard.stats));
            v.shardNotes.append(shardNote(v.shardStats.back()));
        }
        return v;
    }
    if (!row.members.empty())
        return row.replicated ? replicaStats(tensors, row, options) : partitionStats(tensors, row, options);
    if (row.fileIndex < 0 || static_cast<std::size_t>(row.fileIndex) >= tensors.files.size()) {
        TensorStatsView v;
        v.problem = QObject::tr("the file holding this tensor is not open");
        return v;
    }
    const CheckpointFile& file = *tensors.files[static_cast<std::size_t>(row.fileIndex)];
    return toStatsView(computeTensorStats(file, file.tensors().at(row.tensor), options));
}
