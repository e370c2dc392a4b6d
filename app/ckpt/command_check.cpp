// SPDX-License-Identifier: MIT
// ckpt check PATH [PATH2] [--json]: the rule catalogue (core/rules) over a file, a checkpoint
// directory, a run directory or a pair. Exit 0 without warnings or errors, 1 with, 2 unreadable.
#include "commands.h"
#include "finding_text.h"

#include "core/json_export.h"
#include "core/rules/check.h"

#include <iostream>

int runCheck(const CliArgs& args)
{
    if (args.positional.empty() || args.positional.size() > 2)
        return failWith("usage: ckpt check PATH [PATH2] [--json] [--no-audit] [--no-content]");
    ckpt::CheckOptions options;
    options.audit = !args.has("--no-audit");
    options.content = !args.has("--no-content");
    ckpt::CheckReport report;
    try {
        report = ckpt::checkPaths(args.positional, options);
    } catch (const std::exception& e) {
        return failWith(e.what());
    }
    if (args.has("--json")) {
        std::cout << ckpt::dumpJson(ckpt::checkReportToJson(report)) << '\n';
    } else {
        std::cout << "check of " << report.kind << " " << report.inputs.front() << (report.inputs.size() > 1 ? " -> " + report.inputs[1] : "")
                  << ": " << report.checkpoints.size() << " checkpoint(s)\n";
        printFindingsByComponent(std::cout, report.findings);
        for (const auto& d : report.discontinuities)
            std::cout << "discontinuity: " << d.series << " at step " << d.step << " (" << d.rule << ", " << d.checkpoint << ")\n";
    }
    return report.hasProblems() ? kExitFindings : kExitOk;
}
