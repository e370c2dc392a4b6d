// SPDX-License-Identifier: MIT
#include "ckpt/report/run_report.h"

#include "ckpt/findings/finding_groups.h"
#include "ckpt/rules/rule_catalogue.h"

#include "ckpt/report/text_format.h"
#include "ckpt/state/run_discovery.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace ckpt {
namespace {

using json = nlohmann::json;

constexpr std::size_t kTopTensors = 10;

std::string baseName(const std::string& path)
{
    return fs::path(path).filename().string();
}

std::optional<DiscoveredRun> theRun(const std::string& path)
{
    try {
        auto runs = discoverRuns(path);
        if (runs.size() == 1 && !runs.front().singleCheckpoint && !runs.front().looseFiles)
            return std::move(runs.front());
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

PairSummary summarizePair(const std::string& a, const std::string& b, const std::string& why, const ReportOptions& options)
{
    StatsOptions stats;
    if (options.progress)
        stats.progress = [&](const StatsProgress&) { return options.progress({0, 0, "comparing " + baseName(a) + " and " + baseName(b)}); };
    CheckpointDiff d = diffCheckpoints(a, b, stats);
    PairSummary p{a, b, why, {}, {}, d.counts};
    for (auto& s : d.states) {
        if (s.status != "same")
            p.states.push_back(std::move(s));
    }
    std::vector<TensorDiff> changed, oneSide;
    for (auto& t : d.tensors) {
        if (t.status == DiffStatus::Changed || t.status == DiffStatus::ShapeChanged || t.status == DiffStatus::DtypeChanged)
            changed.push_back(std::move(t));
        else if (t.status == DiffStatus::OnlyA || t.status == DiffStatus::OnlyB)
            oneSide.push_back(std::move(t));
    }
    // most changed first: a resume that lost the optimizer or loaded another model shows at the top
    std::stable_sort(changed.begin(), changed.end(), [](const TensorDiff& x, const TensorDiff& y) {
        const double rx = std::isnan(x.relL2) ? 0 : x.relL2, ry = std::isnan(y.relL2) ? 0 : y.relL2;
        return rx > ry;
    });
    for (std::size_t i = 0; i < changed.size() && p.tensors.size() < kTopTensors; ++i)
        p.tensors.push_back(std::move(changed[i]));
    for (std::size_t i = 0; i < oneSide.size() && p.tensors.size() < 2 * kTopTensors; ++i)
        p.tensors.push_back(std::move(oneSide[i]));
    return p;
}

const char* statusName(DiffStatus s)
{
    switch (s) {
    case DiffStatus::Equal: return "equal";
    case DiffStatus::Changed: return "changed";
    case DiffStatus::OnlyA: return "only in A";
    case DiffStatus::OnlyB: return "only in B";
    case DiffStatus::ShapeChanged: return "shape changed";
    case DiffStatus::DtypeChanged: return "dtype changed";
    default: return "unreadable";
    }
}

std::string mdEscape(const std::string& s)
{
    std::string out;
    for (char c : s) {
        if (c == '|')
            out += "\\|";
        else if (c == '\n')
            out += ' ';
        else
            out += c;
    }
    return out;
}

} // namespace

RunReport buildRunReport(const std::string& path, const ReportOptions& options)
{
    RunReport r;
    r.path = path;
    CheckOptions check{options.audit, options.content, options.progress};
    r.check = checkPaths({path}, check);
    r.validations = options.validations;
    std::optional<DiscoveredRun> run = r.check.kind == "run" ? theRun(path) : std::nullopt;
    if (run) {
        r.timeline = buildTimeline(run->history, r.check);
        r.probes = listProbes(run->path);
    }
    if (r.check.cancelled)
        return r;
    std::optional<std::pair<std::string, std::string>> pair = options.pair;
    std::string why = "chosen";
    if (!pair && r.timeline) {
        for (const auto& p : r.timeline->resumes) {
            if (!p.before.empty() && !p.after.empty()) {
                pair = {p.before, p.after};
                why = "the two sides of the resume at step " + std::to_string(p.from)
                    + (p.to != p.from ? "-" + std::to_string(p.to) : std::string());
                break;
            }
        }
    }
    if (!pair && r.check.checkpoints.size() >= 2 && r.check.kind != "runs") {
        pair = {r.check.checkpoints[r.check.checkpoints.size() - 2], r.check.checkpoints.back()};
        why = "the latest two checkpoints";
    }
    if (pair) {
        try {
            r.pair = summarizePair(pair->first, pair->second, why, options);
        } catch (const std::exception& e) {
            r.check.findings.push_back({"report.pair-unreadable", Severity::Info, Component::Integrity,
                                        "the pair " + baseName(pair->first) + " / " + baseName(pair->second) + " could not be compared: " + e.what(),
                                        {}, {pair->first, pair->second}, "", "", ""});
        }
    }
    return r;
}

json runReportToJson(const RunReport& r)
{
    json out = {{"path", r.path}, {"kind", r.check.kind}, {"check", checkReportToJson(r.check)}};
    json states = json::array();
    for (const auto& s : r.check.states) {
        json parts = json::object();
        for (const auto& [k, v] : s.parts)
            parts[k] = v;
        states.push_back({{"path", s.path}, {"step", s.step ? json(*s.step) : json()}, {"parts", parts}});
    }
    out["states"] = states;
    out["timeline"] = r.timeline ? timelineToJson(*r.timeline) : json();
    if (r.pair) {
        json diffs = json::array();
        for (const auto& s : r.pair->states)
            diffs.push_back({{"component", s.component}, {"name", s.name}, {"a", s.a}, {"b", s.b}, {"status", s.status}});
        json tensors = json::array();
        for (const auto& t : r.pair->tensors)
            tensors.push_back({{"key", t.key}, {"status", statusName(t.status)}, {"rel_l2", std::isfinite(t.relL2) ? json(t.relL2) : json()},
                               {"max_abs_diff", t.maxAbsDiff}, {"n_diff", t.nDiff}, {"numel", t.numel}});
        const DiffCounts& c = r.pair->counts;
        out["pair"] = {{"a", r.pair->a}, {"b", r.pair->b}, {"why", r.pair->why}, {"states", diffs}, {"tensors", tensors},
                       {"counts", {{"equal", c.equal}, {"changed", c.changed}, {"only_a", c.onlyA}, {"only_b", c.onlyB},
                                   {"shape_changed", c.shapeChanged}, {"dtype_changed", c.dtypeChanged}}}};
    } else {
        out["pair"] = json();
    }
    json probes = json::array();
    for (const auto& p : r.probes)
        probes.push_back({{"checkpoint", p.checkpoint}, {"recorded_by", p.recordedBy}, {"updates", p.updates}});
    out["probes"] = probes;
    out["validations"] = r.validations;
    return out;
}

namespace {

void markdownFinding(std::ostringstream& md, const Finding& f)
{
    for (const auto& cp : f.checkpoints)
        md << "  - checkpoint: `" << baseName(cp) << "`\n";
    for (const auto& e : f.evidence)
        md << "  - " << e.what << ": " << e.value << (e.where.empty() ? "" : "  (`" + e.where + "`)") << "\n";
}

// Each error and warning group once: the first instance's evidence, how many more, the hint once.
void markdownLoudGroups(std::ostringstream& md, const std::vector<FindingGroup>& groups, const std::vector<Finding>& findings)
{
    bool any = false;
    for (const auto& g : groups) {
        if (g.severity == Severity::Info)
            continue;
        if (!any)
            md << "## Errors and warnings\n\n";
        any = true;
        const std::string where = groupWhere(g);
        md << "- **" << severityName(g.severity) << "** `" << g.rule << "` (" << componentName(g.component) << (where.empty() ? "" : "; " + where)
           << "): " << g.message << "\n";
        markdownFinding(md, findings[g.members.front()]);
        if (g.members.size() > 1)
            md << "  - and " << g.members.size() - 1 << " similar (`ckpt check --verbose` lists each)\n";
        if (!g.assumes.empty())
            md << "  - assumes: " << g.assumes << "\n";
        if (!g.hint.empty())
            md << "  - hint: " << g.hint << "\n";
    }
    if (any)
        md << "\n";
}

// What the files do not record or cannot decide: one line a group, folded.
void markdownInfoGroups(std::ostringstream& md, const std::vector<FindingGroup>& groups, std::size_t infos)
{
    std::size_t count = 0;
    for (const auto& g : groups)
        count += g.severity == Severity::Info;
    if (!count)
        return;
    md << "## Not recorded or not decidable from the files (info)\n\n<details><summary>" << count << " group(s), " << infos
       << " finding(s)</summary>\n\n";
    for (const auto& g : groups) {
        if (g.severity != Severity::Info)
            continue;
        const std::string where = groupWhere(g);
        md << "- `" << g.rule << "` (" << componentName(g.component) << (where.empty() ? "" : "; " + where) << "): " << g.message << "\n";
        if (!g.hint.empty())
            md << "  - hint: " << g.hint << "\n";
    }
    md << "\n</details>\n\n";
}

} // namespace

std::string runReportMarkdown(const RunReport& r)
{
    std::ostringstream md;
    const CheckReport& c = r.check;
    md << "# Checkpoint report: " << baseName(r.path) << "\n\n";
    md << "- path: `" << r.path << "`\n";
    md << "- " << c.kind << " of " << c.checkpoints.size() << " checkpoint(s); findings: " << c.count(Severity::Error) << " error(s), "
       << c.count(Severity::Warning) << " warning(s), " << c.count(Severity::Info) << " info\n";
    if (c.cancelled)
        md << "- **cancelled**: the report holds what was read before the cancel\n";
    md << "\n";

    // The order a reader needs: the verdict, the resume points, what is wrong, the timeline, then
    // what is not recorded, the states and the pair.
    const std::vector<FindingGroup> groups = groupFindings(c.findings, c.checkpoints);
    const Verdict verdict = verdictOf(c.findings, groups, c.checkpoints.size(), ruleCatalogue().size());
    md << "**Verdict:** " << verdict.headline << "\n\n";
    for (const auto& line : verdict.lines)
        md << "- " << mdEscape(line) << "\n";
    if (!verdict.lines.empty())
        md << "\n";

    if (r.timeline) {
        const Timeline& t = *r.timeline;
        md << "## Resume points\n\n";
        if (t.resumes.empty()) {
            md << "No resume point was found (logs, probes and consecutive checkpoints agree).\n\n";
        } else {
            md << "| resume at step | before | after | first differing part | evidence |\n|---|---|---|---|---|\n";
            for (const auto& p : t.resumes) {
                std::string evidence;
                for (const auto& e : p.evidence)
                    evidence += (evidence.empty() ? "" : "; ") + e;
                md << "| " << p.from << (p.to != p.from ? "-" + std::to_string(p.to) : std::string()) << " | "
                   << (p.before.empty() ? "-" : baseName(p.before)) << " | " << (p.after.empty() ? "-" : baseName(p.after)) << " | "
                   << (p.firstComponent.empty() ? "-" : p.firstComponent) << " | " << mdEscape(evidence) << " |\n";
            }
            md << "\n";
        }
    }

    markdownLoudGroups(md, groups, c.findings);

    if (r.timeline) {
        const Timeline& t = *r.timeline;
        md << "## Timeline\n\n";
        if (t.firstStep && t.lastStep)
            md << "Steps " << *t.firstStep << " to " << *t.lastStep << "; logged series:";
        for (const auto& [name, points] : t.logged)
            md << " " << name << " (" << points.size() << ")";
        md << "\n\n";
        if (!t.strips.empty()) {
            md << "| part | per checkpoint (step: value) | breaks at |\n|---|---|---|\n";
            for (const auto& s : t.strips) {
                std::string values, breaks;
                for (const auto& [step, v] : s.points)
                    values += (values.empty() ? "" : ", ") + std::to_string(step) + ": " + figure(v, 6);
                if (s.points.empty() && !s.reference.empty())
                    values = s.referenceName + ", " + std::to_string(s.reference.size()) + " steps";
                for (int64_t b : s.breaks)
                    breaks += (breaks.empty() ? "" : ", ") + std::to_string(b);
                md << "| " << s.name << " | " << (values.empty() ? "-" : values) << " | " << (breaks.empty() ? "-" : breaks) << " |\n";
            }
            md << "\n";
        }
    }

    markdownInfoGroups(md, groups, c.count(Severity::Info));

    md << "## S_t per checkpoint\n\n";
    for (const auto& s : c.states) {
        md << "### " << baseName(s.path) << (s.step ? " (step " + std::to_string(*s.step) + ")" : std::string()) << "\n\n";
        md << "| part | |\n|---|---|\n";
        for (const auto& [k, v] : s.parts)
            md << "| " << k << " | " << mdEscape(v) << " |\n";
        md << "\n";
    }

    if (r.pair) {
        const PairSummary& p = *r.pair;
        md << "## Pair: " << baseName(p.a) << " → " << baseName(p.b) << "\n\n" << "Compared: " << p.why << ". Tensors: "
           << p.counts.equal << " equal, " << p.counts.changed << " changed, " << p.counts.onlyA << " only in A, " << p.counts.onlyB
           << " only in B.\n\n";
        if (!p.states.empty()) {
            md << "| part | field | A | B | |\n|---|---|---|---|---|\n";
            for (const auto& s : p.states)
                md << "| " << s.component << " | " << mdEscape(s.name) << " | " << mdEscape(s.a) << " | " << mdEscape(s.b) << " | " << s.status
                   << " |\n";
            md << "\n";
        }
        if (!p.tensors.empty()) {
            md << "Tensors that changed most:\n\n| tensor | status | relative L2 | max abs diff |\n|---|---|---|---|\n";
            for (const auto& t : p.tensors)
                md << "| `" << t.key << "` | " << statusName(t.status) << " | "
                   << (std::isfinite(t.relL2) && t.status == DiffStatus::Changed ? figure(t.relL2, 4) : std::string("-")) << " | "
                   << (t.status == DiffStatus::Changed ? figure(t.maxAbsDiff, 4) : std::string("-")) << " |\n";
            md << "\n";
        }
    }

    md << "## Resume validation\n\n";
    if (r.probes.empty() && r.validations.empty())
        md << "No probe was recorded (ckpt_writer's `writer.probe()`), so no update can be replayed.\n\n";
    for (const auto& p : r.probes)
        md << "- probe after `" << p.checkpoint << "`: recorded by " << p.recordedBy << ", " << p.updates
           << " update(s); run `ckpt validate` on it\n";
    for (const auto& v : r.validations) {
        md << "- validation of `" << baseName(v.value("checkpoint", std::string("?"))) << "`: **" << v.value("verdict", std::string("?")) << "**";
        if (v.value("first_difference", json()).is_string())
            md << " (first difference: " << v["first_difference"].get<std::string>() << ")";
        md << "\n";
    }
    if (!r.probes.empty() || !r.validations.empty())
        md << "\n";
    return md.str();
}

} // namespace ckpt
