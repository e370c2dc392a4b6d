// SPDX-License-Identifier: MIT
#include "ckpt/stats/tensor_stats.h"

#include "chunked_scan.h"
#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/tensor_view_reader.h"
#include "ckpt/io/errors.h"
#include "linear_bins.h"
#include "stats_state.h"
#include "value_sketch.h"

#include <algorithm>
#include <cstring>
#include <array>
#include <bit>
#include <cmath>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace ckpt {
namespace {

using kernels::Kind;

// Bin of v in [lo, hi] (hi itself in the last bin): the log histogram's formula.
std::size_t binOf(double v, double lo, double hi)
{
    const double pos = (v - lo) / (hi - lo) * kHistogramBins;
    if (!(pos >= 0))
        return 0;
    return std::min<std::size_t>(kHistogramBins - 1, static_cast<std::size_t>(pos));
}

// torch.histc's convention when every value is the same: widen the range by one each side.
std::pair<double, double> widened(double lo, double hi)
{
    return lo == hi ? std::pair{lo - 1, hi + 1} : std::pair{lo, hi};
}

void setRange(Histogram& h, std::pair<double, double> range)
{
    h.lo = range.first;
    h.hi = range.second;
    h.counts.assign(kHistogramBins, 0);
}

double absMaxOf(const kernels::Moments& m) { return std::max(std::abs(m.min), std::abs(m.max)); }

// Every non-zero census count, in key order, visiting only the blocks that may hold one.
template<typename F>
void forEachCensusKey(const StatsAccumulator::State& s, F&& f)
{
    for (std::size_t b = 0; b * 64 < s.census.size(); ++b) {
        if (!s.censusBlock(b))
            continue;
        for (uint32_t key = static_cast<uint32_t>(b * 64); key < b * 64 + 64 && key < s.census.size(); ++key) {
            if (const uint64_t c = s.census[key])
                f(key, c);
        }
    }
}

// Census kinds: each key is one value, so both histograms are exact from the counts.
void censusHistograms(TensorStats& out, const StatsAccumulator::State& s, double minAbsNonZero)
{
    const auto bins = kernels::LinearBins::over(s.kind, out.min, out.max);
    setRange(out.hist, {bins.lo, bins.hi});
    const bool log = out.finite != out.zeros;
    if (log)
        setRange(out.logHist, widened(std::log10(minAbsNonZero), std::log10(out.absmax)));
    forEachCensusKey(s, [&](uint32_t key, uint64_t c) {
        const double v = kernels::censusValue(s.kind, key);
        if (!std::isfinite(v))
            return;
        out.hist.counts[bins.binOf(v)] += c;
        if (log && v != 0)
            out.logHist.counts[binOf(std::log10(std::abs(v)), out.logHist.lo, out.logHist.hi)] += c;
    });
}

// The other kinds: the histograms the scan binned once min and max were known (see
// scanViewsForStats), if they were binned over this very range. They are not when partials
// over different ranges were merged (shards) and rebinMergedStats was not called: then there
// are no histograms (counts empty, exactHistograms false).
void binnedHistograms(TensorStats& out, const StatsAccumulator::State& s, double minAbsNonZero)
{
    const auto bins = kernels::LinearBins::over(s.kind, out.min, out.max);
    const bool log = out.finite != out.zeros;
    const auto logRange = log ? widened(std::log10(minAbsNonZero), std::log10(out.absmax)) : std::pair{0.0, 0.0};
    const bool binned = s.linear.size() == kHistogramBins && s.linearLo == bins.lo && s.linearHi == bins.hi
                        && (!log || (s.logLo == logRange.first && s.logHi == logRange.second));
    if (!binned) {
        out.exactHistograms = out.exactLogHistogram = false;
        return;
    }
    setRange(out.hist, {bins.lo, bins.hi});
    out.hist.counts = s.linear;
    out.histUncertain = s.linearUncertain;
    out.exactHistograms = s.linearUncertain == 0;
    if (log) {
        setRange(out.logHist, logRange);
        out.logHist.counts = s.log;
        out.logHistUncertain = s.logUncertain;
        out.exactLogHistogram = s.logUncertain == 0;
    }
}

void fillHistograms(TensorStats& out, const StatsAccumulator::State& s, double minAbsNonZero)
{
    if (out.finite == 0)
        return;
    if (kernels::censusExact(s.kind))
        censusHistograms(out, s, minAbsNonZero);
    else
        binnedHistograms(out, s, minAbsNonZero);
}

// Both histograms of elements whose min, max and smallest non-zero |x| are in `m`.
struct ElementBins {
    kernels::LinearBins linear;
    kernels::LogBins log;

    ElementBins() = default;
    ElementBins(Kind kind, const kernels::Moments& m, uint64_t elements)
        : linear(kernels::LinearBins::over(kind, m.min, m.max))
    {
        if (std::isfinite(m.minAbsNonZero))
            log = kernels::LogBins::over(m.minAbsNonZero, absMaxOf(m), elements, kind == Kind::F32 ? 29 : 0);
    }
};

// Whether an accumulator's histograms are binned over these bins' ranges already.
bool binnedOverRanges(const StatsAccumulator::State& s, const ElementBins& bins)
{
    const bool log = s.moments.zeros != s.moments.n;
    return s.linear.size() == kHistogramBins && s.linearLo == bins.linear.lo && s.linearHi == bins.linear.hi
           && (!log || (s.logLo == bins.log.lo && s.logHi == bins.log.hi));
}

void storeBinned(StatsAccumulator::State& s, const ElementBins& bins, const uint64_t* linear, const uint64_t* log,
                 kernels::ValueSketch::Binned uncertain = {})
{
    s.linearUncertain = uncertain.linearUncertain;
    s.logUncertain = uncertain.logUncertain;
    s.linear.assign(linear, linear + kHistogramBins);
    s.log.assign(log, log + kHistogramBins);
    s.linearLo = bins.linear.lo;
    s.linearHi = bins.linear.hi;
    s.logLo = bins.log.lo;
    s.logHi = bins.log.hi;
}

// Exact histograms of elements just scanned (still in cache), over their own range.
void binScanned(StatsAccumulator::State& s, const std::byte* data, std::size_t count)
{
    if (kernels::censusExact(s.kind) || s.moments.n == 0)
        return;
    const ElementBins bins(s.kind, s.moments, count);
    std::array<uint64_t, kHistogramBins> linear{}, log{};
    kernels::binElements(s.kind, data, count, bins.linear, bins.log, linear.data(), log.data());
    storeBinned(s, bins, linear.data(), log.data());
}

// Exact kinds: every figure from the census.
kernels::Moments momentsFromCensus(const StatsAccumulator::State& s)
{
    kernels::Moments m;
    forEachCensusKey(s, [&](uint32_t key, uint64_t c) {
        const double v = kernels::censusValue(s.kind, key);
        if (std::isnan(v))
            m.nan += c;
        else if (v == std::numeric_limits<double>::infinity())
            m.posinf += c;
        else if (v == -std::numeric_limits<double>::infinity())
            m.neginf += c;
        else
            m.addRepeated(v, c);
    });
    return m;
}

} // namespace

uint64_t Histogram::total() const
{
    uint64_t n = 0;
    for (uint64_t c : counts)
        n += c;
    return n;
}

uint32_t* censusScratch()
{
    thread_local std::vector<uint32_t> scratch(65536, 0);
    return scratch.data();
}

void StatsAccumulator::State::absorbCensus(uint32_t* local, const std::byte* data, std::size_t count)
{
    const std::size_t size = kernels::censusSize(kind);
    if (census.empty())
        census.reset(size);
    // Few elements: visit their keys only (the keys kernels::scan counted: the raw 1- or 2-byte value).
    if (data && count < size / 16) {
        const std::size_t width = size == 256 ? 1 : 2;
        for (std::size_t i = 0; i < count; ++i) {
            uint32_t key = 0;
            if (width == 1) {
                key = static_cast<uint8_t>(data[i]);
            } else {
                uint16_t k16;
                std::memcpy(&k16, data + 2 * i, 2);
                key = k16;
            }
            if (local[key] != 0) {
                census.live(key / 64)[key % 64] += local[key];
                local[key] = 0;
            }
        }
        return;
    }
    for (std::size_t b = 0; b * 64 < size; ++b) {
        uint32_t any = 0;
        for (std::size_t k = b * 64; k < b * 64 + 64; ++k)
            any |= local[k];
        if (!any)
            continue;
        uint64_t* counts = census.live(b);
        for (std::size_t k = 0; k < 64; ++k) {
            counts[k] += local[b * 64 + k];
            local[b * 64 + k] = 0;
        }
    }
}

bool statsSupported(DType dtype) { return kernels::kindOf(dtype) != kernels::Kind::Unsupported; }

StatsAccumulator::StatsAccumulator(DType dtype) : m(std::make_unique<State>())
{
    m->dtype = dtype;
    m->kind = kernels::kindOf(dtype);
    if (m->kind == kernels::Kind::Unsupported)
        throw std::invalid_argument("no statistics for elements of type " + std::string(dtypeName(dtype)));
}

StatsAccumulator::StatsAccumulator(const StatsAccumulator& o) : m(std::make_unique<State>(*o.m)) {}
StatsAccumulator& StatsAccumulator::operator=(const StatsAccumulator& o)
{
    if (this != &o)
        m = std::make_unique<State>(*o.m);
    return *this;
}
StatsAccumulator::StatsAccumulator(StatsAccumulator&&) noexcept = default;
StatsAccumulator& StatsAccumulator::operator=(StatsAccumulator&&) noexcept = default;
StatsAccumulator::~StatsAccumulator() = default;

DType StatsAccumulator::dtype() const { return m->dtype; }
uint64_t StatsAccumulator::count() const { return m->count; }

void StatsAccumulator::add(const std::byte* data, std::size_t count)
{
    const bool first = m->count == 0;
    uint32_t* const local = censusScratch();
    const std::size_t size = kernels::kindSize(m->kind);
    constexpr std::size_t kPiece = std::size_t(1) << 30; // keeps the 32-bit counts from overflowing
    for (std::size_t done = 0; done < count; done += kPiece) {
        const std::size_t n = std::min(kPiece, count - done);
        kernels::scan(m->kind, data + done * size, n, m->moments, local);
        if (kernels::censusExact(m->kind))
            m->absorbCensus(local, data + done * size, n);
    }
    m->count += count;
    if (first) {
        binScanned(*m, data, count);
    } else {
        m->linear.clear();
        m->log.clear();
    }
}

void StatsAccumulator::merge(const StatsAccumulator& other)
{
    if (other.m->dtype != m->dtype)
        throw std::invalid_argument("cannot merge statistics of " + std::string(dtypeName(other.m->dtype)) + " into "
                                    + std::string(dtypeName(m->dtype)));
    m->count += other.m->count;
    // Binned histograms add up only over the same ranges; a side without finite elements
    // contributes no bins.
    State& a = *m;
    const State& b = *other.m;
    if (b.moments.n != 0) {
        if (a.moments.n == 0) {
            a.linear = b.linear;
            a.log = b.log;
            a.linearLo = b.linearLo;
            a.linearHi = b.linearHi;
            a.logLo = b.logLo;
            a.logHi = b.logHi;
            a.linearUncertain = b.linearUncertain;
            a.logUncertain = b.logUncertain;
        } else if (!a.linear.empty() && b.linear.size() == a.linear.size() && a.linearLo == b.linearLo
                   && a.linearHi == b.linearHi && a.logLo == b.logLo && a.logHi == b.logHi) {
            for (std::size_t i = 0; i < a.linear.size(); ++i) {
                a.linear[i] += b.linear[i];
                a.log[i] += b.log[i];
            }
            a.linearUncertain += b.linearUncertain;
            a.logUncertain += b.logUncertain;
        } else {
            a.linear.clear();
            a.log.clear();
        }
    }
    m->moments.merge(other.m->moments);
    m->sketch.merge(other.m->sketch);
    if (!other.m->census.empty()) {
        if (m->census.empty())
            m->census.reset(other.m->census.size());
        for (std::size_t b = 0; b * 64 < m->census.size(); ++b) {
            if (!other.m->censusBlock(b))
                continue;
            uint64_t* counts = m->census.live(b);
            for (std::size_t k = 0; k < 64; ++k)
                counts[k] += other.m->census[b * 64 + k];
        }
    }
}

TensorStats StatsAccumulator::finish() const
{
    const State& s = *m;
    TensorStats out;
    out.dtype = std::string(dtypeName(s.dtype));
    out.numel = s.count;
    out.complexMagnitude = isComplex(s.dtype);
    const kernels::Moments mom = kernels::censusExact(s.kind) ? momentsFromCensus(s) : s.moments;
    out.finite = mom.n;
    out.nan = mom.nan;
    out.posinf = mom.posinf;
    out.neginf = mom.neginf;
    out.zeros = mom.zeros;
    out.l2 = std::sqrt(mom.sumsq);
    if (mom.n > 0) {
        out.min = mom.min;
        out.max = mom.max;
        out.mean = mom.mean;
        out.absmax = std::max(std::abs(mom.min), std::abs(mom.max));
    }
    if (mom.n > 1)
        out.std = std::sqrt(mom.m2 / static_cast<double>(mom.n - 1));
    fillHistograms(out, s, mom.minAbsNonZero);
    return out;
}

namespace detail {

void scanViewsForStats(const std::vector<const TensorViewReader*>& views, const StatsOptions& options,
                       const std::function<void(std::size_t, StatsAccumulator&&)>& done)
{
    std::vector<ChunkPlanItem> plan;
    for (const auto* v : views)
        plan.push_back({v->numel(), v->elementSize()});
    // 32- and 64-bit kinds have too many distinct values for a census: their histograms are
    // binned once the tensor's min, max and smallest non-zero |x| are known (core/stats/linear_bins.h).
    // A tensor of one chunk is binned exactly straight after its scan, from the cache. Each
    // chunk of a larger one is summarised in a value sketch right after its scan, also from
    // the cache, and the histograms are binned from the merged sketch once the last chunk is
    // done (core/stats/value_sketch.h): the file is read once. With options.exactHistograms (or for
    // float64 values beyond float32's exponent range, which the sketch cannot resolve) they
    // are binned exactly instead, in a second look at the elements (pass 1) right after the
    // last chunk's scan, from the page cache, before any other chunk is started.
    struct Job {
        std::mutex mutex;
        std::unique_ptr<StatsAccumulator> acc;
        std::vector<kernels::Moments> chunks;
        kernels::ValueSketch sketch;
        ElementBins bins;
        std::array<uint64_t, kHistogramBins> linear{}, log{};
        kernels::ValueSketch::Binned uncertain;
        bool binned = false;
    };
    // A job (~2 KiB with its histograms) exists from its tensor's first chunk to its result: a
    // frontier model's 90k small tensors made 160 MiB of jobs up front. Workers meeting a tensor's
    // first chunks at once agree on its job under one of a few striped locks.
    std::vector<std::unique_ptr<Job>> jobs(views.size());
    std::array<std::mutex, 64> jobLocks;
    auto jobOf = [&](std::size_t i) -> Job& {
        std::lock_guard lock(jobLocks[i % jobLocks.size()]);
        if (!jobs[i]) {
            auto job = std::make_unique<Job>();
            job->acc = std::make_unique<StatsAccumulator>(views[i]->dtype());
            job->chunks.resize(chunkCount(plan[i]));
            jobs[i] = std::move(job);
        }
        return *jobs[i];
    };
    const unsigned threads = scanThreads(options, plan);
    const bool sketching = !options.exactHistograms, keepSketch = options.mergeableHistograms;
    std::vector<std::vector<std::byte>> buffers(threads);
    std::vector<std::unique_ptr<kernels::SketchTable>> tables(threads); // made when first needed

    runChunkedScan(
        plan, options,
        [&](const ChunkWork& w, unsigned worker) {
            const TensorViewReader& view = *views[w.item];
            Job& job = jobOf(w.item);
            const kernels::Kind kind = job.acc->state().kind;
            const std::byte* p = view.read(w.begin, w.count, buffers[worker]);
            if (w.pass == 1) {
                std::array<uint64_t, kHistogramBins> linear{}, log{};
                kernels::binElements(kind, p, w.count, job.bins.linear, job.bins.log, linear.data(), log.data());
                std::lock_guard lock(job.mutex);
                for (std::size_t b = 0; b < kHistogramBins; ++b) {
                    job.linear[b] += linear[b];
                    job.log[b] += log[b];
                }
                return;
            }
            kernels::Moments& m = job.chunks[w.chunk];
            uint32_t* const census = censusScratch(); // this thread's; absorbCensus leaves it zero
            kernels::scan(kind, p, w.count, m, census);
            const bool binnable = !kernels::censusExact(kind) && m.n > 0;
            const bool sketch = binnable && ((sketching && job.chunks.size() > 1) || keepSketch);
            if (binnable && job.chunks.size() == 1) { // the only chunk: bin it while hot
                job.bins = ElementBins(kind, m, w.count);
                kernels::binElements(kind, p, w.count, job.bins.linear, job.bins.log, job.linear.data(), job.log.data());
                job.binned = true;
            }
            if (sketch) {
                if (!tables[worker])
                    tables[worker] = std::make_unique<kernels::SketchTable>();
                kernels::sketchElements(kind, p, w.count, *tables[worker]);
            }
            std::lock_guard lock(job.mutex);
            if (sketch)
                job.sketch.absorb(*tables[worker]);
            if (kernels::censusExact(kind))
                job.acc->state().absorbCensus(census, p, w.count);
            job.acc->state().count += w.count;
        },
        [&](std::size_t item, int pass) {
            Job& job = jobOf(item);
            StatsAccumulator::State& s = job.acc->state();
            if (pass == 0) {
                for (const auto& m : job.chunks) // in element order: the result does not depend on timing
                    s.moments.merge(m);
                job.chunks = {};
                s.sketch = keepSketch ? std::move(job.sketch) : kernels::ValueSketch{};
                const kernels::Moments& m = s.moments;
                if (!job.binned && !kernels::censusExact(s.kind) && m.n > 0) {
                    const bool sketched = sketching && kernels::sketchCovers(s.kind, m.minAbsNonZero, absMaxOf(m));
                    // The bins' lookup table pays off only for an element-by-element look.
                    job.bins = ElementBins(s.kind, m, sketched ? 0 : s.count);
                    job.binned = true;
                    if (!sketched) {
                        job.sketch = {};
                        return true;
                    }
                    const kernels::ValueSketch& sketch = keepSketch ? s.sketch : job.sketch;
                    job.uncertain = sketch.bin(s.kind, job.bins.linear, job.bins.log, m.min, m.max, m.minAbsNonZero,
                                               absMaxOf(m), m.zeros, job.linear.data(), job.log.data());
                }
                job.sketch = {};
            }
            if (job.binned)
                storeBinned(s, job.bins, job.linear.data(), job.log.data(), job.uncertain);
            done(item, std::move(*job.acc));
            std::lock_guard lock(jobLocks[item % jobLocks.size()]);
            jobs[item].reset();
            return false;
        });
}

} // namespace detail

StatsAccumulator accumulateTensorStats(const CheckpointFile& file, const TensorInfo& tensor, const StatsOptions& options)
{
    const TensorViewReader view(file, tensor);
    std::optional<StatsAccumulator> result;
    detail::scanViewsForStats({&view}, options, [&](std::size_t, StatsAccumulator&& acc) { result = std::move(acc); });
    return std::move(*result);
}

bool binMergedFromSketches(StatsAccumulator& merged)
{
    StatsAccumulator::State& s = merged.state();
    const kernels::Moments& m = s.moments;
    if (kernels::censusExact(s.kind) || m.n == 0)
        return true;
    if (s.sketch.total() != m.n - m.zeros || !kernels::sketchCovers(s.kind, m.minAbsNonZero, absMaxOf(m)))
        return false;
    const ElementBins bins(s.kind, m, 0);
    if (binnedOverRanges(s, bins))
        return true;
    std::array<uint64_t, kHistogramBins> linear{}, log{};
    const auto uncertain = s.sketch.bin(s.kind, bins.linear, bins.log, m.min, m.max, m.minAbsNonZero, absMaxOf(m),
                                        m.zeros, linear.data(), log.data());
    storeBinned(s, bins, linear.data(), log.data(), uncertain);
    return true;
}

void rebinMergedStats(StatsAccumulator& merged, const std::vector<TensorPart>& parts)
{
    StatsAccumulator::State& s = merged.state();
    if (kernels::censusExact(s.kind) || s.moments.n == 0)
        return;
    const ElementBins bins(s.kind, s.moments, s.count);
    if (binnedOverRanges(s, bins))
        return;
    std::array<uint64_t, kHistogramBins> linear{}, logCounts{};
    std::vector<std::byte> buffer;
    for (const auto& part : parts) {
        const TensorViewReader view(*part.file, *part.tensor);
        if (view.dtype() != s.dtype)
            throw std::invalid_argument("cannot re-bin a part of type " + std::string(dtypeName(view.dtype())));
        const std::size_t window = std::max<std::size_t>(1, (8u << 20) / view.elementSize());
        for (uint64_t begin = 0; begin < view.numel(); begin += window) {
            const std::size_t count = static_cast<std::size_t>(std::min<uint64_t>(window, view.numel() - begin));
            const std::byte* p = view.read(begin, count, buffer);
            kernels::binElements(s.kind, p, count, bins.linear, bins.log, linear.data(), logCounts.data());
        }
    }
    storeBinned(s, bins, linear.data(), logCounts.data());
}

TensorStats computeTensorStats(const CheckpointFile& file, const TensorInfo& tensor, const StatsOptions& options)
{
    try {
        if (!statsSupported(tensor.dtype)) {
            TensorStats out;
            out.dtype = tensor.dtypeName;
            out.numel = static_cast<uint64_t>(tensor.numel());
            out.problem = "no statistics for elements of type " + tensor.dtypeName;
            return out;
        }
        return accumulateTensorStats(file, tensor, options).finish();
    } catch (const CancelledError&) {
        throw;
    } catch (const std::exception& e) {
        TensorStats out;
        out.dtype = tensor.dtypeName;
        out.numel = static_cast<uint64_t>(tensor.numel());
        out.problem = e.what();
        return out;
    }
}

} // namespace ckpt
