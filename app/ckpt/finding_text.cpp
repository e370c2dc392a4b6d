// SPDX-License-Identifier: MIT
#include "finding_text.h"

#include "ckpt/findings/finding_groups.h"

#include <filesystem>
#include <ostream>

namespace {

std::string shortName(const std::string& path)
{
    const std::string name = std::filesystem::path(path).filename().string();
    return name.empty() ? path : name;
}

std::string severityColumn(ckpt::Severity s)
{
    std::string sev = ckpt::severityName(s);
    sev.resize(8, ' ');
    return sev;
}

// "4 checkpoints: epoch=0-step=8.ckpt ... epoch=3-step=32.ckpt", "1 checkpoint: step-15", or the
// count of findings where they concern no checkpoint.
std::string whereText(const ckpt::FindingGroup& g)
{
    const std::size_t n = g.checkpoints.size();
    if (n == 0)
        return g.members.size() == 1 ? std::string() : std::to_string(g.members.size()) + " times";
    std::string s = std::to_string(n) + (n == 1 ? " checkpoint: " : " checkpoints: ") + shortName(g.checkpoints.front());
    if (n > 1)
        s += (n > 2 ? " ... " : ", ") + shortName(g.checkpoints.back());
    return s;
}

void printEvidence(std::ostream& out, const ckpt::Finding& f)
{
    for (const auto& c : f.checkpoints)
        out << "         checkpoint: " << c << "\n";
    if (!f.file.empty())
        out << "         file: " << f.file << "\n";
    for (const auto& e : f.evidence)
        out << "         " << e.what << ": " << e.value << "  (" << e.where << ")\n";
}

void printGroupInFull(std::ostream& out, const ckpt::FindingGroup& g, const std::vector<ckpt::Finding>& findings, bool everyMember)
{
    const std::string where = whereText(g);
    out << severityColumn(g.severity) << " " << g.rule << "  [" << ckpt::componentName(g.component) << (where.empty() ? "" : "; " + where) << "]\n";
    const std::size_t shown = everyMember ? g.members.size() : 1;
    for (std::size_t i = 0; i < shown; ++i) {
        const ckpt::Finding& f = findings[g.members[i]];
        out << "         " << f.message << "\n";
        printEvidence(out, f);
    }
    if (shown < g.members.size())
        out << "         and " << g.members.size() - shown << " similar (ckpt check --verbose lists each)\n";
    if (!g.assumes.empty())
        out << "         assumes: " << g.assumes << "\n";
    if (!g.hint.empty())
        out << "         hint: " << g.hint << "\n";
}

void printVerdict(std::ostream& out, const std::vector<ckpt::FindingGroup>& groups, const std::size_t counts[3], const FindingTextOptions& options)
{
    if (counts[2] + counts[1] == 0) {
        out << "Verdict: nothing inconsistent found";
        if (options.rules && options.checkpoints)
            out << " (" << options.rules << " rules over " << options.checkpoints << " checkpoint" << (options.checkpoints == 1 ? "" : "s") << ")";
        if (counts[0])
            out << "; " << counts[0] << " thing(s) the files do not record or cannot decide (info), in " << groups.size() << " group(s) below";
        out << ".\n";
        return;
    }
    out << "Verdict: " << counts[2] << " error(s) and " << counts[1] << " warning(s); in the order to look at them:\n";
    for (const auto& g : groups) {
        if (g.severity == ckpt::Severity::Info)
            break;
        const std::string where = whereText(g);
        out << "  " << severityColumn(g.severity) << g.rule << (where.empty() ? "" : "  (" + where + ")") << ": " << g.message << "\n";
    }
}

} // namespace

void printFindings(std::ostream& out, const std::vector<ckpt::Finding>& findings, const FindingTextOptions& options)
{
    std::size_t counts[3] = {0, 0, 0};
    for (const auto& f : findings)
        ++counts[static_cast<int>(f.severity)];
    const std::vector<ckpt::FindingGroup> groups = ckpt::groupFindings(findings, options.checkpointOrder);
    printVerdict(out, groups, counts, options);

    bool infoHeader = false;
    for (const auto& g : groups) {
        if (g.severity != ckpt::Severity::Info || options.verbose) {
            out << "\n";
            printGroupInFull(out, g, findings, options.verbose);
            continue;
        }
        if (!infoHeader) {
            out << "\nNot recorded or not decidable from the files (info; --verbose for evidence and hints):\n";
            infoHeader = true;
        }
        const std::string where = whereText(g);
        out << "  " << g.rule << "  [" << ckpt::componentName(g.component) << (where.empty() ? "" : "; " + where) << "]\n"
            << "      " << g.message << "\n";
    }
    out << "\n" << counts[2] << " error(s), " << counts[1] << " warning(s), " << counts[0] << " info\n";
}
