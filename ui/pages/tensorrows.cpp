// SPDX-License-Identifier: MIT
#include "ui/pages/tensorrows.h"

#include "core/checkpoint_file.h"
#include "core/checkpoint_stats.h"
#include "core/dcp_checkpoint.h"
#include "core/tensor_stats.h"
#include "core/training_state.h"
#include "ui/textformat.h"

#include <QDir>
#include <QObject>
#include <QFileInfo>

#include <set>

using namespace ckpt;

namespace {

// Roles whose files never hold tensors: JSON state, commit markers, the DCP index.
bool holdsTensors(const LayoutFile& file)
{
    static const std::set<std::string> skipped{"manifest", "complete", "trainer_state", "metadata"};
    return !skipped.contains(file.role);
}

QString relativeName(const std::string& checkpointPath, const std::string& file)
{
    const QFileInfo root(fromUtf8(checkpointPath));
    if (!root.isDir())
        return QFileInfo(fromUtf8(file)).fileName();
    return QDir(root.filePath()).relativeFilePath(fromUtf8(file));
}

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
    for (const TensorEntry& entry : file->tensorEntries()) {
        if (entry.alias)
            continue;
        const TensorInfo& t = file->tensors()[entry.tensor];
        TensorRow row;
        row.name = formatKey(entry.key);
        row.dtype = fromUtf8(t.dtypeName);
        row.shape = t.shape;
        row.numel = t.numel();
        row.bytes = t.nbytes();
        row.file = name;
        // A sharded safetensors index keeps each tensor in one of its shard files.
        if (t.storage >= 0 && file->format() == FileFormat::SafetensorsIndex) {
            const uint32_t shard = file->storages()[static_cast<std::size_t>(t.storage)].fileIndex;
            if (shard > 0 && shard <= file->shards().size())
                row.file = QFileInfo(fromUtf8(file->shards()[shard - 1].path())).fileName();
        }
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
        row.problem = fromUtf8(e.problem);
        rows.push_back(std::move(row));
    }
}

} // namespace

CheckpointTensors collectTensors(const TrainingState& state, const std::function<bool(int, int)>& progress)
{
    CheckpointTensors out;
    if (state.layout.layout == Layout::Dcp) {
        try {
            out.dcp = std::make_shared<const DcpCheckpoint>(readDcpCheckpoint(state.layout.path));
            addDcpRows(*out.dcp, out.rows);
        } catch (const std::exception& e) {
            out.errors.append(fromUtf8(e.what()));
        }
        return out;
    }
    std::vector<const LayoutFile*> files;
    for (const LayoutFile& f : state.layout.files) {
        if (holdsTensors(f))
            files.push_back(&f);
    }
    const int total = static_cast<int>(files.size());
    for (int i = 0; i < total; ++i) {
        if (progress && !progress(i, total))
            return out;
        const std::string& path = files[static_cast<std::size_t>(i)]->path;
        try {
            std::shared_ptr<const CheckpointFile> file = CheckpointFile::open(path);
            addFileRows(file, static_cast<int>(out.files.size()), relativeName(state.layout.path, path), out.rows);
            out.files.push_back(std::move(file));
        } catch (const std::exception& e) {
            out.errors.append(fromUtf8(e.what()));
        }
    }
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
    return v;
}

TensorStatsView computeRowStats(const CheckpointTensors& tensors, const TensorRow& row, const StatsOptions& options)
{
    if (row.dcpEntry >= 0 && tensors.dcp) {
        const DcpEntry& entry = tensors.dcp->entries.at(static_cast<std::size_t>(row.dcpEntry));
        const ShardedTensorStats sharded = computeDcpTensorStats(*tensors.dcp, entry, options);
        TensorStatsView v = toStatsView(sharded.merged);
        if (v.problem.isEmpty() && !sharded.problem.empty())
            v.problem = fromUtf8(sharded.problem);
        return v;
    }
    if (row.fileIndex < 0 || static_cast<std::size_t>(row.fileIndex) >= tensors.files.size()) {
        TensorStatsView v;
        v.problem = QObject::tr("the file holding this tensor is not open");
        return v;
    }
    const CheckpointFile& file = *tensors.files[static_cast<std::size_t>(row.fileIndex)];
    return toStatsView(computeTensorStats(file, file.tensors().at(row.tensor), options));
}
