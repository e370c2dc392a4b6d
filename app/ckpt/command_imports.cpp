// SPDX-License-Identifier: MIT
#include "commands.h"
#include "text_format.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/report/json_export.h"

#include <algorithm>
#include <iostream>

int runImports(const CliArgs& args)
{
    if (args.positional.size() != 1)
        return failWith("usage: ckpt imports FILE [--json] [--strict]");
    const std::string& path = args.positional[0];
    ckpt::ImportsReport report;
    try {
        report = ckpt::scanImports(path, args.has("--strict"));
    } catch (const std::exception& e) {
        return failWith(e.what());
    }
    // A broken pickle that names nothing dangerous cannot be judged: fail closed with exit 2,
    // after listing every global seen, and one line on stderr that says so.
    const int code = report.anyDangerous() ? kExitFindings : report.malformed ? kExitUnreadable : kExitOk;
    if (report.malformed) {
        std::string why;
        for (const auto& n : report.notes) {
            if (n.find("malformed") != std::string::npos || n.find("cannot") != std::string::npos) {
                why = n;
                break;
            }
        }
        std::cerr << "ckpt: " << path << ": could not be fully analysed" << (why.empty() ? "" : ": " + why)
                  << (code == kExitUnreadable ? "; nothing dangerous was seen in what could be read, which proves nothing"
                                              : "") << "\n";
    }
    if (args.has("--json")) {
        std::cout << ckpt::dumpJson(ckpt::importsReportToJson(path, report)) << '\n';
        return code;
    }
    auto entries = report.entries;
    std::stable_sort(entries.begin(), entries.end(),
                     [](const ckpt::ImportEntry& a, const ckpt::ImportEntry& b) { return a.safety > b.safety; });
    TextTable table({"SAFETY", "GLOBAL", "COUNT", "RECORD", "WHY"});
    for (const auto& e : entries)
        table.addRow({ckpt::safetyName(e.safety), e.path(), std::to_string(e.count), e.record, e.reason});
    table.print(std::cout);
    for (const auto& n : report.notes)
        std::cout << "note: " << n << "\n";
    std::cout << "\n" << report.count(ckpt::ImportSafety::Dangerous) << " dangerous, "
              << report.count(ckpt::ImportSafety::Unknown) << " unknown, " << report.count(ckpt::ImportSafety::Safe)
              << " safe globals"
              << (report.structuralDanger && report.count(ckpt::ImportSafety::Dangerous) == 0 ? "; the notes above are red flags" : "")
              << (report.anyDangerous() ? ": DO NOT load this file with torch.load(weights_only=False)"
                  : report.malformed   ? ": NOT fully analysed, do not trust it"
                                       : "")
              << "\n";
    return code;
}
