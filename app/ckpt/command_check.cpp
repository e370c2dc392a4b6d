// SPDX-License-Identifier: MIT
// ckpt check PATH [PATH2] [--json]: the rule catalogue (core/rules) over a file, a checkpoint
// directory, a run directory or a pair. Exit 0 without warnings or errors, 1 with, 2 unreadable.
#include "commands.h"
#include "progress_line.h"
#include "finding_text.h"

#include "ckpt/report/json_export.h"
#include "ckpt/rules/check.h"
#include "ckpt/rules/rule_catalogue.h"
#include "text_format.h"

#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace {

int listRules(bool json)
{
    if (json) {
        nlohmann::json rules = nlohmann::json::array();
        for (const auto& r : ckpt::ruleCatalogue())
            rules.push_back({{"rule", r.id}, {"severity", ckpt::severityName(r.severity)}, {"component", ckpt::componentName(r.component)},
                             {"scope", ckpt::scopeName(r.scope)}, {"guide", r.guide}, {"description", r.description}});
        std::cout << ckpt::dumpJson({{"rules", rules}}) << '\n';
        return kExitOk;
    }
    TextTable table({"RULE", "SEVERITY", "COMPONENT", "SCOPE", "GUIDE", "CHECKS"});
    for (const auto& r : ckpt::ruleCatalogue())
        table.addRow({std::string(r.id), ckpt::severityName(r.severity), ckpt::componentName(r.component), ckpt::scopeName(r.scope),
                      std::string(r.guide), std::string(r.description)});
    table.print(std::cout);
    return kExitOk;
}

} // namespace

int runCheck(const CliArgs& args)
{
    if (args.has("--list-rules"))
        return listRules(args.has("--json"));
    if (args.positional.empty() || args.positional.size() > 2)
        return failWith("usage: ckpt check PATH [PATH2] [--json] [--verbose] [--no-audit] [--no-content]");
    ckpt::CheckOptions options;
    options.audit = !args.has("--no-audit");
    options.content = !args.has("--no-content");
    ProgressLine line("ckpt check");
    options.progress = line.checkCallback();
    ckpt::CheckReport report;
    try {
        report = ckpt::checkPaths(args.positional, options);
    } catch (const std::exception& e) {
        line.clear();
        return failWith(e.what());
    }
    line.clear();
    if (args.has("--json")) {
        std::cout << ckpt::dumpJson(ckpt::checkReportToJson(report)) << '\n';
    } else {
        std::cout << "check of " << report.kind << " " << report.inputs.front() << (report.inputs.size() > 1 ? " -> " + report.inputs[1] : "")
                  << ": " << report.checkpoints.size() << " checkpoint(s)\n\n";
        FindingTextOptions text;
        text.verbose = args.has("--verbose");
        text.checkpointOrder = report.checkpoints;
        text.checkpoints = report.checkpoints.size();
        text.rules = ckpt::ruleCatalogue().size();
        printFindings(std::cout, report.findings, text);
        for (const auto& d : report.discontinuities)
            std::cout << "discontinuity: " << d.series << " at step " << d.step << " (" << d.rule << ", " << d.checkpoint << ")\n";
    }
    return report.hasProblems() ? kExitFindings : kExitOk;
}
