// SPDX-License-Identifier: MIT
// ckpt report PATH [--format md|json] [-o FILE] [--pair A B] [--no-audit] [--no-content]: the report to
// attach to a bug (core/report/run_report.h): findings by part, S_t per checkpoint, the timeline's
// resume points and strips, one pair compared, the probes. Exit 0 written, 2 unreadable. Written to
// FILE with -o (a path the user names; nothing is written beside the checkpoints) or to stdout.
#include "commands.h"
#include "progress_line.h"

#include "ckpt/report/json_export.h"
#include "ckpt/report/run_report.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <unistd.h>

int runReport(const CliArgs& args)
{
    if (args.positional.size() != 1 && args.positional.size() != 3)
        return failWith("usage: ckpt report PATH [--format md|json] [-o FILE] [--pair A B] [--no-audit] [--no-content]");
    const std::string format = args.option("--format").value_or("md");
    if (format != "md" && format != "json")
        return failWith("--format takes md or json, not '" + format + "'");
    ckpt::ReportOptions options;
    options.audit = !args.has("--no-audit");
    options.content = !args.has("--no-content");
    if (args.has("--pair")) {
        if (args.positional.size() != 3)
            return failWith("--pair takes two checkpoints after PATH: ckpt report RUN --pair A B");
        options.pair = {args.positional[1], args.positional[2]};
    } else if (args.positional.size() != 1) {
        return failWith("ckpt report takes one PATH (add --pair A B to choose the pair compared)");
    }
    ProgressLine line("ckpt report");
    options.progress = line.checkCallback();
    ckpt::RunReport report;
    try {
        report = ckpt::buildRunReport(args.positional[0], options);
    } catch (const std::exception& e) {
        line.clear();
        return failWith(e.what());
    }
    line.clear();
    const std::string text = format == "json" ? ckpt::dumpJson(ckpt::runReportToJson(report)) + "\n" : ckpt::runReportMarkdown(report);
    if (const auto file = args.option("-o")) {
        std::ofstream out(*file, std::ios::binary | std::ios::trunc);
        if (!out || !(out << text) || !out.flush())
            return failWith(*file + ": cannot write the report");
        return kExitOk;
    }
    std::cout << text;
    return kExitOk;
}
