// SPDX-License-Identifier: MIT
// `ckpt diff A B`: two checkpoints compared part by part.
#include "commands.h"
#include "progress_line.h"
#include "text_format.h"

#include "ckpt/compare/checkpoint_diff.h"
#include "ckpt/report/json_export.h"
#include "ckpt/report/stats_json.h"

#include <cstdio>
#include <iostream>

namespace {

using namespace ckpt;

std::string figure(double v) { return ckpt::figure(v, 4); }

void printDiff(const CheckpointDiff& d)
{
    std::cout << "A: " << d.pathA << (d.prefixA.empty() ? "" : "  (stripped '" + d.prefixA + "')") << "\n";
    std::cout << "B: " << d.pathB << (d.prefixB.empty() ? "" : "  (stripped '" + d.prefixB + "')") << "\n\n";
    const DiffCounts& c = d.counts;
    std::cout << "tensors: " << c.equal << " equal, " << c.changed << " changed, " << c.onlyA << " only in A, " << c.onlyB
              << " only in B, " << c.shapeChanged << " shape changed, " << c.dtypeChanged << " dtype changed";
    if (c.unreadable)
        std::cout << ", " << c.unreadable << " unreadable";
    std::cout << "\n";
    TextTable table({"KEY", "STATUS", "MAX|A-B|", "REL_L2", "COSINE", "N_DIFF", "NOTE"});
    for (const auto& t : d.tensors) {
        if (t.status == DiffStatus::Equal)
            continue;
        const bool compared = t.status == DiffStatus::Changed;
        std::string note = t.problem;
        if (t.status == DiffStatus::ShapeChanged)
            note = formatShape(t.shapeA) + " -> " + formatShape(t.shapeB);
        if (t.status == DiffStatus::DtypeChanged)
            note = t.dtypeA + " -> " + t.dtypeB;
        table.addRow({t.key, diffStatusName(t.status), compared ? figure(t.maxAbsDiff) : "", compared ? figure(t.relL2) : "",
                      compared ? figure(t.cosine) : "", compared ? std::to_string(t.nDiff) + "/" + std::to_string(t.numel) : "", note});
    }
    table.print(std::cout);
    std::cout << "\nstate differences:\n";
    TextTable states({"  PART", "NAME", "STATUS", "A", "B"});
    std::size_t same = 0;
    for (const auto& s : d.states) {
        if (s.status == "same") {
            ++same;
            continue;
        }
        states.addRow({"  " + s.component, s.name, s.status, s.a, s.b});
    }
    states.print(std::cout);
    std::cout << "(" << same << " state fields the same)\n";
    if (d.cancelled)
        std::cout << "cancelled: tensor comparison incomplete\n";
    for (const auto& w : d.warnings)
        std::cout << "warning: " << w << "\n";
}

} // namespace

int runDiff(const CliArgs& args)
{
    if (args.positional.size() != 2)
        return failWith("usage: ckpt diff A B [--json]");
    ProgressLine progress("diff");
    StatsOptions options;
    options.progress = progress.callback();
    CheckpointDiff d;
    try {
        d = diffCheckpoints(args.positional[0], args.positional[1], options);
    } catch (const std::exception& e) {
        return failWith(e.what());
    }
    progress.clear();
    if (args.has("--json"))
        std::cout << dumpJson(checkpointDiffToJson(d)) << '\n';
    else
        printDiff(d);
    return kExitOk;
}
