// SPDX-License-Identifier: MIT
#include "core/tensor_stats.h"

#include "core/checkpoint_file.h"
#include "core/chunked_scan.h"
#include "core/errors.h"
#include "core/stats_state.h"
#include "core/tensor_view_reader.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace ckpt {
namespace {

using kernels::Kind;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Bin of v in [lo, hi] (hi itself in the last bin), the expression the tests mirror.
std::size_t binOf(double v, double lo, double hi)
{
    const double pos = (v - lo) / (hi - lo) * kHistogramBins;
    if (!(pos >= 0))
        return 0;
    return std::min<std::size_t>(kHistogramBins - 1, static_cast<std::size_t>(pos));
}

// torch.histc's convention when every value is the same: widen the range by one each side.
void setRange(Histogram& h, double lo, double hi)
{
    if (lo == hi) {
        lo -= 1;
        hi += 1;
    }
    h.lo = lo;
    h.hi = hi;
    h.counts.assign(kHistogramBins, 0);
}

bool isZeroBucket(Kind kind, uint32_t key)
{
    return !kernels::censusExact(kind) && (key == 0 || key == 0x8000);
}

// A census bucket: `count` finite values somewhere in [lo, hi] (lo == hi: exactly that value).
struct CensusEntry {
    double lo, hi;
    uint64_t count;
};

CensusEntry entryOf(kernels::Kind kind, uint32_t key, uint64_t count)
{
    const double v = kernels::censusValue(kind, key);
    const bool smallInteger = kind >= kernels::Kind::I32 && kind <= kernels::Kind::U64 && std::abs(v) < 256;
    if (kernels::censusExact(kind) || smallInteger)
        return {v, v, count};
    const double a = std::bit_cast<float>(key << 16), b = std::bit_cast<float>((key << 16) | 0xffffu);
    return {std::min(a, b), std::max(a, b), count};
}

// The census as buckets of finite values; exact zeros of approximate kinds are an exact entry
// and the rest of their bucket (tiny subnormals) a bucket of their own.
std::vector<CensusEntry> finiteEntries(const StatsAccumulator::State& s)
{
    std::vector<CensusEntry> out;
    uint64_t zeroBucket = 0;
    for (uint32_t key = 0; key < s.census.size(); ++key) {
        const uint64_t c = s.census[key];
        if (c == 0)
            continue;
        if (isZeroBucket(s.kind, key)) {
            zeroBucket += c;
            continue;
        }
        if (std::isfinite(kernels::censusValue(s.kind, key)))
            out.push_back(entryOf(s.kind, key, c));
    }
    if (zeroBucket) {
        const uint64_t zeros = std::min(zeroBucket, s.moments.zeros);
        if (zeros)
            out.push_back({0.0, 0.0, zeros});
        if (zeroBucket > zeros)
            out.push_back(entryOf(s.kind, 0, zeroBucket - zeros));
    }
    return out;
}

// Adds a bucket's count to the bins it overlaps, in proportion to the overlap (values assumed
// spread evenly inside a bucket); [lo, hi] is clamped into the histogram's range first.
void spread(std::vector<double>& bins, const Histogram& h, double lo, double hi, uint64_t count, double rangeLo, double rangeHi)
{
    lo = std::clamp(lo, rangeLo, rangeHi);
    hi = std::clamp(hi, rangeLo, rangeHi);
    const std::size_t first = binOf(lo, h.lo, h.hi), last = binOf(hi, h.lo, h.hi);
    if (first == last || hi <= lo) {
        bins[first] += static_cast<double>(count);
        return;
    }
    const double width = (h.hi - h.lo) / kHistogramBins;
    for (std::size_t b = first; b <= last; ++b) {
        const double from = std::max(lo, h.lo + width * static_cast<double>(b));
        const double to = std::min(hi, b + 1 == kHistogramBins ? h.hi : h.lo + width * static_cast<double>(b + 1));
        if (to > from)
            bins[b] += static_cast<double>(count) * (to - from) / (hi - lo);
    }
}

// Whole counts from fractional ones, keeping the exact total (largest remainders round up).
void roundInto(Histogram& h, const std::vector<double>& bins, uint64_t total)
{
    uint64_t assigned = 0;
    std::vector<std::pair<double, std::size_t>> remainders;
    for (std::size_t b = 0; b < bins.size(); ++b) {
        h.counts[b] = static_cast<uint64_t>(std::floor(bins[b] + 1e-9));
        assigned += h.counts[b];
        remainders.push_back({bins[b] - static_cast<double>(h.counts[b]), b});
    }
    std::sort(remainders.begin(), remainders.end(), std::greater<>());
    for (std::size_t i = 0; assigned < total && i < remainders.size(); ++i, ++assigned)
        ++h.counts[remainders[i].second];
}

// Exact kinds: every figure from the census.
kernels::Moments momentsFromCensus(const StatsAccumulator::State& s)
{
    kernels::Moments m;
    for (uint32_t key = 0; key < s.census.size(); ++key) {
        const uint64_t c = s.census[key];
        if (c == 0)
            continue;
        const double v = kernels::censusValue(s.kind, key);
        if (std::isnan(v))
            m.nan += c;
        else if (v == std::numeric_limits<double>::infinity())
            m.posinf += c;
        else if (v == -std::numeric_limits<double>::infinity())
            m.neginf += c;
        else
            m.addRepeated(v, c);
    }
    return m;
}

void fillHistograms(TensorStats& out, const std::vector<CensusEntry>& entries, double minAbsNonZero)
{
    if (out.finite == 0)
        return;
    setRange(out.hist, out.min, out.max);
    std::vector<double> bins(kHistogramBins, 0.0);
    for (const auto& e : entries)
        spread(bins, out.hist, e.lo, e.hi, e.count, out.min, out.max);
    roundInto(out.hist, bins, out.finite);
    if (out.finite == out.zeros)
        return;
    const double logLo = std::log10(minAbsNonZero), logHi = std::log10(out.absmax);
    setRange(out.logHist, logLo, logHi);
    std::fill(bins.begin(), bins.end(), 0.0);
    for (const auto& e : entries) {
        if (e.lo == 0 && e.hi == 0)
            continue;
        // |x| over the bucket: [lo, hi] when positive, [-hi, -lo] when negative
        const double a = e.lo >= 0 ? e.lo : -e.hi, b = e.lo >= 0 ? e.hi : -e.lo;
        spread(bins, out.logHist, std::log10(std::max(a, minAbsNonZero)), std::log10(std::max(b, minAbsNonZero)), e.count, logLo, logHi);
    }
    roundInto(out.logHist, bins, out.finite - out.zeros);
}

} // namespace

uint64_t Histogram::total() const
{
    uint64_t n = 0;
    for (uint64_t c : counts)
        n += c;
    return n;
}

void StatsAccumulator::State::absorbCensus(uint32_t* local)
{
    const std::size_t size = kernels::censusSize(kind);
    if (census.empty())
        census.assign(size, 0);
    for (std::size_t k = 0; k < size; ++k) {
        census[k] += local[k];
        local[k] = 0;
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
    std::vector<uint32_t> local(kernels::censusSize(m->kind), 0);
    const std::size_t size = kernels::kindSize(m->kind);
    constexpr std::size_t kPiece = std::size_t(1) << 30; // keeps the 32-bit counts from overflowing
    for (std::size_t done = 0; done < count; done += kPiece) {
        const std::size_t n = std::min(kPiece, count - done);
        kernels::scan(m->kind, data + done * size, n, m->moments, local.data());
        m->absorbCensus(local.data());
    }
    m->count += count;
}

void StatsAccumulator::merge(const StatsAccumulator& other)
{
    if (other.m->dtype != m->dtype)
        throw std::invalid_argument("cannot merge statistics of " + std::string(dtypeName(other.m->dtype)) + " into "
                                    + std::string(dtypeName(m->dtype)));
    m->count += other.m->count;
    m->moments.merge(other.m->moments);
    if (!other.m->census.empty()) {
        if (m->census.empty())
            m->census.assign(other.m->census.size(), 0);
        for (std::size_t k = 0; k < m->census.size(); ++k)
            m->census[k] += other.m->census[k];
    }
}

TensorStats StatsAccumulator::finish() const
{
    const State& s = *m;
    TensorStats out;
    out.dtype = std::string(dtypeName(s.dtype));
    out.numel = s.count;
    out.complexMagnitude = isComplex(s.dtype);
    out.exactHistograms = kernels::censusExact(s.kind);
    const kernels::Moments mom = out.exactHistograms ? momentsFromCensus(s) : s.moments;
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
    fillHistograms(out, finiteEntries(s), mom.minAbsNonZero);
    return out;
}

namespace detail {

void scanViewsForStats(const std::vector<const TensorViewReader*>& views, const StatsOptions& options,
                       const std::function<void(std::size_t, StatsAccumulator&&)>& done)
{
    std::vector<ChunkPlanItem> plan;
    for (const auto* v : views)
        plan.push_back({v->numel(), v->elementSize()});
    struct Job {
        std::mutex mutex;
        std::unique_ptr<StatsAccumulator> acc;
        std::vector<kernels::Moments> chunks;
    };
    std::vector<Job> jobs(views.size());
    for (std::size_t i = 0; i < views.size(); ++i) {
        jobs[i].acc = std::make_unique<StatsAccumulator>(views[i]->dtype());
        jobs[i].chunks.resize(chunkCount(plan[i]));
    }
    const unsigned threads = scanThreads(options, plan);
    std::vector<std::vector<uint32_t>> census(threads, std::vector<uint32_t>(65536, 0));
    std::vector<std::vector<std::byte>> buffers(threads);

    runChunkedScan(
        plan, options,
        [&](const ChunkWork& w, unsigned worker) {
            const TensorViewReader& view = *views[w.item];
            Job& job = jobs[w.item];
            view.prefetch(w.begin, w.count);
            const std::byte* p = view.read(w.begin, w.count, buffers[worker]);
            kernels::scan(job.acc->state().kind, p, w.count, job.chunks[w.chunk], census[worker].data());
            view.release(w.begin, w.count);
            std::lock_guard lock(job.mutex);
            job.acc->state().absorbCensus(census[worker].data());
            job.acc->state().count += w.count;
        },
        [&](std::size_t item) {
            Job& job = jobs[item];
            for (const auto& m : job.chunks) // in element order: the result does not depend on timing
                job.acc->state().moments.merge(m);
            done(item, std::move(*job.acc));
            job.acc.reset();
            job.chunks = {};
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
