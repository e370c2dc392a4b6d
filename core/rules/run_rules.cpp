// SPDX-License-Identifier: MIT
// A whole run (recovery guide §8.1, §8.3, §9.3): checkpoints whose recorded steps increase with
// their names, saved at a regular interval, `latest` designating a complete checkpoint, the best
// checkpoint present, and the learning rate logged after each checkpoint following the schedule
// that checkpoint saved (the step where it departs is where the run broke).
#include "ckpt/formats/python_json.h"
#include "ckpt/io/read_only_file.h"
#include "ckpt/rules/rule_catalogue.h"
#include "ckpt/rules/tensor_content.h"
#include "rule_families.h"
#include "rule_support.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

namespace ckpt::rules {
namespace {

bool close(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max({std::fabs(a), std::fabs(b), 1e-12}); }

// Whether two checkpoints' first model parameter (by name, stored whole) holds other bits; nullopt when
// it cannot be told (no content source, no common parameter, unreadable).
std::optional<bool> weightsDiffer(const CheckpointFacts& a, const CheckpointFacts& b)
{
    if (!a.content || !a.state.model || !b.state.model)
        return std::nullopt;
    for (const auto& pb : b.state.model->parameters) {
        if (!pb.pieces.empty())
            continue;
        for (const auto& pa : a.state.model->parameters) {
            if (pa.name == pb.name && pa.pieces.empty()) {
                const auto same = a.content->sameBits(pa.from, pb.from);
                return same ? std::optional<bool>(!*same) : std::nullopt;
            }
        }
    }
    return std::nullopt;
}

void stepsOrder(const RunHistory& run, const std::vector<const CheckpointFacts*>& cs, Findings& out)
{
    std::map<int64_t, const CheckpointFacts*> seen;
    const CheckpointFacts* previous = nullptr;
    for (const CheckpointFacts* c : cs) {
        if (!c->state.globalStep)
            continue;
        const int64_t step = *c->state.globalStep;
        std::string problem;
        // A step saved twice with the same weights is a second save of one state (Lightning 1.9 saves again
        // after a resume at an epoch's end: its ModelCheckpoint does not save the step it last saved at,
        // Lightning@a020506a81a6 src/pytorch_lightning/callbacks/model_checkpoint.py _last_global_step_saved).
        std::optional<bool> differ;
        bool unread = false;
        if (const auto it = seen.find(step); it != seen.end()) {
            differ = weightsDiffer(*it->second, *c);
            unread = !differ.has_value();
            if (differ == false) {
                previous = c;
                continue;
            }
            problem = "two checkpoints record global step " + std::to_string(step)
                    + (differ ? " with different weights" : "; whether they hold the same state could not be read");
        } else if (previous && step < *previous->state.globalStep) {
            problem = c->state.path + " records step " + std::to_string(step) + ", earlier than " + previous->state.path
                    + " before it (" + std::to_string(*previous->state.globalStep) + ")";
        }
        seen.emplace(step, c);
        if (!problem.empty()) {
            Finding f = makeFinding("run.steps-order", problem,
                hintWithNext("A resume restarted the step counter, or a checkpoint was overwritten/renamed; `latest` and "
                             "rollback (recovery guide §8.3 on retention and rollback) pick the wrong state when steps do not increase.", Component::Progress));
            if (unread) {
                f.severity = Severity::Warning;
                f.assumes = "two saves at one global step hold different states (their weights could not be compared)";
            }
            f.evidence.push_back(globalStepEvidence(c->state));
            if (previous)
                f.evidence.push_back(globalStepEvidence(previous->state));
            f.checkpoints = {previous ? previous->state.path : c->state.path, c->state.path};
            out.push_back(std::move(f));
        }
        previous = c;
    }
    if (previous)
        return;
    // No checkpoint records a global step (accelerate saves none): where the run orders its checkpoints
    // by save index (checkpoint_<i>), the optimizer's own step, which only moves forward in one run,
    // must not go back from one save to the next. An equal step is a second save without an update
    // between them, legitimate when the weights are the same; other weights at the same step come from
    // another branch (a warning: only the optimizer is assumed to change the weights).
    std::map<std::string, int64_t> saveIndex;
    for (const auto& rc : run.checkpoints) {
        if (rc.saveIndex)
            saveIndex[rc.path] = *rc.saveIndex;
    }
    const CheckpointFacts* before = nullptr;
    std::optional<OptimizerStep> beforeStep;
    for (const CheckpointFacts* c : cs) {
        const auto step = optimizerStep(c->state);
        if (!step || !saveIndex.contains(c->state.path))
            continue;
        if (before && step->step == beforeStep->step && weightsDiffer(*before, *c).value_or(false)) {
            Finding f = makeFinding("run.steps-order",
                c->state.path + " (save " + std::to_string(saveIndex[c->state.path]) + ") and " + before->state.path
                    + " saved before it hold an optimizer at the same step " + std::to_string(step->step)
                    + " but different weights: the later save continued another branch of the run",
                hintWithNext("The checkpoints record no global step, so the optimizer's step orders them: a resume from an "
                             "older checkpoint than the latest trained to the same step again, and its saves sit beside the "
                             "abandoned branch's; `latest` and rollback may pick either (recovery guide §8.3 on retention and rollback).",
                             Component::Progress));
            f.severity = Severity::Warning;
            f.assumes = "only optimizer updates change the weights (no EMA swap, pruning or hand edit between two saves)";
            f.evidence.push_back(evidence("optimizer step in A", std::to_string(beforeStep->step), beforeStep->from));
            f.evidence.push_back(evidence("optimizer step in B", std::to_string(step->step), step->from));
            f.checkpoints = {before->state.path, c->state.path};
            out.push_back(std::move(f));
        }
        if (before && step->step < beforeStep->step) {
            Finding f = makeFinding("run.steps-order",
                c->state.path + " (save " + std::to_string(saveIndex[c->state.path]) + ") holds an optimizer at step "
                    + std::to_string(step->step) + ", behind the " + std::to_string(beforeStep->step) + " of " + before->state.path
                    + " saved before it: the run went back to an older state",
                hintWithNext("The checkpoints record no global step, so the optimizer's step orders them: a resume from an "
                             "older checkpoint than the latest (or a fresh optimizer) continued the run and its saves interleave "
                             "with the abandoned branch's; `latest` and rollback pick the wrong state (recovery guide §8.3 on retention and rollback).",
                             Component::Progress));
            f.evidence.push_back(evidence("optimizer step in A", std::to_string(beforeStep->step), beforeStep->from));
            f.evidence.push_back(evidence("optimizer step in B", std::to_string(step->step), step->from));
            f.checkpoints = {before->state.path, c->state.path};
            out.push_back(std::move(f));
        }
        before = c;
        beforeStep = step;
    }
}

void saveInterval(const std::vector<const CheckpointFacts*>& cs, Findings& out)
{
    std::vector<int64_t> steps;
    for (const CheckpointFacts* c : cs) {
        if (c->state.globalStep)
            steps.push_back(*c->state.globalStep);
    }
    if (steps.size() < 3)
        return;
    std::set<int64_t> intervals;
    for (std::size_t i = 1; i + 1 < steps.size(); ++i) // the last save may be the end of training
        intervals.insert(steps[i] - steps[i - 1]);
    if (intervals.size() <= 1 || steps.size() < 4)
        return;
    std::string list;
    for (std::size_t i = 1; i < steps.size(); ++i)
        list += (i > 1 ? ", " : "") + std::to_string(steps[i] - steps[i - 1]);
    Finding f = makeFinding("run.save-interval", "the steps between saves vary: " + list,
        "Irregular saves point at restarts (a save on preemption, recovery guide §8.2 on preemption and signals) or at missing checkpoints; look for a resume "
        "near the irregular interval (recovery guide §8.1 on save frequency).");
    for (const CheckpointFacts* c : cs)
        f.evidence.push_back(globalStepEvidence(c->state));
    out.push_back(std::move(f));
}

void latestAndBest(const RunHistory& run, bool latestAudited, Findings& out)
{
    for (const auto& c : run.checkpoints) {
        if (!c.latest || c.complete || latestAudited)
            continue;
        Finding f = makeFinding("run.latest", "`latest` (" + run.latestFrom + ") designates " + c.path + ", which is incomplete: "
            + c.incompleteReason,
            hintWithNext("A resume would load a half-written checkpoint; roll back to the newest complete one (recovery guide §6.2 on atomic writes and commit markers and §8.3 on retention and rollback).",
                         Component::Integrity));
        f.evidence.push_back({"latest", c.path, run.latestFrom});
        f.checkpoints = {c.path};
        out.push_back(std::move(f));
    }
    if (run.bestFrom.empty())
        return;
    for (const auto& c : run.checkpoints) {
        if (c.best)
            return;
    }
    Finding f = makeFinding("run.best-missing", "the run records a best checkpoint that is not among its checkpoints",
        "The best checkpoint was deleted by a retention policy or lives elsewhere; deployment and evaluation that rely on "
        "it will fail (recovery guide §8.3 on retention and rollback).");
    f.evidence.push_back({"best recorded in", run.bestFrom, run.bestFrom});
    out.push_back(std::move(f));
}

const std::vector<std::pair<int64_t, double>>* lrSeries(const RunHistory& run)
{
    for (const char* name : {"learning_rate", "lr", "lr-AdamW", "lr-Adam", "lr-SGD"}) {
        const auto it = run.series.find(name);
        if (it != run.series.end() && !it->second.empty())
            return &it->second;
    }
    return nullptr;
}

void lrLogDeparts(const RunHistory& run, const std::vector<const CheckpointFacts*>& cs, Findings& out, std::vector<RunMark>& marks)
{
    const auto* logged = lrSeries(run);
    if (!logged)
        return;
    for (std::size_t i = 0; i < cs.size(); ++i) {
        const TrainingState& s = cs[i]->state;
        if (!s.scheduler || !s.globalStep || !s.scheduler->schedule.recomputable || s.scheduler->schedule.lastEpoch != *s.globalStep)
            continue;
        const LrSchedule& l = s.scheduler->schedule;
        const int64_t g = *s.globalStep;
        const int64_t end = i + 1 < cs.size() && cs[i + 1]->state.globalStep ? *cs[i + 1]->state.globalStep : g;
        auto lrAt = [&](int64_t step) -> std::optional<double> {
            try {
                if (step < 0)
                    return std::nullopt;
                const auto v = l.lrAt(step);
                return v.empty() ? std::nullopt : std::optional<double>(v.front());
            } catch (const std::exception&) {
                return std::nullopt;
            }
        };
        // Which convention the log uses (the LR of update s is lrAt(s - 1); some loggers print lrAt(s)),
        // learnt from the points logged up to the checkpoint.
        std::optional<int> offset;
        for (int o : {-1, 0}) {
            int matched = 0, tried = 0;
            for (auto it = logged->rbegin(); it != logged->rend() && tried < 5; ++it) {
                if (it->first > g || it->first <= g - 1000)
                    continue;
                ++tried;
                const auto v = lrAt(it->first + o);
                matched += v && close(*v, it->second);
            }
            if (tried > 0 && matched == tried) {
                offset = o;
                break;
            }
        }
        if (!offset)
            continue;
        for (const auto& [step, lr] : *logged) {
            if (step <= g || step > end)
                continue;
            const auto v = lrAt(step + *offset);
            if (!v || close(*v, lr))
                continue;
            Finding f = makeFinding("scheduler.lr-log-departs",
                "from step " + std::to_string(step) + " the logged learning rate " + numberText(lr) + " departs from the "
                    "schedule saved at step " + std::to_string(g) + " (" + numberText(*v) + ")",
                hintWithNext("Something changed the LR after this checkpoint: a resume that stepped the scheduler extra "
                             "times or rebuilt it from the config (stories slime#1546, OneTrainer#1604; recovery guide §2.3 on keeping the LR schedule aligned with the updates and §9.3 on validating right after a resume).",
                             Component::Scheduler));
            f.evidence.push_back({"logged learning rate at step " + std::to_string(step), numberText(lr), run.path + " (metrics log)"});
            f.evidence.push_back({"schedule at step " + std::to_string(step), numberText(*v), "computed from " + where(s.scheduler->from)});
            f.checkpoints = {s.path};
            if (i + 1 < cs.size())
                f.checkpoints.push_back(cs[i + 1]->state.path);
            marks.push_back({"scheduler.lr", step, f.rule, s.path});
            out.push_back(std::move(f));
            break;
        }
    }
}

// A generator that returns to a state it already had, after moving in between, was restarted from
// its seed: a resume that did not load the RNG (story transformers#17032, the save_strategy="epoch"
// path skipping _load_rng_state) or a broad except around the restore (more stories: Relax PR#317).
// The Mersenne Twister and Philox streams do not revisit a state within any training run's draws, so
// only a re-seed explains it; a warning, since a loop may re-seed on purpose (manual_seed(seed) at
// every epoch start), which the files cannot tell from a resume that skipped the RNG.
// The same, where the state is not seen again exactly but its count of words drawn since the seed
// is known (torch CPU, RngState::drawnSinceSeed): that count only grows while a run goes on, so a
// later save that has drawn fewer words than an earlier one went back to its seed in between. (A
// later save that drew almost nothing is no proof: a run may draw only while building its model,
// as transformers/rng-missing and a healthy run that trains without dropout both show.)
void rngDrawsFellBack(const std::string& kind, int rank,
                      const std::vector<std::pair<const CheckpointFacts*, const RngPart::Generator*>>& seen,
                      std::set<std::pair<const CheckpointFacts*, const CheckpointFacts*>>& reported, Findings& out)
{
    for (std::size_t j = 1; j < seen.size(); ++j) {
        const auto& [ca, ga] = seen[j - 1];
        const auto& [cb, gb] = seen[j];
        const auto da = ga->state.drawnSinceSeed, db = gb->state.drawnSinceSeed;
        const int64_t sa = *ca->state.globalStep, sb = *cb->state.globalStep;
        if (!da || !db || sb <= sa || *db >= *da || !reported.insert({ca, cb}).second)
            continue;
        const std::string text = kind + " of rank " + std::to_string(rank) + " has drawn " + std::to_string(*db)
                               + " words since its seed at step " + std::to_string(sb) + ", fewer than the " + std::to_string(*da)
                               + " it had drawn at step " + std::to_string(sa) + ": it went back to its seed in between";
        Finding f = makeFinding("rng.restarted", text,
            hintWithNext("A resume re-seeded instead of loading the RNG state: a checkpoint whose RNG file was missing or "
                         "skipped (the Trainer seeds again and goes on when rng_state.pth is absent; story "
                         "transformers#17032), or a try/except around the restore. Dropout masks and shuffling repeat "
                         "those of the run's first steps. A loop that re-seeds on purpose explains it too (recovery "
                         "guide §4.1 on the state of every random generator).",
                         Component::Rng));
        f.evidence.push_back(evidence(kind + " words drawn since the seed at step " + std::to_string(sa), std::to_string(*da),
                                      {ga->file, ga->state.key}));
        f.evidence.push_back(evidence(kind + " words drawn since the seed at step " + std::to_string(sb), std::to_string(*db),
                                      {gb->file, gb->state.key}));
        f.checkpoints = {ca->state.path, cb->state.path};
        out.push_back(std::move(f));
    }
}

void rngRestarted(const std::vector<const CheckpointFacts*>& cs, Findings& out)
{
    using Key = std::tuple<int, std::string, std::string>; // rank, kind, key path
    std::map<Key, std::vector<std::pair<const CheckpointFacts*, const RngPart::Generator*>>> history;
    for (const CheckpointFacts* c : cs) {
        if (!c->state.rng || !c->state.globalStep)
            continue;
        for (const auto& g : c->state.rng->generators) {
            if (!g.state.fingerprint.empty())
                history[{g.rank < 0 ? 0 : g.rank, rngKindName(g.state.kind), formatKeyPath(g.state.key)}].push_back({c, &g});
        }
    }
    std::set<std::pair<const CheckpointFacts*, const CheckpointFacts*>> reported;
    for (const auto& [key, seen] : history) {
        // One pass: where each state was last seen. Every save between that one and this differs from
        // it by construction, so a state seen again more than one save later moved in between.
        std::map<std::string, std::size_t> lastSeen;
        for (std::size_t j = 0; j < seen.size(); ++j) {
            const auto [it, fresh] = lastSeen.try_emplace(seen[j].second->state.fingerprint, j);
            const std::size_t i = it->second;
            it->second = j;
            if (fresh || j <= i + 1)
                continue;
            const auto& [ca, ga] = seen[i];
            const auto& [cb, gb] = seen[j];
            if (*cb->state.globalStep <= *ca->state.globalStep || !reported.insert({ca, cb}).second)
                continue;
            Finding f = makeFinding("rng.restarted",
                std::get<1>(key) + " of rank " + std::to_string(std::get<0>(key)) + " at step "
                    + std::to_string(*cb->state.globalStep) + " is back in the state it had at step "
                    + std::to_string(*ca->state.globalStep) + ", after moving in between: it was restarted from its seed",
                hintWithNext("A resume re-seeded instead of loading the RNG state: the Trainer's epoch-save path that skipped "
                             "_load_rng_state (story transformers#17032), or a try/except around the restore that swallowed "
                             "an error (more stories: Relax PR#317); dropout masks and shuffling repeat those of steps "
                             + std::to_string(*ca->state.globalStep) + " onward. A loop that re-seeds on purpose (manual_seed(seed) "
                             "at every epoch start) revisits states too (recovery guide §4.1 on the state of every random generator).",
                             Component::Rng));
            f.evidence.push_back(evidence(std::get<1>(key) + " at step " + std::to_string(*ca->state.globalStep),
                                          ga->state.fingerprint, {ga->file, ga->state.key}));
            f.evidence.push_back(evidence(std::get<1>(key) + " at step " + std::to_string(*cb->state.globalStep),
                                          gb->state.fingerprint, {gb->file, gb->state.key}));
            f.checkpoints = {ca->state.path, cb->state.path};
            out.push_back(std::move(f));
        }
        rngDrawsFellBack(std::get<1>(key), std::get<0>(key), seen, reported, out);
    }
}

// Lightning's loops count the batches trained (epoch_loop.batch_progress) and the global step the
// optimizer steps; accumulate_grad_batches, how many batches one step takes, is a Trainer argument and
// is not saved (Lightning@862314360457 src/lightning/pytorch/trainer/connectors/checkpoint_connector.py
// dump_checkpoint). Between two saves with no restore between them, d batches over dG steps fit an
// accumulation r when r (dG - e) + e <= d <= r dG, e the epoch ends crossed (each may close a short
// accumulation: loops/training_epoch_loop.py _should_accumulate). The accumulations every such pair fits
// must share one value; none shared means it changed at a resume.
struct BatchesPerStep {
    const CheckpointFacts* a = nullptr;
    const CheckpointFacts* b = nullptr;
    int64_t batches = 0, steps = 0;
    std::set<int64_t> fits;
};

std::optional<BatchesPerStep> batchesPerStep(const CheckpointFacts& a, const CheckpointFacts& b)
{
    auto counter = [](const TrainingState& s, const char* tracker, const char* k) {
        const std::string name = std::string("fit_loop/epoch_loop.batch_progress/") + tracker + "/" + k;
        for (const auto* fields : {&s.data, &s.progress}) {
            if (auto v = fieldNumber(*fields, name))
                return std::optional<int64_t>(static_cast<int64_t>(*v));
        }
        return std::optional<int64_t>();
    };
    // Restores so far: each leaves the total trackers one ready ahead of where `current` is.
    auto restores = [&](const TrainingState& s) -> std::optional<int64_t> {
        const auto tr = counter(s, "total", "ready"), tc = counter(s, "total", "completed");
        const auto cr = counter(s, "current", "ready"), cc = counter(s, "current", "completed");
        if (!tr || !tc || !cr || !cc)
            return std::nullopt;
        return (*tr - *tc) - (*cr - *cc);
    };
    const TrainingState &sa = a.state, &sb = b.state;
    const auto pa = counter(sa, "total", "processed"), pb = counter(sb, "total", "processed");
    const auto ra = restores(sa), rb = restores(sb);
    const auto ea = fieldNumber(sa.progress, "epoch"), eb = fieldNumber(sb.progress, "epoch");
    if (!pa || !pb || !ra || !rb || *ra != *rb || !ea || !eb || !sa.globalStep || !sb.globalStep)
        return std::nullopt;
    BatchesPerStep r{&a, &b, *pb - *pa, *sb.globalStep - *sa.globalStep, {}};
    const auto ends = static_cast<int64_t>(*eb - *ea);
    if (r.steps <= 0 || r.batches <= 0 || ends < 0)
        return std::nullopt;
    for (int64_t acc = 1; acc <= r.batches; ++acc) {
        if (acc * (r.steps - std::min(ends, r.steps)) + std::min(ends, r.steps) <= r.batches && r.batches <= acc * r.steps)
            r.fits.insert(acc);
    }
    return r;
}

void accumulationChanged(const std::vector<const CheckpointFacts*>& cs, Findings& out)
{
    const CheckpointFacts *from = nullptr, *to = nullptr; // the stretch whose pairs share `shared`
    std::set<int64_t> shared;
    for (std::size_t i = 1; i < cs.size(); ++i) {
        auto pair = batchesPerStep(*cs[i - 1], *cs[i]);
        if (!pair || pair->fits.empty())
            continue; // a save between two steps of an accumulation (Lightning 1.9's re-save after a resume)
        if (!from) {
            from = pair->a;
            to = pair->b;
            shared = pair->fits;
            continue;
        }
        std::set<int64_t> both;
        std::set_intersection(shared.begin(), shared.end(), pair->fits.begin(), pair->fits.end(), std::inserter(both, both.begin()));
        if (!both.empty()) {
            to = pair->b;
            shared = std::move(both);
            continue;
        }
        auto text = [](const std::set<int64_t>& fits) {
            return fits.size() == 1 ? std::to_string(*fits.begin()) : std::to_string(*fits.begin()) + "-" + std::to_string(*fits.rbegin());
        };
        Finding f = makeFinding("data.accumulation-changed",
            "the batches each optimizer step takes changed: " + text(shared) + " from " + from->state.path + " to " + to->state.path
                + ", then " + text(pair->fits) + " (" + std::to_string(pair->batches) + " batches for " + std::to_string(pair->steps)
                + " steps) from " + pair->a->state.path + " to " + pair->b->state.path,
            hintWithNext("accumulate_grad_batches changed at a resume: Lightning does not save it, so a Trainer built with another "
                         "value continues the run with another effective batch size, a schedule stepped per optimizer step reaches "
                         "its end at another batch, and the loss scale of the updates changes (recovery guide §5 on the "
                         "single-process resume example and §9.1 on checking the configuration at a resume).",
                         Component::Data));
        for (const auto* c : {pair->a, pair->b}) {
            if (const StateField* p = findField(c->state.data, "fit_loop/epoch_loop.batch_progress/total/processed"))
                f.evidence.push_back(evidence(*p));
            f.evidence.push_back(globalStepEvidence(c->state));
        }
        if (auto w = writerEvidence(pair->b->state))
            f.evidence.push_back(*w);
        f.checkpoints = {from->state.path, pair->b->state.path};
        out.push_back(std::move(f));
        return;
    }
}

// The training log a checkpoint carries: transformers' Trainer saves its whole log_history in every
// checkpoint's trainer_state.json and a resume loads it and appends (transformers@c26b2a29e500
// src/transformers/trainer.py _save_checkpoint, _inner_training_loop TrainerState.load_from_json), so a
// later checkpoint of the same run starts with an earlier one's entries. The training entries (those with
// a `loss`) by step, as their JSON text; empty when the checkpoint has no such log or it cannot be read.
std::map<int64_t, std::string> trainingLog(const TrainingState& s)
{
    std::map<int64_t, std::string> out;
    for (const auto& f : s.layout.files) {
        if (f.role != "trainer_state")
            continue;
        try {
            const auto doc = parsePythonJson(readBoundedFile(f.path, kSidecarJsonLimit));
            const auto log = doc.find("log_history");
            if (log == doc.end() || !log->is_array())
                return out;
            for (const auto& entry : *log) {
                if (entry.is_object() && entry.contains("loss") && entry.contains("step") && entry["step"].is_number_integer())
                    out[entry["step"].get<int64_t>()] = entry.dump();
            }
        } catch (const std::exception&) {
            // an unreadable trainer_state.json is the state reader's warning
        }
        return out;
    }
    return out;
}

// Two consecutive checkpoints of one folder whose logs disagree on a step both logged were written by two
// different runs: a new Trainer without resume_from_checkpoint, or a resume from an older checkpoint,
// saved into the output_dir beside the other run's checkpoints. get_last_checkpoint then resumes from
// whichever is newest by number, whatever run it came from.
void lineageDiverges(const std::vector<const CheckpointFacts*>& cs, Findings& out)
{
    std::map<int64_t, std::string> before;
    const CheckpointFacts* previous = nullptr;
    for (const CheckpointFacts* c : cs) {
        std::map<int64_t, std::string> log = trainingLog(c->state);
        if (log.empty())
            continue;
        for (const auto& [step, entry] : before) {
            const auto it = log.find(step);
            if (it == log.end() || it->second == entry)
                continue;
            Finding f = makeFinding("run.lineage-diverges",
                c->state.path + " and " + previous->state.path + " log different training at step " + std::to_string(step)
                    + ": they come from two runs written into one folder",
                hintWithNext("Each checkpoint carries the run's whole training log, and a resume continues it; a checkpoint whose "
                             "log departs from the one saved before it was written by another run: a new Trainer started "
                             "without resume_from_checkpoint (from_pretrained weights only), or a resume from an older "
                             "checkpoint, saving beside the first run's checkpoints. A resume picks the highest number, "
                             "whichever run wrote it (recovery guide §8.3 on retention and rollback).",
                             Component::Progress));
            f.evidence.push_back({"step " + std::to_string(step) + " in " + previous->state.path, before.at(step), previous->state.path});
            f.evidence.push_back({"step " + std::to_string(step) + " in " + c->state.path, it->second, c->state.path});
            for (const auto* s : {previous, c}) {
                if (auto w = writerEvidence(s->state))
                    f.evidence.push_back({w->what + " (" + s->state.path + ")", w->value, w->where});
            }
            f.checkpoints = {previous->state.path, c->state.path};
            out.push_back(std::move(f));
            break;
        }
        before = std::move(log);
        previous = c;
    }
}

// A schedule rebuilt at a resume shows in the optimizer's own lr (story OneTrainer#1604: the
// scheduler state was not saved and the resume built the cosine anew from the current config,
// rescaling it): from save to save the lr fell, then rose. Judged only over checkpoints without
// scheduler state or whose scheduler's formula is not in the file (otherwise the scheduler rules
// reconstruct the curve) and only after a fall, so a
// warm-up's rise is not one. Warm restarts and cyclic schedules rise on purpose: a warning.
void lrRoseWithoutScheduler(const std::vector<const CheckpointFacts*>& cs, Findings& out)
{
    const CheckpointFacts* previous = nullptr;
    const StateField* previousLr = nullptr;
    bool fell = false;
    for (const CheckpointFacts* c : cs) {
        const TrainingState& s = c->state;
        const StateField* lr = s.optimizer && !s.optimizer->groups.empty() ? findField(s.optimizer->groups.front().hyperparameters, "lr")
                                                                          : nullptr;
        const auto now = lr ? toNumber(lr->value) : std::nullopt;
        // A saved scheduler whose formula is code (LambdaLR, MultiplicativeLR: the lambda is not in the
        // file) restores only its position: a resume that builds the lambda from another config (another
        // total of steps) rescales the curve, and only the recorded lr shows it.
        if ((s.scheduler && s.scheduler->schedule.recomputable) || !now) {
            previous = nullptr;
            fell = false;
            continue;
        }
        const auto before = previousLr ? toNumber(previousLr->value) : std::nullopt;
        if (previous && before && *now < *before && !close(*now, *before)) {
            fell = true;
        } else if (previous && before && fell && *now > *before && !close(*now, *before)) {
            Finding f = makeFinding("scheduler.lr-rose",
                "the learning rate fell to " + previousLr->value + " at " + previous->state.path + " and rose to " + lr->value
                    + " at " + s.path
                    + (s.scheduler || previous->state.scheduler
                           ? ", and the saved scheduler (" + (s.scheduler ? s.scheduler : previous->state.scheduler)->schedule.kind
                                 + ") cannot be recomputed: its formula is code, rebuilt from the configuration at a resume"
                           : std::string(", and neither saved scheduler state")),
                hintWithNext("A schedule rebuilt from the configuration at a resume restarts or rescales its curve (a changed "
                             "epoch count or epoch length moves the cosine's denominator): save the scheduler's state_dict with "
                             "the optimizer (story OneTrainer#1604; recovery guide §2.3 on keeping the LR schedule aligned with the updates).",
                             Component::Optimizer));
            f.evidence.push_back(evidence("lr in A", previousLr->value, previousLr->from));
            f.evidence.push_back(evidence("lr in B", lr->value, lr->from));
            if (previous->state.globalStep)
                f.evidence.push_back(globalStepEvidence(previous->state));
            if (s.globalStep)
                f.evidence.push_back(globalStepEvidence(s));
            f.checkpoints = {previous->state.path, s.path};
            out.push_back(std::move(f));
            fell = false;
        }
        previous = c;
        previousLr = lr;
    }
}

} // namespace

void runRules(const RunHistory& run, const std::vector<const CheckpointFacts*>& checkpoints, bool latestAudited, Findings& out,
              std::vector<RunMark>& marks)
{
    stepsOrder(run, checkpoints, out);
    saveInterval(checkpoints, out);
    latestAndBest(run, latestAudited, out);
    lrLogDeparts(run, checkpoints, out, marks);
    rngRestarted(checkpoints, out);
    lrRoseWithoutScheduler(checkpoints, out);
    accumulationChanged(checkpoints, out);
    lineageDiverges(checkpoints, out);
}

} // namespace ckpt::rules
