// SPDX-License-Identifier: MIT
#include "ckpt/report/timeline.h"

#include "ckpt/report/probe_list.h"

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace ckpt {
namespace {

std::string baseName(const std::string& path)
{
    return fs::path(path).filename().string();
}

// A part's place in the §10.1 order of S_t's parts (the files' integrity and security last: they
// are not a part that a resume changes).
int partRank(Component c)
{
    const auto& order = diagnosisOrder();
    const auto it = std::find(order.begin(), order.end(), c);
    return it == order.end() ? static_cast<int>(order.size()) : static_cast<int>(it - order.begin());
}

// The checkpoints on both sides of step `s`: the last saved at or before it, the first after it.
std::pair<std::string, std::string> around(const std::vector<TimelineCheckpoint>& cps, int64_t s)
{
    std::string before, after;
    for (const auto& c : cps) {
        if (!c.step)
            continue;
        if (*c.step <= s)
            before = c.path;
        else if (after.empty())
            after = c.path;
    }
    return {before, after};
}

void mergeInto(std::vector<ResumePoint>& points, ResumePoint p)
{
    for (auto& q : points) {
        const bool overlap = p.from <= q.to && q.from <= p.to;
        // a log restart at step s and a probe or pair at the checkpoint it resumed from are one resume
        const bool sameSides = !p.before.empty() && p.before == q.before && p.after == q.after;
        if (!overlap && !sameSides)
            continue;
        // the narrower band knows the step better (a probe or a log restart inside a pair's band)
        if (p.to - p.from < q.to - q.from) {
            q.from = p.from;
            q.to = p.to;
        }
        q.evidence.insert(q.evidence.end(), p.evidence.begin(), p.evidence.end());
        if (q.before.empty())
            q.before = p.before;
        if (q.after.empty())
            q.after = p.after;
        if (q.firstComponent.empty())
            q.firstComponent = p.firstComponent;
        q.rules.insert(q.rules.end(), p.rules.begin(), p.rules.end());
        return;
    }
    points.push_back(std::move(p));
}

StepSeries seriesOf(const CheckReport& report, const std::string& name)
{
    StepSeries out;
    const auto it = report.series.find(name);
    if (it != report.series.end()) {
        for (const auto& p : it->second)
            out.emplace_back(p.step, p.value);
    }
    return out;
}

StepSeries loggedOf(const RunHistory& h, std::initializer_list<const char*> names)
{
    for (const char* n : names) {
        const auto it = h.series.find(n);
        if (it != h.series.end())
            return it->second;
    }
    return {};
}

} // namespace

Timeline buildTimeline(const RunHistory& history, const CheckReport& report)
{
    Timeline t;
    t.run = history.path;
    t.logged = history.series;
    auto extend = [&](int64_t s) {
        t.firstStep = t.firstStep ? std::min(*t.firstStep, s) : s;
        t.lastStep = t.lastStep ? std::max(*t.lastStep, s) : s;
    };
    for (const auto& [_, points] : t.logged) {
        if (!points.empty()) {
            extend(points.front().first);
            extend(points.back().first);
        }
    }
    // checkpoints, each with the worst finding that names it last (a pair finding belongs to B)
    for (const auto& rc : history.checkpoints) {
        TimelineCheckpoint c{rc.path, rc.step, std::nullopt, 0, rc.latest, rc.best};
        if (!c.step) {
            for (const auto& s : report.states)
                if (s.path == rc.path)
                    c.step = s.step;
        }
        for (const auto& f : report.findings) {
            if (f.checkpoints.empty() || f.checkpoints.back() != rc.path)
                continue;
            ++c.findings;
            if (!c.worst || static_cast<int>(f.severity) > static_cast<int>(*c.worst))
                c.worst = f.severity;
        }
        if (c.step)
            extend(*c.step);
        t.checkpoints.push_back(std::move(c));
    }
    std::stable_sort(t.checkpoints.begin(), t.checkpoints.end(), [](const TimelineCheckpoint& a, const TimelineCheckpoint& b) {
        return a.step.value_or(INT64_MIN) < b.step.value_or(INT64_MIN);
    });
    auto stepOf = [&](const std::string& path) -> std::optional<int64_t> {
        for (const auto& c : t.checkpoints)
            if (c.path == path)
                return c.step;
        return std::nullopt;
    };

    // 1. pairs of checkpoints whose state cannot follow from one to the next (warnings and errors)
    std::map<std::pair<std::string, std::string>, ResumePoint> pairs;
    std::map<std::pair<std::string, std::string>, int> firstRank;
    for (const auto& f : report.findings) {
        if (f.checkpoints.size() != 2 || f.severity == Severity::Info)
            continue;
        const auto a = stepOf(f.checkpoints[0]), b = stepOf(f.checkpoints[1]);
        if (!a || !b)
            continue;
        const auto key = std::make_pair(f.checkpoints[0], f.checkpoints[1]);
        ResumePoint& p = pairs[key];
        p.from = *a;
        p.to = *b;
        p.before = f.checkpoints[0];
        p.after = f.checkpoints[1];
        p.rules.push_back(f.rule);
        const auto best = firstRank.find(key);
        if (best == firstRank.end() || partRank(f.component) < best->second) {
            firstRank[key] = partRank(f.component);
            p.firstComponent = componentName(f.component);
        }
    }
    std::vector<ResumePoint> points;
    for (auto& [key, p] : pairs) {
        p.evidence.push_back("the state saved at step " + std::to_string(p.to) + " (" + baseName(p.after) + ") cannot follow from step "
                             + std::to_string(p.from) + " (" + baseName(p.before) + "): " + p.rules.front()
                             + (p.rules.size() > 1 ? " and " + std::to_string(p.rules.size() - 1) + " more" : std::string()));
        mergeInto(points, std::move(p));
    }
    // 2. probes a resume recorded (ckpt_writer's arm_probe(..., recorded_by="resume")): the resumed
    //    run's first update after loading the checkpoint, so the step of the resume is known exactly
    for (const auto& pr : listProbes(history.path)) {
        if (pr.recordedBy != "resume" || !pr.stepBefore)
            continue;
        ResumePoint p;
        p.from = p.to = *pr.stepBefore;
        std::tie(p.before, p.after) = around(t.checkpoints, *pr.stepBefore);
        p.evidence.push_back("a probe was recorded by the resume from " + pr.checkpoint + " (step " + std::to_string(*pr.stepBefore) + ")");
        mergeInto(points, std::move(p));
    }
    // 3. the logs going back: the run was restarted from an earlier step and logged it again
    for (const auto& r : history.logRestarts) {
        ResumePoint p;
        p.from = r.step;
        p.to = r.previous;
        std::tie(p.before, p.after) = around(t.checkpoints, r.step);
        p.evidence.push_back(baseName(r.file) + (r.line ? ":" + std::to_string(r.line) : std::string()) + ": the logged steps restart at "
                             + std::to_string(r.step) + " after " + std::to_string(r.previous)
                             + " (steps " + std::to_string(r.step) + "-" + std::to_string(r.previous) + " logged twice)");
        mergeInto(points, std::move(p));
    }
    std::sort(points.begin(), points.end(), [](const ResumePoint& a, const ResumePoint& b) { return a.from < b.from; });
    t.resumes = std::move(points);
    // A pair finding breaks a strip at the later checkpoint's step; where the resume between the two is
    // known more exactly (a probe, the logs), the break is drawn there.
    auto resumeStep = [&](int64_t b) {
        for (const auto& r : t.resumes) {
            const auto after = stepOf(r.after);
            if (after && *after == b && r.from < b)
                return r.from;
        }
        return b;
    };

    // strips: the values that matter for a resume, per checkpoint, with the logged series beside them;
    // a strip breaks where a pair or run finding of its part says so (check.cpp seriesOf)
    auto strip = [&](const char* name, const char* component, const std::string& series, const std::string& breaksOf,
                     StepSeries reference, const char* refName) {
        TimelineStrip s{name, component, seriesOf(report, series), std::move(reference), refName, {}};
        for (const auto& d : report.discontinuities) {
            if (d.series == breaksOf)
                s.breaks.push_back(resumeStep(d.step));
        }
        std::sort(s.breaks.begin(), s.breaks.end());
        s.breaks.erase(std::unique(s.breaks.begin(), s.breaks.end()), s.breaks.end());
        if (!s.points.empty() || !s.reference.empty())
            t.strips.push_back(std::move(s));
    };
    strip("lr", "scheduler", "scheduler.lr", "scheduler.lr", loggedOf(history, {"learning_rate", "lr", "lr-AdamW", "lr-Adam", "lr-SGD"}),
          "logged LR");
    if (!t.strips.empty() && t.strips.back().name == "lr") {
        for (auto it = report.states.rbegin(); it != report.states.rend(); ++it) {
            if (!it->lrCurve.empty()) {
                t.strips.back().reconstructed = it->lrCurve;
                break;
            }
        }
    }
    strip("loss scale", "scaler", "scaler.scale", "scaler.scale", loggedOf(history, {"scale", "loss_scale", "grad_scale"}), "logged scale");
    strip("optimizer step", "optimizer", "optimizer.step", "optimizer.step", seriesOf(report, "global_step"), "global step");
    strip("data cursor", "data", "data.cursor", "data.cursor", {}, "");
    strip("rng changed", "rng", "rng.changed", "rng", {}, ""); // 1: rank 0's CPU generator moved since the previous save
    strip("moment norm", "optimizer", "optimizer.first_moment_norm", "", {}, "");
    // the logged gradient norm: a resume that loses the optimizer or the scaler often shows here first
    strip("grad norm", "optimizer", "", "", loggedOf(history, {"grad_norm", "gradient_norm", "train/grad_norm"}), "logged grad norm");
    for (const auto& s : t.strips) {
        for (const auto& [step, _] : s.points)
            extend(step);
    }
    return t;
}

nlohmann::json timelineToJson(const Timeline& t)
{
    using json = nlohmann::json;
    json cps = json::array();
    for (const auto& c : t.checkpoints)
        cps.push_back({{"path", c.path}, {"step", c.step ? json(*c.step) : json()},
                       {"worst", c.worst ? json(severityName(*c.worst)) : json()}, {"findings", c.findings},
                       {"latest", c.latest}, {"best", c.best}});
    json resumes = json::array();
    for (const auto& r : t.resumes)
        resumes.push_back({{"from", r.from}, {"to", r.to}, {"evidence", r.evidence}, {"before", r.before}, {"after", r.after},
                           {"first_component", r.firstComponent.empty() ? json() : json(r.firstComponent)}, {"rules", r.rules}});
    json strips = json::array();
    for (const auto& s : t.strips)
        strips.push_back({{"name", s.name}, {"component", s.component}, {"points", s.points},
                          {"reconstructed_points", s.reconstructed.size()},
                          {"reference", s.referenceName.empty() ? json() : json(s.referenceName)}, {"breaks", s.breaks}});
    json logged = json::object();
    for (const auto& [name, points] : t.logged)
        logged[name] = points.size();
    return {{"run", t.run}, {"first_step", t.firstStep ? json(*t.firstStep) : json()},
            {"last_step", t.lastStep ? json(*t.lastStep) : json()}, {"logged_series", logged}, {"checkpoints", cps},
            {"resumes", resumes}, {"strips", strips}};
}

} // namespace ckpt
