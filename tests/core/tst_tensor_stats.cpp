// SPDX-License-Identifier: MIT
// Tensor statistics, shards, replicas and the two-checkpoint diff against what PyTorch computes
// on the files tests/fixtures/make_stats_fixtures.py writes (stats_expected.json).
#include "test_support.h"

#include "ckpt/compare/checkpoint_diff.h"
#include "ckpt/io/errors.h"
#include "ckpt/report/stats_json.h"
#include "ckpt/stats/checkpoint_stats.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>

using namespace ckpt;
using namespace testsupport;
using nlohmann::json;

namespace {

std::string dir() { return std::string(CKPT_TESTDATA_DIR) + "/stats"; }
std::string at(const std::string& name) { return dir() + "/" + name; }

const json& expected()
{
    static const json j = readJson(at("stats_expected.json"));
    return j;
}

double num(const json& v) { return v.is_null() ? std::nan("") : v.get<double>(); }

bool close(double a, double b, double rel)
{
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b)) // torch's std and norm overflow to inf near the float64 maximum
        return a == b;
    return std::abs(a - b) <= rel * std::max(1.0, std::abs(b));
}

uint64_t l1(const std::vector<uint64_t>& a, const json& b)
{
    uint64_t d = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto e = b[i].get<uint64_t>();
        d += a[i] > e ? a[i] - e : e - a[i];
    }
    return d;
}

// Every bin of the linear histogram against torch.histc's.
void checkHistogramBins(const std::string& what, const Histogram& h, const json& e)
{
    QCOMPARE(h.counts.size(), std::size_t(kHistogramBins));
    for (std::size_t b = 0; b < h.counts.size(); ++b) {
        const auto want = e["counts"][b].get<uint64_t>();
        QVERIFY2(h.counts[b] == want, q(what + ": bin " + std::to_string(b) + " holds " + std::to_string(h.counts[b])
                                        + ", torch.histc " + std::to_string(want)));
    }
}

// One tensor's statistics against torch's: the linear histogram bin for bin against
// torch.histc, the log-|x| histogram against the formula applied to torch.log10 (where the
// two logarithms may differ in the last bit at a bin edge). Histograms binned from the value
// sketch (large 32/64-bit tensors, exactHistograms false) may place each uncertain element
// one bin off, no more.
void checkStats(const std::string& what, const TensorStats& s, const json& e)
{
    const QByteArray where = q(what);
    QVERIFY2(s.ok(), q(what + ": " + s.problem));
    QCOMPARE(s.numel, e["numel"].get<uint64_t>());
    QCOMPARE(s.nan, e["nan"].get<uint64_t>());
    QCOMPARE(s.posinf, e["posinf"].get<uint64_t>());
    QCOMPARE(s.neginf, e["neginf"].get<uint64_t>());
    QCOMPARE(s.zeros, e["zeros"].get<uint64_t>());
    QCOMPARE(s.finite, s.numel - s.nan - s.posinf - s.neginf);
    QVERIFY2(close(s.l2, num(e["l2"]), 1e-9), where);
    if (!e.contains("min")) {
        QVERIFY2(std::isnan(s.min) && std::isnan(s.mean) && s.hist.counts.empty(), where);
        return;
    }
    QVERIFY2(close(s.min, num(e["min"]), 1e-12), q(what + " min " + std::to_string(s.min)));
    QVERIFY2(close(s.max, num(e["max"]), 1e-12), q(what + " max " + std::to_string(s.max)));
    QVERIFY2(close(s.absmax, num(e["absmax"]), 1e-12), where);
    QVERIFY2(close(s.mean, num(e["mean"]), 1e-9), q(what + " mean " + std::to_string(s.mean) + " vs " + e["mean"].dump()));
    QVERIFY2(close(s.std, num(e["std"]), 1e-9), q(what + " std " + std::to_string(s.std) + " vs " + e["std"].dump()));

    QCOMPARE(s.hist.counts.size(), std::size_t(kHistogramBins));
    QCOMPARE(s.hist.total(), s.finite); // the histogram holds every finite element
    QVERIFY2(close(s.hist.lo, num(e["hist"]["lo"]), 1e-12) && close(s.hist.hi, num(e["hist"]["hi"]), 1e-12), where);
    QCOMPARE(s.exactHistograms, s.histUncertain == 0);
    QCOMPARE(s.exactLogHistogram, s.logHistUncertain == 0);
    if (s.exactHistograms) {
        checkHistogramBins(what, s.hist, e["hist"]);
    } else {
        const uint64_t off = l1(s.hist.counts, e["hist"]["counts"]);
        QVERIFY2(off <= 2 * s.histUncertain, q(what + ": sketched histogram off by " + std::to_string(off) + " with "
                                                  + std::to_string(s.histUncertain) + " uncertain"));
    }
    if (e.contains("log_hist")) {
        QCOMPARE(s.logHist.total(), s.finite - s.zeros);
        QVERIFY2(close(s.logHist.lo, num(e["log_hist"]["lo"]), 1e-9), where);
        // log10 in C++ and torch may differ in the last bit at a bin edge
        const uint64_t off = l1(s.logHist.counts, e["log_hist"]["counts"]);
        QVERIFY2(off <= 2 + 2 * s.logHistUncertain, q(what + " log histogram off by " + std::to_string(off)));
    }
}

// Every tensor of a fixture file; returns the keys whose histograms came from the sketch.
std::vector<std::string> checkFile(const std::string& name, const StatsOptions& options = {})
{
    const auto file = CheckpointFile::open(at(name));
    const FileStats fs = computeFileStats(*file, options);
    const json& exp = expected()[name];
    std::size_t checked = 0;
    std::vector<std::string> sketched;
    for (const auto& e : fs.tensors) {
        const std::string key = formatKeyPath(e.key);
        if (!exp.contains(key))
            continue;
        checkStats(name + ": " + key, e.stats, exp[key]);
        if (!e.stats.exactHistograms)
            sketched.push_back(key);
        ++checked;
    }
    if (checked != exp.size())
        throw std::runtime_error(name + ": checked " + std::to_string(checked) + " of " + std::to_string(exp.size()));
    return sketched;
}

const TensorInfo& tensorAt(const CheckpointFile& f, const std::string& key)
{
    for (const auto& e : f.tensorEntries()) {
        if (formatKeyPath(e.key) == key)
            return f.tensors()[e.tensor];
    }
    throw std::runtime_error("no tensor " + key);
}

const TensorDiff& diffOf(const CheckpointDiff& d, const std::string& key)
{
    for (const auto& t : d.tensors) {
        if (t.key == key)
            return t;
    }
    throw std::runtime_error("no diff entry " + key);
}

} // namespace

class TestTensorStats : public QObject {
    Q_OBJECT
private slots:
    void everyDtypeMatchesTorch()
    {
        // One read of the file: the histograms of the 32/64-bit tensors of several chunks
        // come from the value sketch, within their reported uncertainty of torch.histc's.
        // float64 beyond float32's exponent range gets the exact second look instead.
        const auto sketched = checkFile("stats_dtypes.pt");
        for (const char* key : {"big_float32", "big_float64", "big_int64", "big_complex64"})
            QVERIFY2(std::find(sketched.begin(), sketched.end(), key) != sketched.end(), key);
        QVERIFY(std::find(sketched.begin(), sketched.end(), "big_wide_float64") == sketched.end());
    }

    void exactHistogramsOnRequest()
    {
        StatsOptions exact;
        exact.exactHistograms = true;
        QVERIFY(checkFile("stats_dtypes.pt", exact).empty()); // every histogram torch.histc's, bin for bin
    }

    void sketchUncertaintyIsSmall()
    {
        // Sketch cells are 2^-11 of |x| wide: only elements that close to a bin edge are uncertain.
        const auto file = CheckpointFile::open(at("stats_dtypes.pt"));
        for (const char* key : {"big_float32", "big_float64", "big_int64", "big_complex64"}) {
            const TensorStats s = computeTensorStats(*file, tensorAt(*file, key));
            QVERIFY2(s.histUncertain > 0 && s.histUncertain * 100 < s.finite, key);
            QVERIFY2(s.logHistUncertain * 100 < s.finite, key);
            QCOMPARE(s.hist.total(), s.finite);
        }
    }

    void bigEndianMatchesTorch() { checkFile("stats_bigendian.pt"); }
    void float8MatchesDecodedValues() { checkFile("stats_float8.safetensors"); }

    void threadCountDoesNotChangeResults()
    {
        const auto file = CheckpointFile::open(at("stats_dtypes.pt"));
        for (const char* key : {"big_float32", "big_bfloat16"}) {
            StatsOptions one, many;
            one.threads = 1;
            many.threads = 5;
            const TensorStats a = computeTensorStats(*file, tensorAt(*file, key), one);
            const TensorStats b = computeTensorStats(*file, tensorAt(*file, key), many);
            QCOMPARE(a.hist.counts, b.hist.counts);
            QCOMPARE(a.logHist.counts, b.logHist.counts);
            QCOMPARE(a.min, b.min);
            QCOMPARE(a.max, b.max);
            QCOMPARE(a.nan, b.nan);
            QVERIFY(close(a.mean, b.mean, 1e-12));
            QVERIFY(close(a.std, b.std, 1e-12));
        }
    }

    void mergedShardsEqualWholeTensor()
    {
        const auto file = CheckpointFile::open(at("stats_shards.pt"));
        const StatsAccumulator whole = accumulateTensorStats(*file, tensorAt(*file, "whole"));
        std::optional<StatsAccumulator> merged;
        std::vector<TensorPart> parts;
        for (int i = 0; i < 4; ++i) {
            const TensorInfo& rows = tensorAt(*file, "rows/" + std::to_string(i));
            parts.push_back({file.get(), &rows});
            StatsAccumulator part = accumulateTensorStats(*file, rows);
            if (merged)
                merged->merge(part);
            else
                merged.emplace(std::move(part));
        }
        // Binned over the rows' own ranges, the histograms do not merge: none until re-binned.
        const TensorStats before = merged->finish();
        QVERIFY(!before.exactHistograms && !before.exactLogHistogram);
        QVERIFY(before.hist.counts.empty() && before.logHist.counts.empty());
        QCOMPARE(before.numel, whole.finish().numel);
        QVERIFY(!binMergedFromSketches(*merged)); // the parts kept no sketches
        rebinMergedStats(*merged, parts);
        const TensorStats a = whole.finish(), b = merged->finish();
        checkStats("merged rows", b, expected()["stats_shards.pt"]["whole"]);
        QCOMPARE(b.numel, a.numel);
        QCOMPARE(b.hist.counts, a.hist.counts); // exact: merged from exact value counts
        QCOMPARE(b.logHist.counts, a.logHist.counts);
        QCOMPARE(b.min, a.min);
        QCOMPARE(b.max, a.max);
        QVERIFY(close(b.mean, a.mean, 1e-13));
        QVERIFY(close(b.std, a.std, 1e-13));
        QVERIFY(close(b.l2, a.l2, 1e-13));
    }

    void mergedShardsFromSketches()
    {
        // Parts that keep their value sketches merge into histograms without a second read.
        const auto file = CheckpointFile::open(at("stats_shards.pt"));
        StatsOptions mergeable;
        mergeable.mergeableHistograms = true;
        std::optional<StatsAccumulator> merged;
        for (int i = 0; i < 4; ++i) {
            StatsAccumulator part = accumulateTensorStats(*file, tensorAt(*file, "rows/" + std::to_string(i)), mergeable);
            QVERIFY(part.finish().exactHistograms); // each part is still binned exactly over its own range
            if (merged)
                merged->merge(part);
            else
                merged.emplace(std::move(part));
        }
        QVERIFY(binMergedFromSketches(*merged));
        const TensorStats b = merged->finish();
        checkStats("rows merged from sketches", b, expected()["stats_shards.pt"]["whole"]);
        QVERIFY(b.histUncertain * 100 < b.finite);
        QVERIFY(b.logHistUncertain * 100 < b.finite);
    }

    void zeroPartitionsPerRankAndMerged()
    {
        const CheckpointStats cs = computeCheckpointStats(at("zero/global_step5"));
        const json& exp = expected()["zero"];
        const auto it = std::find_if(cs.sharded.begin(), cs.sharded.end(), [&](const ShardedTensorStats& s) {
            return s.key == exp["key"].get<std::string>();
        });
        QVERIFY2(it != cs.sharded.end(), q("layout " + cs.layout));
        QCOMPARE(it->kind, std::string("rank_partitions"));
        QCOMPARE(it->shards.size(), std::size_t(3));
        QCOMPARE(it->shape, std::vector<int64_t>{3000});
        for (std::size_t r = 0; r < 3; ++r) {
            QCOMPARE(it->shards[r].rank, int(r));
            QCOMPARE(it->shards[r].offsets, std::vector<int64_t>{int64_t(r * 1000)});
            checkStats("partition " + std::to_string(r), it->shards[r].stats, exp["parts"][r]);
        }
        checkStats("merged partitions", it->merged, exp["whole"]);
    }

    // A sink receives each file's figures as they are computed (what 'ckpt tensors DIR --stats
    // --json' streams) and nothing is kept in `files`; the figures, and the partitions merged from
    // the accumulators kept per file, are the same as without one.
    void sinkGetsTheSameFigures()
    {
        for (const char* dir : {"zero/global_step5", "ddp"}) {
            const CheckpointStats kept = computeCheckpointStats(at(dir));
            std::vector<FileStats> sunk;
            std::vector<std::string> paths;
            bool inOrder = true, closed = true;
            StatsStream stream;
            stream.beginFile = [&](const CheckpointFile& file, const FileStats& header) {
                closed = closed && header.tensors.empty();
                paths.push_back(file.path());
                sunk.push_back(header);
            };
            stream.entry = [&](std::size_t index, TensorStatsEntry&& entry) {
                inOrder = inOrder && index == sunk.back().tensors.size();
                sunk.back().tensors.push_back(std::move(entry));
            };
            stream.endFile = [&](const CheckpointFile& file) { closed = closed && file.path() == paths.back(); };
            const CheckpointStats streamed = computeCheckpointStats(at(dir), {}, stream);
            QVERIFY(streamed.files.empty());
            QVERIFY(inOrder); // every entry, in tensorEntries() order
            QVERIFY(closed);
            QCOMPARE(sunk.size(), kept.files.size());
            for (std::size_t f = 0; f < sunk.size(); ++f) {
                QCOMPARE(paths[f], kept.files[f].path);
                QCOMPARE(sunk[f].role, kept.files[f].role);
                QCOMPARE(sunk[f].rank, kept.files[f].rank);
                QCOMPARE(sunk[f].tensors.size(), kept.files[f].tensors.size());
                for (std::size_t t = 0; t < sunk[f].tensors.size(); ++t) {
                    const TensorStats& a = sunk[f].tensors[t].stats;
                    const TensorStats& b = kept.files[f].tensors[t].stats;
                    QCOMPARE(a.numel, b.numel);
                    QCOMPARE(a.hist.counts, b.hist.counts);
                    QVERIFY(a.l2 == b.l2 && (a.min == b.min || (std::isnan(a.min) && std::isnan(b.min))));
                }
            }
            QCOMPARE(streamed.sharded.size(), kept.sharded.size());
            for (std::size_t i = 0; i < kept.sharded.size(); ++i) {
                QCOMPARE(streamed.sharded[i].key, kept.sharded[i].key);
                QCOMPARE(streamed.sharded[i].merged.hist.counts, kept.sharded[i].merged.hist.counts);
                QCOMPARE(streamed.sharded[i].merged.l2, kept.sharded[i].merged.l2);
            }
            QCOMPARE(streamed.replicas.size(), kept.replicas.size());
        }
        QVERIFY(!computeCheckpointStats(at("zero/global_step5")).sharded.empty()); // the partitions were compared
    }

    void streamedEntriesInOrder()
    {
        // Five threads finish the big tensors' chunks out of order; the stream still hands the
        // entries over in tensorEntries() order, with the figures computeFileStats keeps.
        const auto file = CheckpointFile::open(at("stats_dtypes.pt"));
        StatsOptions options;
        options.threads = 5;
        const FileStats kept = computeFileStats(*file, options);
        std::vector<TensorStatsEntry> streamed;
        bool inOrder = true;
        streamFileStats(*file, options, [&](std::size_t index, TensorStatsEntry&& entry) {
            inOrder = inOrder && index == streamed.size();
            streamed.push_back(std::move(entry));
        });
        QVERIFY(inOrder);
        QCOMPARE(streamed.size(), kept.tensors.size());
        QVERIFY(streamed.size() > 20);
        for (std::size_t i = 0; i < streamed.size(); ++i) {
            QCOMPARE(streamed[i].key, kept.tensors[i].key);
            QCOMPARE(streamed[i].alias, kept.tensors[i].alias);
            QCOMPARE(streamed[i].stats.numel, kept.tensors[i].stats.numel);
            QCOMPARE(streamed[i].stats.problem, kept.tensors[i].stats.problem);
            QCOMPARE(streamed[i].stats.hist.counts, kept.tensors[i].stats.hist.counts);
            QCOMPARE(streamed[i].stats.logHist.counts, kept.tensors[i].stats.logHist.counts);
        }
    }

    void ddpReplicasIdenticalOrByHowMuch()
    {
        const CheckpointStats cs = computeCheckpointStats(at("ddp"));
        const json& exp = expected()["ddp"];
        QCOMPARE(cs.replicas.size(), exp["tensors"].get<std::size_t>());
        for (const auto& r : cs.replicas) {
            QCOMPARE(r.ranks, (std::vector<int>{0, 1, 2}));
            const bool differs = r.key == exp["differs"].get<std::string>();
            QCOMPARE(r.identical, !differs);
            QCOMPARE(r.vsFirst[0].status, DiffStatus::Equal);
            QCOMPARE(r.vsFirst[1].status, differs ? DiffStatus::Changed : DiffStatus::Equal);
            if (differs) {
                QCOMPARE(r.vsFirst[1].nDiff, uint64_t(1));
                QCOMPARE(r.vsFirst[1].firstDiff, int64_t(1 * 32 + 2));
                QVERIFY(close(r.vsFirst[1].maxAbsDiff, 0.25, 1e-6));
            }
        }
    }

    void dcpChunkMapAndMergedStats()
    {
        const std::string corpus = corpusDir();
        const std::string dcp = corpus + "/Lightning-AI__pytorch-lightning@0f916ea4/dcp-2rank";
        if (corpus.empty() || !std::filesystem::exists(dcp))
            QSKIP("the shared corpus' DCP folder is not available");
        const CheckpointStats cs = computeCheckpointStats(dcp);
        QCOMPARE(cs.layout, std::string("dcp"));
        QVERIFY(!cs.sharded.empty());
        for (const auto& s : cs.sharded) {
            int64_t numel = 1;
            for (int64_t d : s.shape)
                numel *= d;
            uint64_t sum = 0;
            for (const auto& shard : s.shards) {
                QVERIFY2(shard.stats.ok(), q(s.key + ": " + shard.stats.problem));
                QVERIFY(shard.rank >= 0);
                QCOMPARE(shard.offsets.size(), s.shape.size());
                sum += shard.stats.numel;
            }
            QCOMPARE(sum, uint64_t(numel));
            QCOMPARE(s.merged.numel, uint64_t(numel));
            QCOMPARE(s.merged.hist.total(), s.merged.finite);
        }
    }

    void diffWithItselfIsAllEqual()
    {
        const CheckpointDiff d = diffCheckpoints(at("stats_dtypes.pt"), at("stats_dtypes.pt"));
        QVERIFY(!d.tensors.empty());
        for (const auto& t : d.tensors) {
            QVERIFY2(t.status == DiffStatus::Equal, q(t.key + ": " + diffStatusName(t.status) + " " + t.problem));
            QCOMPARE(t.nDiff, uint64_t(0));
            QCOMPARE(t.maxAbsDiff, 0.0);
        }
        for (const auto& s : d.states)
            QCOMPARE(s.status, std::string("same"));
    }

    void diffFindsOneFlippedElement()
    {
        const CheckpointDiff d = diffCheckpoints(at("diff_a.pt"), at("diff_b.pt"));
        const json& exp = expected()["diff"];
        QCOMPARE(d.prefixA, std::string());
        QCOMPARE(d.prefixB, std::string("module."));
        const TensorDiff& changed = diffOf(d, exp["changed_key"].get<std::string>());
        QCOMPARE(changed.status, DiffStatus::Changed);
        QCOMPARE(changed.nDiff, exp["n_diff"].get<uint64_t>());
        QCOMPARE(changed.firstDiff, exp["first_diff"].get<int64_t>());
        QVERIFY(close(changed.maxAbsDiff, exp["max_abs_diff"].get<double>(), 1e-12));
        QVERIFY(close(changed.relL2, exp["rel_l2"].get<double>(), 1e-9));
        QVERIFY(close(changed.cosine, exp["cosine"].get<double>(), 1e-12));
        std::size_t equal = 0;
        for (const auto& t : d.tensors) {
            if (t.component != "other")
                equal += t.status == DiffStatus::Equal;
        }
        QCOMPARE(equal + 1, exp["tensors"].get<std::size_t>()); // every model and optimizer tensor but one
        QCOMPARE(diffOf(d, "other/extra/only_a").status, DiffStatus::OnlyA);
        QCOMPARE(diffOf(d, "other/extra/only_b").status, DiffStatus::OnlyB);
        QCOMPARE(diffOf(d, "other/extra/reshaped").status, DiffStatus::ShapeChanged);
        QCOMPARE(diffOf(d, "other/extra/retyped").status, DiffStatus::DtypeChanged);
        QCOMPARE(diffOf(d, "other/extra/nan_same").status, DiffStatus::Equal); // same NaN bits
        bool stepChanged = false;
        for (const auto& s : d.states)
            stepChanged = stepChanged || (s.component == "progress" && s.name == "global_step" && s.a == "3" && s.b == "4" && s.status == "changed");
        QVERIFY(stepChanged);
    }

    void wrapperPrefixes()
    {
        QCOMPARE(wrapperPrefix({"module._orig_mod.a.weight", "module._orig_mod.b"}), std::string("module._orig_mod."));
        QCOMPARE(wrapperPrefix({"model.a", "b"}), std::string());
        QCOMPARE(wrapperPrefix({"model.encoder.w", "model.decoder.w"}), std::string("model."));
    }

    void cancelStopsTheScan()
    {
        const auto file = CheckpointFile::open(at("stats_dtypes.pt"));
        StatsOptions options;
        int calls = 0;
        options.progress = [&](const StatsProgress&) { return ++calls < 2; };
        QVERIFY_THROWS_EXCEPTION(CancelledError, computeTensorStats(*file, tensorAt(*file, "big_float32"), options));
        const CheckpointStats cs = computeCheckpointStats(at("stats_dtypes.pt"), options);
        QVERIFY(cs.cancelled);
    }

    void progressReachesTheTotal()
    {
        const auto file = CheckpointFile::open(at("stats_dtypes.pt"));
        StatsOptions options;
        StatsProgress last;
        options.progress = [&](const StatsProgress& p) { last = p; return true; };
        computeFileStats(*file, options);
        QVERIFY(last.bytesTotal > 20'000'000);
        QCOMPARE(last.bytesDone, last.bytesTotal);
        QCOMPARE(last.tensorsDone, last.tensorsTotal);
    }

    void cliTensorsStatsJson()
    {
        const CkptRun run = runCkpt({"tensors", QString::fromStdString(at("stats_dtypes.pt")), "--stats", "--json"});
        QCOMPARE(run.code, 0);
        const json doc = json::parse(run.out.toStdString());
        const json& exp = expected()["stats_dtypes.pt"];
        std::size_t seen = 0;
        for (const auto& t : doc["tensors"]) {
            const std::string key = t["key"][0].get<std::string>();
            const json& s = t["stats"];
            if (key == "all_nan") {
                QVERIFY(s["min"] == json("nan")); // non-finite numbers as strings
                QVERIFY(s["nan"] == json(4));
                QVERIFY(s["hist"].is_null());
                continue;
            }
            if (!exp.contains(key) || !exp[key].contains("min"))
                continue;
            for (const char* field : {"min", "max", "mean", "std", "l2", "absmax", "nan", "posinf", "neginf", "zeros", "hist"})
                QVERIFY2(s.contains(field), q(key + " lacks " + field));
            QVERIFY(s["min"].is_number() && s["hist"]["lo"].is_number() && s["hist"]["hi"].is_number());
            QCOMPARE(s["hist"]["counts"].size(), std::size_t(kHistogramBins));
            QCOMPARE(s["nan"].get<uint64_t>(), exp[key]["nan"].get<uint64_t>());
            QVERIFY(close(s["mean"].get<double>(), exp[key]["mean"].get<double>(), 1e-9));
            ++seen;
        }
        QVERIFY(seen > 20);
        const CkptRun text = runCkpt({"tensors", QString::fromStdString(at("stats_dtypes.pt")), "--stats"});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.contains("big_bfloat16") && text.out.contains("ABSMAX"));
    }

    // Adam's per-parameter `step` (a tensor since torch 1.12) aligns by parameter name like the
    // moments, so two checkpoints 50 steps apart show optimizer/<param>/step changed by 50.
    void diffAlignsOptimizerStepByName()
    {
        const std::string run = std::string(CKPT_SOURCE_DIR) + "/sample_runs/tiny-mlp/";
        const CheckpointDiff d = diffCheckpoints(run + "checkpoint-0000100", run + "checkpoint-0000150");
        const TensorDiff& step = diffOf(d, "optimizer/0.weight/step");
        QCOMPARE(step.component, std::string("optimizer"));
        QCOMPARE(step.status, DiffStatus::Changed);
        QCOMPARE(step.maxAbsDiff, 50.0);
        for (const auto& t : d.tensors)
            QVERIFY2(t.component != "other", q(t.key + " is not aligned to a model or optimizer part"));
    }

    void cliDiffJson()
    {
        const CkptRun run = runCkpt({"diff", QString::fromStdString(at("diff_a.pt")), QString::fromStdString(at("diff_b.pt")), "--json"});
        QCOMPARE(run.code, 0);
        const json doc = json::parse(run.out.toStdString());
        QVERIFY(doc["prefix_stripped"]["a"] == json(""));
        QVERIFY(doc["prefix_stripped"]["b"] == json("module."));
        QVERIFY(doc["states"].is_object() && doc["states"].contains("rng") && doc["states"].contains("scheduler"));
        bool found = false;
        for (const auto& t : doc["tensors"]) {
            for (const char* field : {"key", "status", "max_abs_diff", "rel_l2", "cosine", "n_diff"})
                QVERIFY(t.contains(field));
            if (t["key"] == "model/0.weight") {
                found = true;
                QVERIFY(t["status"] == json("changed"));
                QVERIFY(t["n_diff"] == json(1));
                QVERIFY(close(t["max_abs_diff"].get<double>(), expected()["diff"]["max_abs_diff"].get<double>(), 1e-12));
            }
        }
        QVERIFY(found);
        const CkptRun text = runCkpt({"diff", QString::fromStdString(at("diff_a.pt")), QString::fromStdString(at("diff_b.pt"))});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.contains("model/0.weight") && text.out.contains("stripped 'module.'"));
    }
};

QTEST_GUILESS_MAIN(TestTensorStats)
#include "tst_tensor_stats.moc"
