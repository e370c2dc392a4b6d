// SPDX-License-Identifier: MIT
#include "ckpt/stats/tensor_source.h"

#include "ckpt/formats/tensor_view_reader.h"
#include "ckpt/io/errors.h"
#include "ckpt/stats/checkpoint_stats.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <unordered_map>

namespace ckpt {
namespace {

namespace fs = std::filesystem;

// The region [offsets, offsets + sizes) of a strided tensor, as a view of the same storage.
TensorInfo region(const TensorInfo& whole, const std::vector<int64_t>& offsets, const std::vector<int64_t>& sizes)
{
    if (whole.stride.size() != whole.shape.size() || offsets.size() != whole.shape.size() || sizes.size() != offsets.size())
        throw FormatError("a chunk of rank " + std::to_string(offsets.size()) + " does not fit a tensor of rank "
                          + std::to_string(whole.shape.size()));
    TensorInfo part = whole;
    part.shape = sizes;
    for (std::size_t d = 0; d < offsets.size(); ++d) {
        if (offsets[d] < 0 || sizes[d] < 0 || offsets[d] + sizes[d] > whole.shape[d])
            throw FormatError("a chunk reaches outside the tensor in dimension " + std::to_string(d));
        part.storageOffset += offsets[d] * whole.stride[d];
    }
    return part;
}

std::vector<int64_t> wholeOffsets(const TensorPiece& p)
{
    return p.offsets.empty() ? std::vector<int64_t>(p.tensor.shape.size(), 0) : p.offsets;
}

} // namespace

std::vector<std::pair<TensorPiece, TensorPiece>> pairPieces(const ResolvedTensor& a, const ResolvedTensor& b)
{
    std::vector<std::pair<TensorPiece, TensorPiece>> out;
    if (!a.sharded() && !b.sharded()) {
        out.emplace_back(a.pieces.front(), b.pieces.front());
        return out;
    }
    // One side whole: cut the other side's tiling out of it.
    if (!a.sharded() || !b.sharded()) {
        const bool aWhole = !a.sharded();
        const TensorPiece& whole = aWhole ? a.pieces.front() : b.pieces.front();
        for (const TensorPiece& p : (aWhole ? b : a).pieces) {
            TensorPiece cut{whole.file, region(whole.tensor, wholeOffsets(p), p.tensor.shape), wholeOffsets(p)};
            if (aWhole)
                out.emplace_back(std::move(cut), p);
            else
                out.emplace_back(p, std::move(cut));
        }
        return out;
    }
    if (a.pieces.size() != b.pieces.size())
        throw FormatError("the two sides are sharded differently (" + std::to_string(a.pieces.size()) + " vs "
                          + std::to_string(b.pieces.size()) + " chunks)");
    for (const TensorPiece& pa : a.pieces) {
        const auto it = std::find_if(b.pieces.begin(), b.pieces.end(), [&](const TensorPiece& pb) {
            return pb.offsets == pa.offsets && pb.tensor.shape == pa.tensor.shape;
        });
        if (it == b.pieces.end())
            throw FormatError("the two sides are sharded differently (chunk offsets differ)");
        out.emplace_back(pa, *it);
    }
    return out;
}

struct TensorSource::Impl {
    std::map<std::string, std::shared_ptr<const CheckpointFile>> files;
    // Per file, its tensors by printed key path ("0" for the integer key 0 too), built on the first
    // lookup: the rules ask for every tensor of a 90k-tensor set one by one.
    std::map<std::string, std::unordered_map<std::string, uint32_t>> byKey;
    std::map<std::string, std::unique_ptr<DcpCheckpoint>> dcps;      // by folder
    std::map<std::string, std::unique_ptr<CheckpointFile>> chunks;   // by folder, file and byte offset
};

TensorSource::TensorSource() : m(std::make_unique<Impl>()) {}
TensorSource::~TensorSource() = default;

const CheckpointFile& TensorSource::file(const std::string& path)
{
    auto& slot = m->files[path];
    if (!slot)
        slot = CheckpointFile::open(path);
    return *slot;
}

void TensorSource::adopt(std::shared_ptr<const CheckpointFile> file)
{
    if (file)
        m->files.try_emplace(file->path(), std::move(file));
}

const TensorInfo* TensorSource::find(const std::string& path, const KeyPath& key)
{
    const CheckpointFile& f = file(path);
    auto [index, fresh] = m->byKey.try_emplace(path);
    if (fresh) {
        index->second.reserve(f.tensorEntries().size());
        for (const auto& e : f.tensorEntries())
            index->second.emplace(formatKeyPath(e.key), e.tensor); // the first entry of a key wins
    }
    // Provenances may spell an integer dict key as text ("0" for 0): the printed path matches both.
    const auto it = index->second.find(formatKeyPath(key));
    return it == index->second.end() ? nullptr : &f.tensors()[it->second];
}

const DcpCheckpoint& TensorSource::dcp(const std::string& metadataFile)
{
    const std::string dir = fs::path(metadataFile).parent_path().string();
    auto& d = m->dcps[dir];
    if (!d)
        d = std::make_unique<DcpCheckpoint>(readDcpCheckpoint(dir));
    return *d;
}

namespace {

// A fragment: elements [start, start + numel) of a flat partition, as a 1-D view of it or, when the
// range says so, a row-major view of that shape.
void narrowToElements(ResolvedTensor& r, const ElementRange& range, const Provenance& from)
{
    TensorInfo& t = r.pieces.front().tensor;
    if (t.shape.size() != 1 || t.stride.size() != 1)
        throw FormatError(from.file + ": " + formatKeyPath(from.key) + " is not a flat tensor, so elements ["
                          + std::to_string(range.start) + ":" + std::to_string(range.start + range.numel) + "] do not name a part of it");
    if (range.start < 0 || range.numel < 0 || range.start + range.numel > t.shape[0])
        throw FormatError(from.file + ": " + formatKeyPath(from.key) + " has " + std::to_string(t.shape[0]) + " elements, not ["
                          + std::to_string(range.start) + ":" + std::to_string(range.start + range.numel) + "]");
    t.storageOffset += range.start * t.stride[0];
    t.shape = {range.numel};
    int64_t viewNumel = 1;
    for (const int64_t d : range.shape)
        viewNumel *= d;
    if (!range.shape.empty() && viewNumel == range.numel) { // row-major strides over the run
        const int64_t step = t.stride[0];
        t.shape = range.shape;
        t.stride.assign(range.shape.size(), step);
        for (std::size_t i = range.shape.size() - 1; i-- > 0;)
            t.stride[i] = t.stride[i + 1] * range.shape[i + 1];
    }
    r.shape = t.shape;
}

// Megatron-core's N-D flattened tensor (docs/layouts.md §6): global shape (shards per dimension...,
// shard numel), each chunk one whole tensor-parallel shard stored flat, row-major. Seen in the shape
// it stands for, each chunk is that shard's box. A chunk holding only a range of a shard (the
// distributed optimizer's flattened_range) is no box of the original: refused with the reason.
void unflattenShards(ResolvedTensor& r, const DcpEntry& e)
{
    const std::size_t dims = e.originalShape.size();
    if (e.size.size() != dims + 1)
        throw FormatError(e.fqn + ": its flattened shape " + std::to_string(e.size.size()) + "-D does not fit the original " + std::to_string(dims) + "-D one");
    std::vector<int64_t> local(dims);
    int64_t localNumel = 1;
    for (std::size_t d = 0; d < dims; ++d) {
        if (e.size[d] <= 0 || e.originalShape[d] % e.size[d] != 0)
            throw FormatError(e.fqn + ": its shards do not divide the original shape");
        local[d] = e.originalShape[d] / e.size[d];
        localNumel *= local[d];
    }
    for (TensorPiece& piece : r.pieces) {
        if (piece.offsets.size() != dims + 1 || piece.offsets[dims] != 0 || piece.tensor.numel() != localNumel)
            throw FormatError(e.fqn + ": stored as ranges of flattened shards (Megatron's fully_sharded_model_space), "
                              "which are not boxes of the parameter's shape");
        const int64_t step = piece.tensor.stride.empty() ? 1 : piece.tensor.stride.back();
        piece.tensor.shape = local;
        piece.tensor.stride.assign(dims, step);
        for (std::size_t d = dims - 1; d-- > 0;)
            piece.tensor.stride[d] = piece.tensor.stride[d + 1] * local[d + 1];
        std::vector<int64_t> offsets(dims);
        for (std::size_t d = 0; d < dims; ++d)
            offsets[d] = piece.offsets[d] * local[d];
        piece.offsets = std::move(offsets);
    }
    r.shape = e.originalShape;
}

} // namespace

ResolvedTensor TensorSource::resolve(const Provenance& from)
{
    ResolvedTensor r;
    if (!isDcpMetadataFile(from.file)) {
        const TensorInfo* t = find(from.file, from.key);
        if (!t)
            throw FormatError(from.file + ": no tensor at " + formatKeyPath(from.key));
        r.dtype = t->dtypeName;
        r.shape = t->shape;
        r.pieces.push_back({&file(from.file), *t, {}});
        if (from.elements)
            narrowToElements(r, *from.elements, from);
        return r;
    }
    if (from.elements)
        throw FormatError(from.file + ": " + formatKeyPath(from.key) + ": an element range of a DCP entry cannot be resolved");
    const DcpCheckpoint& d = dcp(from.file);
    const auto e = std::find_if(d.entries.begin(), d.entries.end(),
                                [&](const DcpEntry& x) { return !x.isBytes && x.path == from.key; });
    if (e == d.entries.end())
        throw FormatError(from.file + ": no tensor at " + formatKeyPath(from.key));
    if (!e->problem.empty())
        throw FormatError(from.file + ": " + e->fqn + ": " + e->problem);
    r.dtype = e->dtype;
    r.shape = e->size;
    for (const DcpChunk& c : e->chunks) {
        auto& slot = m->chunks[d.dir + "/" + c.file + "@" + std::to_string(c.offset)];
        if (!slot)
            slot = d.openChunk(c);
        if (slot->tensorEntries().empty())
            throw FormatError(d.dir + "/" + c.file + ": the chunk of " + e->fqn + " holds no tensor");
        TensorInfo t = slot->tensors()[slot->tensorEntries().front().tensor];
        if (t.shape != c.sizes)
            throw FormatError(d.dir + "/" + c.file + ": the chunk of " + e->fqn + " has another shape than .metadata says");
        r.pieces.push_back({slot.get(), std::move(t), c.offsets});
    }
    if (!r.pieces.empty())
        r.dtype = r.pieces.front().tensor.dtypeName; // .metadata spells it torch.float32
    if (!e->originalShape.empty())
        unflattenShards(r, *e);
    return r;
}

TensorStats TensorSource::stats(const std::string& path, const TensorInfo& tensor, const StatsOptions& options)
{
    return computeTensorStats(file(path), tensor, options);
}

TensorStats TensorSource::stats(const Provenance& from, const StatsOptions& options)
{
    try {
        if (isDcpMetadataFile(from.file)) {
            // Chunk by chunk and merged exactly (histograms too), as `ckpt tensors --stats` shows them.
            const DcpCheckpoint& d = dcp(from.file);
            for (const auto& e : d.entries) {
                if (e.path != from.key || e.isBytes)
                    continue;
                ShardedTensorStats sharded = computeDcpTensorStats(d, e, options);
                if (!sharded.problem.empty()) // figures over some chunks are not the tensor's
                    sharded.merged.problem = from.file + ": " + e.fqn + ": " + sharded.problem;
                return sharded.merged;
            }
            TensorStats s;
            s.problem = from.file + ": no tensor at " + formatKeyPath(from.key);
            return s;
        }
        const ResolvedTensor r = resolve(from);
        return computeTensorStats(*r.pieces.front().file, r.pieces.front().tensor, options);
    } catch (const CancelledError&) {
        throw;
    } catch (const std::exception& e) {
        TensorStats s;
        s.problem = e.what();
        return s;
    }
}

TensorDiff TensorSource::compare(const Provenance& a, const Provenance& b, const StatsOptions& options)
{
    TensorDiff d;
    try {
        const ResolvedTensor ra = resolve(a), rb = resolve(b);
        d.dtypeA = ra.dtype;
        d.dtypeB = rb.dtype;
        d.shapeA = ra.shape;
        d.shapeB = rb.shape;
        if (ra.shape != rb.shape) {
            d.status = DiffStatus::ShapeChanged;
            return d;
        }
        if (ra.dtype != rb.dtype) {
            d.status = DiffStatus::DtypeChanged;
            return d;
        }
        const auto pairs = pairPieces(ra, rb);
        if (pairs.size() == 1 && !ra.sharded() && !rb.sharded())
            return compareTensors(*pairs.front().first.file, pairs.front().first.tensor, *pairs.front().second.file,
                                  pairs.front().second.tensor, options);
        std::vector<TensorViewReader> views;
        views.reserve(2 * pairs.size());
        std::vector<ViewPairJob> jobs;
        for (const auto& [pa, pb] : pairs) {
            views.emplace_back(*pa.file, pa.tensor);
            views.emplace_back(*pb.file, pb.tensor);
        }
        for (std::size_t i = 0; i < pairs.size(); ++i)
            jobs.push_back({0, &views[2 * i], &views[2 * i + 1]});
        std::vector<TensorDiff> one(1);
        if (!compareViewPairs(jobs, one, options))
            throw CancelledError();
        one.front().dtypeA = d.dtypeA;
        one.front().dtypeB = d.dtypeB;
        one.front().shapeA = d.shapeA;
        one.front().shapeB = d.shapeB;
        return one.front();
    } catch (const CancelledError&) {
        throw;
    } catch (const std::exception& e) {
        d.status = DiffStatus::Unreadable;
        d.problem = e.what();
        return d;
    }
}

} // namespace ckpt
