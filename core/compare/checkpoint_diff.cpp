// SPDX-License-Identifier: MIT
#include "ckpt/compare/checkpoint_diff.h"

#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/formats/tensor_view_reader.h"
#include "ckpt/io/errors.h"
#include "ckpt/stats/checkpoint_stats.h"

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace ckpt {
namespace {

namespace fs = std::filesystem;

// Where one side's tensor lives: a key in a file, or a DCP entry (its .metadata + key path).
struct TensorRef {
    std::string component;
    Provenance from;
    std::string dtype;
    std::vector<int64_t> shape;
    std::vector<Provenance> pieces; // tensor-parallel shards (Megatron), compared piece by piece
};

using Aligned = std::vector<std::pair<std::string, TensorRef>>; // aligned key -> ref, in order

std::string stripPrefix(const std::string& name, const std::string& prefix)
{
    return !prefix.empty() && name.starts_with(prefix) ? name.substr(prefix.size()) : name;
}

std::string where(const Provenance& p)
{
    return p.file + ": " + formatKeyPath(p.key);
}

Aligned alignTensors(const TrainingState& s, const std::string& prefix, TensorSource& source, std::vector<std::string>& warnings)
{
    Aligned out;
    std::set<std::pair<std::string, std::string>> covered; // file, printed key path
    if (s.model) {
        for (const auto& p : s.model->parameters) {
            out.push_back({"model/" + stripPrefix(p.name, prefix), {"model", p.from, p.dtype, p.shape, p.pieces}});
            for (const Provenance& piece : p.pieces)
                covered.insert({piece.file, formatKeyPath(piece.key)});
            covered.insert({p.from.file, formatKeyPath(p.from.key)});
        }
    }
    // A parameter's state entry (file, key path of its dict) -> its aligned name, so its other
    // tensors (Adam's `step` since torch 1.12, custom per-parameter state) align by name too.
    std::map<std::pair<std::string, std::string>, std::string> paramStateDicts;
    if (s.optimizer) {
        for (const auto& ps : s.optimizer->paramState) {
            const std::string param = ps.name.empty() ? "#" + ps.index : stripPrefix(ps.name, prefix);
            for (const auto& m : ps.moments) {
                out.push_back({"optimizer/" + param + "/" + m.name, {"optimizer", m.from, m.dtype, m.shape}});
                covered.insert({m.from.file, formatKeyPath(m.from.key)});
                if (!m.from.key.empty()) {
                    const KeyPath dict(m.from.key.begin(), m.from.key.end() - 1);
                    paramStateDicts.emplace(std::pair{m.from.file, formatKeyPath(dict)}, param);
                }
            }
            // The optimizer's fp32 copy of the parameter (ZeRO, Megatron's mixed-precision optimizers).
            if (ps.master) {
                const std::optional<ElementRange>& range = ps.master->elements;
                std::vector<int64_t> shape = range ? (range->shape.empty() ? std::vector<int64_t>{range->numel} : range->shape)
                                                   : ps.shardShape.value_or(std::vector<int64_t>{});
                out.push_back({"optimizer/" + param + "/master", {"optimizer", *ps.master, "float32", shape}});
                covered.insert({ps.master->file, formatKeyPath(ps.master->key)});
            }
        }
    }
    if (s.rng) {
        for (const auto& g : s.rng->generators)
            covered.insert({g.file, formatKeyPath(g.state.key)});
    }
    if (!dcpFolder(s.layout).empty())
        return out;
    // Everything else, by file name and key path: EMA weights, extra buffers, ZeRO partitions.
    for (const auto& f : s.layout.files) {
        static const std::set<std::string> roles = {"model", "adapter", "optimizer", "state", "scaler", "scheduler", "data"};
        if (!roles.contains(f.role) || !opensAsCheckpointFile(f))
            continue;
        try {
            const CheckpointFile& file = source.file(f.path);
            // A single file's tensors by key path alone, so two files of any names align.
            const std::string rel = s.layout.files.size() == 1 ? std::string() : fs::path(f.path).filename().string() + "/";
            for (const auto& e : file.tensorEntries()) {
                if (e.alias || covered.contains({f.path, formatKeyPath(e.key)}))
                    continue;
                const TensorInfo& t = file.tensors()[e.tensor];
                if (t.dtype == DType::UInt8 && (t.numel() == 5056 || t.numel() == 5048 || t.numel() == 816))
                    continue; // generator states: compared as RNG
                if (!e.key.empty() && std::holds_alternative<std::string>(e.key.back())) {
                    const KeyPath dict(e.key.begin(), e.key.end() - 1);
                    const auto param = paramStateDicts.find({f.path, formatKeyPath(dict)});
                    if (param != paramStateDicts.end()) {
                        out.push_back({"optimizer/" + param->second + "/" + std::get<std::string>(e.key.back()),
                                       {"optimizer", {f.path, e.key}, t.dtypeName, t.shape}});
                        continue;
                    }
                }
                out.push_back({"other/" + rel + formatKeyPath(e.key), {"other", {f.path, e.key}, t.dtypeName, t.shape}});
            }
        } catch (const std::exception& e) {
            warnings.push_back(e.what());
        }
    }
    return out;
}

// One element-wise comparison: a whole tensor, or one piece pair of a sharded one (DCP chunks on
// both sides, or a chunk against the matching region of a whole tensor).
struct PairJob {
    std::size_t diff;
    std::optional<TensorViewReader> a, b;
};

void planPair(TensorDiff& d, std::size_t index, const Provenance& from, const Provenance& to, TensorSource& source,
              std::vector<std::unique_ptr<PairJob>>& jobs)
{
    const ResolvedTensor ra = source.resolve(from), rb = source.resolve(to);
    for (const auto& [pa, pb] : pairPieces(ra, rb)) {
        if (pa.tensor.dtype != pb.tensor.dtype) {
            d.status = DiffStatus::DtypeChanged;
            return;
        }
        auto job = std::make_unique<PairJob>();
        job->diff = index;
        job->a.emplace(*pa.file, pa.tensor);
        job->b.emplace(*pb.file, pb.tensor);
        if (job->a->numel() != job->b->numel())
            throw FormatError("the two sides have different element counts");
        jobs.push_back(std::move(job));
    }
}

void compareTensorsOf(CheckpointDiff& out, const Aligned& a, const Aligned& b, TensorSource& source, const StatsOptions& options)
{
    std::map<std::string, const TensorRef*> inB;
    for (const auto& [key, ref] : b)
        inB.emplace(key, &ref);
    std::set<std::string> seenA;
    std::vector<std::unique_ptr<PairJob>> jobs;
    for (const auto& [key, ra] : a) {
        if (!seenA.insert(key).second)
            continue;
        TensorDiff d;
        d.key = key;
        d.component = ra.component;
        d.fileA = ra.from.file;
        d.keyA = ra.from.key;
        d.dtypeA = ra.dtype;
        d.shapeA = ra.shape;
        const auto it = inB.find(key);
        if (it == inB.end()) {
            d.status = DiffStatus::OnlyA;
            out.tensors.push_back(std::move(d));
            continue;
        }
        const TensorRef& rb = *it->second;
        d.fileB = rb.from.file;
        d.keyB = rb.from.key;
        d.dtypeB = rb.dtype;
        d.shapeB = rb.shape;
        if (ra.shape != rb.shape)
            d.status = DiffStatus::ShapeChanged;
        else if (ra.dtype != rb.dtype)
            d.status = DiffStatus::DtypeChanged;
        else {
            const std::size_t before = jobs.size();
            try {
                // A tensor-parallel parameter on both sides with the same ranks: every shard against its
                // counterpart, merged into one figure; otherwise the whole tensors as stored.
                if (!ra.pieces.empty() && ra.pieces.size() == rb.pieces.size()) {
                    for (std::size_t k = 0; k < ra.pieces.size() && d.status != DiffStatus::DtypeChanged; ++k)
                        planPair(d, out.tensors.size(), ra.pieces[k], rb.pieces[k], source, jobs);
                } else if (!ra.pieces.empty() || !rb.pieces.empty()) {
                    throw FormatError("the two sides are split over different tensor-parallel ranks ("
                                      + std::to_string(ra.pieces.size()) + " vs " + std::to_string(rb.pieces.size()) + ")");
                } else {
                    planPair(d, out.tensors.size(), ra.from, rb.from, source, jobs);
                }
            } catch (const std::exception& e) {
                jobs.resize(before);
                d.status = DiffStatus::Unreadable;
                d.problem = e.what();
            }
        }
        out.tensors.push_back(std::move(d));
    }
    for (const auto& [key, rb] : b) {
        if (seenA.contains(key))
            continue;
        seenA.insert(key);
        TensorDiff d;
        d.key = key;
        d.component = rb.component;
        d.status = DiffStatus::OnlyB;
        d.fileB = rb.from.file;
        d.keyB = rb.from.key;
        d.dtypeB = rb.dtype;
        d.shapeB = rb.shape;
        out.tensors.push_back(std::move(d));
    }

    std::vector<ViewPairJob> pairs;
    for (const auto& j : jobs)
        pairs.push_back({j->diff, &*j->a, &*j->b});
    if (!compareViewPairs(pairs, out.tensors, options))
        out.cancelled = true;
}

// ---- non-tensor parts

std::string num(double v)
{
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
}

template<typename T>
std::string opt(const std::optional<T>& v)
{
    if (!v)
        return "";
    if constexpr (std::is_floating_point_v<T>)
        return num(*v);
    else
        return std::to_string(*v);
}

std::string list(const std::vector<double>& v)
{
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + num(v[i]);
    return s + "]";
}

struct FieldSide {
    std::string value, where;
};
using FieldMap = std::vector<std::pair<std::string, FieldSide>>;

void addFields(CheckpointDiff& out, const std::string& component, const FieldMap& a, const FieldMap& b)
{
    std::map<std::string, const FieldSide*> inB;
    for (const auto& [k, v] : b)
        inB.emplace(k, &v);
    std::set<std::string> seen;
    for (const auto& [k, v] : a) {
        if (!seen.insert(k).second)
            continue;
        StateDiff d{component, k, v.value, "", "", v.where, ""};
        if (const auto it = inB.find(k); it != inB.end()) {
            d.b = it->second->value;
            d.whereB = it->second->where;
            d.status = d.a == d.b ? "same" : "changed";
        } else {
            d.status = "only_a";
        }
        out.states.push_back(std::move(d));
    }
    for (const auto& [k, v] : b) {
        if (seen.insert(k).second)
            out.states.push_back({component, k, "", v.value, "only_b", "", v.where});
    }
}

FieldMap fieldsOf(const std::vector<StateField>& list)
{
    FieldMap out;
    for (const auto& f : list)
        out.push_back({f.name, {f.value, where(f.from)}});
    return out;
}

FieldMap optimizerFields(const TrainingState& s, const std::string& prefix)
{
    FieldMap out;
    if (!s.optimizer)
        return out;
    const auto& o = *s.optimizer;
    const std::string w = where(o.from);
    out.push_back({"type", {o.type, w}});
    out.push_back({"param_groups", {std::to_string(o.groups.size()), w}});
    for (std::size_t g = 0; g < o.groups.size(); ++g) {
        for (const auto& h : o.groups[g].hyperparameters)
            out.push_back({"param_groups[" + std::to_string(g) + "]." + h.name, {h.value, where(h.from)}});
        out.push_back({"param_groups[" + std::to_string(g) + "].params", {std::to_string(o.groups[g].params.size()), w}});
    }
    for (const auto& ps : o.paramState) {
        if (ps.step)
            out.push_back({"step[" + (ps.name.empty() ? "#" + ps.index : stripPrefix(ps.name, prefix)) + "]", {num(*ps.step), w}});
    }
    return out;
}

FieldMap schedulerFields(const TrainingState& s)
{
    FieldMap out;
    if (!s.scheduler)
        return out;
    const LrSchedule& l = s.scheduler->schedule;
    const std::string w = where(s.scheduler->from);
    out.push_back({"kind", {l.kind, w}});
    out.push_back({"last_epoch", {std::to_string(l.lastEpoch), w}});
    if (l.stepCount >= 0)
        out.push_back({"step_count", {std::to_string(l.stepCount), w}});
    out.push_back({"base_lrs", {list(l.baseLrs), w}});
    out.push_back({"last_lr", {list(l.lastLr), w}});
    for (const auto& [k, v] : l.fields)
        out.push_back({k, {v, w}});
    return out;
}

FieldMap scalerFields(const TrainingState& s)
{
    FieldMap out;
    if (!s.scaler)
        return out;
    const ScalerPart& c = *s.scaler;
    const std::string w = where(c.from);
    out.push_back({"enabled", {c.enabled ? "true" : "false", w}});
    out.push_back({"scale", {opt(c.scale), w}});
    out.push_back({"growth_factor", {opt(c.growthFactor), w}});
    out.push_back({"backoff_factor", {opt(c.backoffFactor), w}});
    out.push_back({"growth_interval", {opt(c.growthInterval), w}});
    out.push_back({"growth_tracker", {opt(c.growthTracker), w}});
    return out;
}

std::string generatorName(const RngPart::Generator& g)
{
    std::string n = rngKindName(g.state.kind);
    n += "@rank" + (g.rank < 0 ? std::string("?") : std::to_string(g.rank));
    n += ":" + formatKeyPath(g.state.key);
    return n;
}

std::string generatorValue(const RngState& s)
{
    std::string v = s.fingerprint;
    if (s.seed)
        v += " seed=" + std::to_string(*s.seed);
    if (s.offset)
        v += " offset=" + std::to_string(*s.offset);
    if (s.position)
        v += " pos=" + std::to_string(*s.position);
    return v;
}

// same: identical state; advanced: the same seed further along (torch generators keep their
// seed; CUDA's philox offset only grows); different: anything else, which for Python and
// NumPy MT19937 states (they keep no seed) includes a state that merely advanced.
std::string rngStatus(const RngState& a, const RngState& b)
{
    if (a.fingerprint == b.fingerprint && !a.fingerprint.empty())
        return "same";
    if (a.kind != b.kind || !a.seed || !b.seed || *a.seed != *b.seed)
        return "different";
    if (a.kind == RngKind::TorchCuda)
        return a.offset && b.offset && *b.offset > *a.offset ? "advanced" : "different";
    return a.kind == RngKind::TorchCpu ? "advanced" : "different";
}

void addRng(CheckpointDiff& out, const TrainingState& a, const TrainingState& b)
{
    std::vector<const RngPart::Generator*> ga, gb;
    if (a.rng)
        for (const auto& g : a.rng->generators)
            ga.push_back(&g);
    if (b.rng)
        for (const auto& g : b.rng->generators)
            gb.push_back(&g);
    std::set<std::string> seen;
    for (const auto* g : ga) {
        const std::string name = generatorName(*g);
        if (!seen.insert(name).second)
            continue;
        StateDiff d{"rng", name, generatorValue(g->state), "", "only_a", g->file + ": " + formatKeyPath(g->state.key), ""};
        for (const auto* h : gb) {
            if (generatorName(*h) == name) {
                d.b = generatorValue(h->state);
                d.whereB = h->file + ": " + formatKeyPath(h->state.key);
                d.status = rngStatus(g->state, h->state);
                break;
            }
        }
        out.states.push_back(std::move(d));
    }
    for (const auto* h : gb) {
        const std::string name = generatorName(*h);
        if (seen.insert(name).second)
            out.states.push_back({"rng", name, "", generatorValue(h->state), "only_b", "", h->file + ": " + formatKeyPath(h->state.key)});
    }
}

FieldMap progressFields(const TrainingState& s)
{
    FieldMap out = fieldsOf(s.progress);
    out.push_back({"global_step", {s.globalStep ? std::to_string(*s.globalStep) : "", s.path}});
    return out;
}

std::vector<std::string> modelNames(const TrainingState& s)
{
    std::vector<std::string> names;
    if (s.model)
        for (const auto& p : s.model->parameters)
            names.push_back(p.name);
    return names;
}

} // namespace

std::string wrapperPrefix(const std::vector<std::string>& names)
{
    if (names.empty())
        return "";
    std::string prefix;
    for (bool grew = true; grew;) {
        grew = false;
        for (const char* wrapper : {"module.", "_orig_mod.", "model."}) {
            const std::string candidate = prefix + wrapper;
            if (std::all_of(names.begin(), names.end(), [&](const std::string& n) { return n.size() > candidate.size() && n.starts_with(candidate); })) {
                prefix = candidate;
                grew = true;
            }
        }
    }
    return prefix;
}

CheckpointDiff diffCheckpoints(const TrainingState& a, const TrainingState& b, const StatsOptions& options)
{
    CheckpointDiff out;
    out.pathA = a.path;
    out.pathB = b.path;
    out.prefixA = wrapperPrefix(modelNames(a));
    out.prefixB = wrapperPrefix(modelNames(b));
    for (const auto& w : a.warnings)
        out.warnings.push_back("A: " + w);
    for (const auto& w : b.warnings)
        out.warnings.push_back("B: " + w);

    TensorSource source;
    std::vector<std::string> warnA, warnB;
    const Aligned ta = alignTensors(a, out.prefixA, source, warnA);
    const Aligned tb = alignTensors(b, out.prefixB, source, warnB);
    for (const auto& w : warnA)
        out.warnings.push_back("A: " + w);
    for (const auto& w : warnB)
        out.warnings.push_back("B: " + w);
    compareTensorsOf(out, ta, tb, source, options);
    for (const auto& t : out.tensors) {
        switch (t.status) {
        case DiffStatus::Equal: ++out.counts.equal; break;
        case DiffStatus::Changed: ++out.counts.changed; break;
        case DiffStatus::OnlyA: ++out.counts.onlyA; break;
        case DiffStatus::OnlyB: ++out.counts.onlyB; break;
        case DiffStatus::ShapeChanged: ++out.counts.shapeChanged; break;
        case DiffStatus::DtypeChanged: ++out.counts.dtypeChanged; break;
        case DiffStatus::Unreadable: ++out.counts.unreadable; break;
        }
    }

    addFields(out, "optimizer", optimizerFields(a, out.prefixA), optimizerFields(b, out.prefixB));
    addFields(out, "scheduler", schedulerFields(a), schedulerFields(b));
    addFields(out, "scaler", scalerFields(a), scalerFields(b));
    addRng(out, a, b);
    addFields(out, "data", fieldsOf(a.data), fieldsOf(b.data));
    addFields(out, "progress", progressFields(a), progressFields(b));
    addFields(out, "environment", fieldsOf(a.environment), fieldsOf(b.environment));
    return out;
}

CheckpointDiff diffCheckpoints(const std::string& a, const std::string& b, const StatsOptions& options)
{
    return diffCheckpoints(readTrainingState(a), readTrainingState(b), options);
}

} // namespace ckpt
