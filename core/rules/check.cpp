// SPDX-License-Identifier: MIT
#include "ckpt/rules/check.h"

#include "ckpt/frameworks/framework_registry.h"
#include "ckpt/audit/manifest_audit.h"
#include "ckpt/findings/finding_groups.h"
#include "ckpt/state/run_discovery.h"
#include "ckpt/state/run_history.h"
#include "data_cursor.h"
#include "rule_families.h"
#include "rule_support.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace ckpt {
namespace {

void stamp(std::vector<Finding>& findings, std::size_t from, const std::vector<std::string>& checkpoints)
{
    for (std::size_t i = from; i < findings.size(); ++i) {
        if (findings[i].checkpoints.empty())
            findings[i].checkpoints = checkpoints;
    }
}

bool readable(const TrainingState& s)
{
    return s.model || s.optimizer || s.scheduler || s.scaler || s.rng || !s.progress.empty() || !s.data.empty();
}

CheckpointFacts load(const std::string& path, const FactOptions& options, const CheckOptions& check)
{
    if (!fs::exists(path))
        throw std::runtime_error(path + ": no such file or directory");
    // The state goes to stateRead before the audit, which hashes every file.
    FactOptions withoutAudit = options;
    withoutAudit.audit = false;
    CheckpointFacts c = gatherFacts(path, withoutAudit);
    if (check.stateRead)
        check.stateRead(c.sharedState);
    if (options.audit)
        auditFacts(c, path);
    // A recognised layout whose files cannot be read (a model export whose one shard is refused) is
    // checked and audited: its findings say why; only an unrecognisable path is refused.
    const bool recognised = conventionsOf(c.state.layout.layout).namesAFramework;
    if (!readable(c.state) && c.files.empty() && c.audit.empty() && !recognised) {
        const std::string why = c.state.warnings.empty() ? "no training state found in it" : c.state.warnings.front();
        throw std::runtime_error(why.starts_with(path) ? why : path + ": " + why);
    }
    return c;
}

std::string seriesOf(const std::string& rule)
{
    if (rule.starts_with("optimizer."))
        return "optimizer.step";
    if (rule.starts_with("scheduler."))
        return "scheduler.lr";
    if (rule.starts_with("scaler."))
        return "scaler.scale";
    if (rule.starts_with("data."))
        return "data.cursor";
    if (rule.starts_with("rng."))
        return "rng";
    return {};
}

void addSeries(CheckReport& report, const CheckpointFacts& c)
{
    const TrainingState& s = c.state;
    if (!s.globalStep)
        return;
    auto put = [&](const char* name, double v) { report.series[name].push_back({*s.globalStep, v, s.path}); };
    put("global_step", static_cast<double>(*s.globalStep));
    if (const auto step = rules::optimizerStep(s))
        put("optimizer.step", static_cast<double>(step->step));
    if (s.scheduler && !s.scheduler->schedule.lastLr.empty())
        put("scheduler.lr", s.scheduler->schedule.lastLr.front());
    if (s.scheduler && s.scheduler->schedule.lastEpoch >= 0)
        put("scheduler.position", static_cast<double>(s.scheduler->schedule.lastEpoch));
    if (s.scaler && s.scaler->scale)
        put("scaler.scale", *s.scaler->scale);
    const rules::DataCursor d = rules::readDataCursor(s);
    if (d.consumed())
        put("data.cursor", static_cast<double>(*d.consumed()));
    else if (d.position)
        put("data.cursor", static_cast<double>(*d.position));
    if (c.content && s.optimizer) {
        double sq = 0;
        bool any = false;
        for (const auto& ps : s.optimizer->paramState) {
            for (const auto& m : ps.moments) {
                if (m.name != "exp_avg" && m.name != "momentum_buffer")
                    continue;
                if (const auto sum = c.content->summary(m.from)) {
                    sq += sum->l2 * sum->l2;
                    any = true;
                }
            }
        }
        if (any)
            put("optimizer.first_moment_norm", std::sqrt(sq));
    }
}

CheckReport checkRun(const std::string& path, const RunHistory& history, const CheckOptions& options)
{
    CheckReport report;
    report.kind = "run";
    report.inputs = {path};
    std::vector<Finding> runAudit;
    bool audited = false;
    const std::size_t n = history.checkpoints.size();
    const std::size_t total = 3 * n - (n ? 1 : 0) + (options.audit ? 1 : 0); // read, check, compare pairs, audit
    std::size_t done = 0;
    auto step = [&](std::string stage) {
        if (!options.progress || options.progress({done++, total, std::move(stage)}))
            return true;
        report.cancelled = true;
        return false;
    };
    std::vector<CheckpointFacts> facts;
    for (const auto& rc : history.checkpoints) {
        if (!step("reading " + rc.path))
            return report;
        facts.push_back(gatherFacts(rc.path, {false, options.content, options.keepFiles}));
        if (options.stateRead)
            options.stateRead(facts.back().sharedState);
        report.checkpoints.push_back(rc.path);
        report.states.push_back(summarizeState(facts.back().state));
    }
    if (options.audit && step("auditing " + path)) {
        try {
            for (auto& f : auditPath(path).findings) {
                auto it = std::find_if(facts.begin(), facts.end(), [&](const CheckpointFacts& c) {
                    return !f.checkpoints.empty() && f.checkpoints.front() == c.state.path && !f.rule.starts_with("integrity.latest");
                });
                if (it != facts.end())
                    it->audit.push_back(std::move(f));
                else
                    runAudit.push_back(std::move(f));
            }
            audited = true;
        } catch (const std::exception&) {
            // not a manifest-based run: nothing to verify against
        }
    }
    if (report.cancelled)
        return report;
    std::vector<const CheckpointFacts*> ordered;
    for (const auto& c : facts) {
        if (!step("checking " + c.state.path))
            return report;
        ordered.push_back(&c);
        auto found = checkCheckpoint(c);
        report.findings.insert(report.findings.end(), found.begin(), found.end());
        addSeries(report, c);
    }
    // Consecutive training checkpoints are compared; a model-only export (torchtitan's last step) is
    // the run's product in another naming (Hugging Face keys), not the next training state.
    const CheckpointFacts* previous = nullptr;
    for (std::size_t i = 0; i < facts.size(); ++i) {
        const bool isExport = isFinalArtefact(facts[i].state.layout.layout);
        if (previous && isExport != isFinalArtefact(previous->state.layout.layout)) {
            done++;
            continue;
        }
        if (!previous) {
            previous = &facts[i];
            continue;
        }
        if (!step("comparing " + previous->state.path + " -> " + facts[i].state.path))
            return report;
        auto found = checkPair(*previous, facts[i]);
        // whether rank 0's torch CPU generator moved between the two saves: a resume that does not
        // restore it draws the same stream again, or a fresh one
        const std::string& rngBefore = report.states[static_cast<std::size_t>(previous - facts.data())].rngFingerprint;
        const std::string& rngAfter = report.states[i].rngFingerprint;
        if (facts[i].state.globalStep && !rngBefore.empty() && !rngAfter.empty())
            report.series["rng.changed"].push_back({*facts[i].state.globalStep, rngBefore != rngAfter ? 1.0 : 0.0, facts[i].state.path});
        for (const auto& f : found) {
            const std::string series = seriesOf(f.rule);
            if (!series.empty() && f.severity != Severity::Info && facts[i].state.globalStep)
                report.discontinuities.push_back({series, *facts[i].state.globalStep, f.rule, facts[i].state.path});
        }
        report.findings.insert(report.findings.end(), found.begin(), found.end());
        previous = &facts[i];
    }
    if (!facts.empty()) // the timeline draws the latest checkpoint's scheduler over its positions
        report.states.back() = summarizeState(facts.back().state, true);
    const std::size_t before = report.findings.size();
    report.findings.insert(report.findings.end(), runAudit.begin(), runAudit.end());
    std::vector<rules::RunMark> marks;
    rules::runRules(history, ordered, audited, report.findings, marks);
    stamp(report.findings, before, {path});
    for (const auto& m : marks)
        report.discontinuities.push_back({m.series, m.step, m.rule, m.checkpoint});
    return report;
}

} // namespace

std::size_t CheckReport::count(Severity severity) const
{
    return static_cast<std::size_t>(std::count_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.severity == severity; }));
}

bool CheckReport::hasProblems() const { return count(Severity::Error) + count(Severity::Warning) > 0; }

std::vector<Finding> checkCheckpoint(const CheckpointFacts& c)
{
    std::vector<Finding> out;
    rules::integrityRules(c, out);
    rules::securityRules(c, out);
    rules::modelRules(c, out);
    rules::configRules(c, out);
    rules::adapterRules(c, out);
    rules::optimizerRules(c, out);
    rules::schedulerRules(c, out);
    rules::scalerRules(c, out);
    rules::rngRules(c, out);
    rules::dataRules(c, out);
    rules::progressRules(c, out);
    rules::environmentRules(c, out);
    rules::contentRules(c, out);
    stamp(out, 0, {c.state.path});
    return out;
}

std::vector<Finding> checkPair(const CheckpointFacts& a, const CheckpointFacts& b)
{
    std::vector<Finding> out;
    rules::counterPairRules(a, b, out);
    rules::scalerPairRules(a, b, out);
    rules::rngPairRules(a, b, out);
    rules::structurePairRules(a, b, out);
    rules::contentPairRules(a, b, out);
    stamp(out, 0, {a.state.path, b.state.path});
    return out;
}

void sortFindings(std::vector<Finding>& findings)
{
    std::stable_sort(findings.begin(), findings.end(), [](const Finding& x, const Finding& y) {
        if (x.severity != y.severity)
            return x.severity > y.severity;
        if (x.component != y.component)
            return x.component < y.component;
        return x.rule < y.rule;
    });
}

namespace {

// The runs a path holds, as the one discovery (run_discovery.h) decides for every command and the
// GUI; none when the path is one checkpoint, or a folder of files that is no run (checked as one
// checkpoint of whatever it holds).
std::vector<DiscoveredRun> runsToCheck(const std::string& path)
{
    if (!fs::is_directory(path))
        return {};
    std::vector<DiscoveredRun> runs;
    try {
        runs = discoverRuns(path);
    } catch (const std::exception&) {
        return {};
    }
    std::erase_if(runs, [](const DiscoveredRun& r) { return r.looseFiles || r.history.checkpoints.empty(); });
    if (runs.size() == 1 && runs.front().singleCheckpoint)
        return {}; // the path is the checkpoint
    return runs;
}

// A folder of runs (sample_runs/, an experiments folder): each run checked on its own, never one
// run of everyone's checkpoints. Series and marks are named by the run they come from.
CheckReport checkRuns(const std::string& path, const std::vector<DiscoveredRun>& runs, const CheckOptions& options)
{
    CheckReport report;
    report.kind = "runs";
    report.inputs = {path};
    for (const DiscoveredRun& run : runs) {
        CheckReport one;
        if (run.singleCheckpoint) { // a model folder among others
            const CheckpointFacts c = load(run.path, {options.audit, options.content, options.keepFiles}, options);
            one.checkpoints = {c.state.path};
            one.states = {summarizeState(c.state)};
            one.findings = checkCheckpoint(c);
        } else {
            one = checkRun(run.path, run.history, options);
        }
        const std::string name = fs::path(run.path).lexically_relative(path).generic_string();
        report.checkpoints.insert(report.checkpoints.end(), one.checkpoints.begin(), one.checkpoints.end());
        report.states.insert(report.states.end(), one.states.begin(), one.states.end());
        report.findings.insert(report.findings.end(), std::make_move_iterator(one.findings.begin()),
                               std::make_move_iterator(one.findings.end()));
        for (auto& [series, points] : one.series)
            report.series[name + ": " + series] = std::move(points);
        for (auto& d : one.discontinuities) {
            d.series = name + ": " + d.series;
            report.discontinuities.push_back(std::move(d));
        }
        if (one.cancelled) {
            report.cancelled = true;
            break;
        }
    }
    return report;
}

} // namespace

CheckReport checkPaths(const std::vector<std::string>& paths, const CheckOptions& options)
{
    if (paths.empty() || paths.size() > 2)
        throw std::invalid_argument("check takes one path (file, checkpoint or run directory) or two (a pair)");
    for (const auto& p : paths) {
        if (!fs::exists(p))
            throw std::runtime_error(p + ": no such file or directory");
    }
    CheckReport report;
    const FactOptions factOptions{options.audit, options.content, options.keepFiles};
    if (paths.size() == 2) {
        report.kind = "pair";
        report.inputs = paths;
        const CheckpointFacts a = load(paths[0], factOptions, options), b = load(paths[1], factOptions, options);
        report.checkpoints = {a.state.path, b.state.path};
        report.states = {summarizeState(a.state), summarizeState(b.state)};
        for (const CheckpointFacts* c : {&a, &b}) {
            auto found = checkCheckpoint(*c);
            report.findings.insert(report.findings.end(), found.begin(), found.end());
        }
        auto found = checkPair(a, b);
        report.findings.insert(report.findings.end(), found.begin(), found.end());
    } else if (std::vector<DiscoveredRun> runs = runsToCheck(paths[0]); runs.size() == 1 && !runs.front().singleCheckpoint) {
        report = checkRun(runs.front().path, runs.front().history, options);
    } else if (runs.size() > 1) {
        report = checkRuns(paths[0], runs, options);
    } else {
        report.kind = "checkpoint";
        report.inputs = paths;
        const CheckpointFacts c = load(paths[0], factOptions, options);
        report.checkpoints = {c.state.path};
        report.states = {summarizeState(c.state)};
        report.findings = checkCheckpoint(c);
    }
    sortFindings(report.findings);
    return report;
}

nlohmann::json findingToJson(const Finding& f)
{
    nlohmann::json evidence = nlohmann::json::array();
    for (const auto& e : f.evidence)
        evidence.push_back({{"what", e.what}, {"value", e.value}, {"where", e.where}});
    return {{"rule", f.rule},
            {"severity", severityName(f.severity)},
            {"component", componentName(f.component)},
            {"message", f.message},
            {"evidence", evidence},
            {"checkpoints", f.checkpoints},
            {"file", f.file},
            {"hint", f.hint},
            {"assumes", f.assumes.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.assumes)}};
}

nlohmann::json checkReportToJson(const CheckReport& r)
{
    nlohmann::json findings = nlohmann::json::array();
    for (const auto& f : r.findings)
        findings.push_back(findingToJson(f));
    nlohmann::json series = nlohmann::json::object();
    for (const auto& [name, points] : r.series) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& p : points)
            list.push_back({{"step", p.step}, {"value", p.value}, {"checkpoint", p.checkpoint}});
        series[name] = list;
    }
    // The groups point at the findings by index: every finding stays, scripts lose nothing.
    nlohmann::json groups = nlohmann::json::array();
    for (const FindingGroup& g : groupFindings(r.findings, r.checkpoints))
        groups.push_back({{"rule", g.rule}, {"severity", severityName(g.severity)}, {"component", componentName(g.component)},
                          {"message", g.message}, {"hint", g.hint}, {"count", g.members.size()}, {"findings", g.members},
                          {"checkpoints", g.checkpoints}});
    nlohmann::json marks = nlohmann::json::array();
    for (const auto& d : r.discontinuities)
        marks.push_back({{"series", d.series}, {"step", d.step}, {"rule", d.rule}, {"checkpoint", d.checkpoint}});
    return {{"kind", r.kind},
            {"inputs", r.inputs},
            {"checkpoints", r.checkpoints},
            {"counts", {{"error", r.count(Severity::Error)}, {"warning", r.count(Severity::Warning)}, {"info", r.count(Severity::Info)}}},
            {"findings", findings},
            {"groups", groups},
            {"series", series},
            {"discontinuities", marks},
            {"cancelled", r.cancelled}};
}

} // namespace ckpt
