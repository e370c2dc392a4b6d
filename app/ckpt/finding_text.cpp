// SPDX-License-Identifier: MIT
#include "finding_text.h"

#include "ckpt/findings/finding_groups.h"

#include <ostream>

namespace {

std::string severityColumn(ckpt::Severity s)
{
    std::string sev = ckpt::severityName(s);
    sev.resize(8, ' ');
    return sev;
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
    const std::string where = ckpt::groupWhere(g);
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

void printVerdict(std::ostream& out, const ckpt::Verdict& verdict)
{
    out << "Verdict: " << verdict.headline << "\n";
    for (const auto& line : verdict.lines)
        out << "  " << line << "\n";
}

} // namespace

void printFindings(std::ostream& out, const std::vector<ckpt::Finding>& findings, const FindingTextOptions& options)
{
    std::size_t counts[3] = {0, 0, 0};
    for (const auto& f : findings)
        ++counts[static_cast<int>(f.severity)];
    const std::vector<ckpt::FindingGroup> groups = ckpt::groupFindings(findings, options.checkpointOrder);
    printVerdict(out, ckpt::verdictOf(findings, groups, options.checkpoints, options.rules));

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
        const std::string where = ckpt::groupWhere(g);
        out << "  " << g.rule << "  [" << ckpt::componentName(g.component) << (where.empty() ? "" : "; " + where) << "]\n"
            << "      " << g.message << "\n";
    }
    out << "\n" << counts[2] << " error(s), " << counts[1] << " warning(s), " << counts[0] << " info\n";
}
