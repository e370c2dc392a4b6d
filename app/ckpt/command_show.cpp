// SPDX-License-Identifier: MIT
#include "commands.h"
#include "text_format.h"

#include "finding_text.h"

#include "ckpt/report/json_export.h"
#include "ckpt/report/state_json.h"
#include "ckpt/rules/check.h"
#include "ckpt/state/run_discovery.h"

#include <iostream>
#include <optional>
#include <sstream>

namespace {

using namespace ckpt;

void printFields(const char* title, const std::vector<StateField>& fields)
{
    if (fields.empty())
        return;
    std::cout << title << "\n";
    TextTable table({"  NAME", "VALUE", "FROM"});
    for (const auto& f : fields)
        table.addRow({"  " + f.name, f.value, f.from.file + (f.from.key.empty() ? "" : ": " + formatKeyPath(f.from.key))});
    table.print(std::cout);
}

void printState(const TrainingState& s)
{
    std::cout << s.path << "\nlayout: " << layoutName(s.layout.layout)
              << (s.layout.recognisedBy.empty() ? "" : ", by " + s.layout.recognisedBy)
              << (s.layout.complete ? "" : "  (INCOMPLETE: " + s.layout.incompleteReason + ")") << "\n";
    std::cout << "global step: " << (s.globalStep ? std::to_string(*s.globalStep) : std::string("unknown")) << "\n\n";
    if (s.model) {
        int64_t numel = 0;
        for (const auto& p : s.model->parameters)
            numel += p.numel;
        std::cout << "model (W): " << s.model->parameters.size() << " tensors, " << numel << " elements  ["
                  << s.model->from.file << "]\n";
    } else {
        std::cout << "model (W): not in this checkpoint\n";
    }
    if (s.optimizer) {
        const auto& o = *s.optimizer;
        std::cout << "optimizer (O): " << o.type << ", " << o.groups.size() << " param group(s), " << o.paramState.size()
                  << " parameters with state, names " << o.nameMapping << "  [" << o.from.file << "]\n";
        for (std::size_t i = 0; i < o.groups.size(); ++i) {
            std::cout << "  group " << i << ":";
            for (const auto& hp : o.groups[i].hyperparameters)
                std::cout << " " << hp.name << "=" << hp.value;
            std::cout << "\n";
        }
        TextTable table({"  INDEX", "PARAMETER", "STEP", "MOMENTS"});
        for (const auto& ps : o.paramState) {
            std::string moments;
            for (const auto& m : ps.moments)
                moments += (moments.empty() ? "" : ", ") + m.name + " " + formatShape(m.shape);
            table.addRow({"  " + ps.index, ps.name.empty() ? "?" : ps.name, ps.step ? std::to_string(static_cast<int64_t>(*ps.step)) : "-",
                          moments});
        }
        if (!o.paramState.empty()) // SGD without momentum, or a pickled optimizer object, keeps no per-parameter state
            table.print(std::cout);
    } else {
        std::cout << "optimizer (O): not in this checkpoint\n";
    }
    if (s.scheduler) {
        const auto& l = s.scheduler->schedule;
        std::cout << "scheduler (L): " << l.kind << ", last_epoch " << l.lastEpoch;
        if (!l.lastLr.empty())
            std::cout << ", last lr " << l.lastLr.front();
        std::cout << (l.recomputable ? "" : " (formula unknown: " + l.why + ")") << "  [" << s.scheduler->from.file << "]\n";
    } else {
        std::cout << "scheduler (L): not in this checkpoint\n";
    }
    if (s.scaler) {
        auto number = [](std::optional<double> v) {
            if (!v)
                return std::string("?");
            std::ostringstream os;
            os << *v;
            return os.str();
        };
        std::cout << "scaler (A): "
                  << (s.scaler->enabled ? "scale " + number(s.scaler->scale) + ", growth tracker "
                                              + (s.scaler->growthTracker ? std::to_string(*s.scaler->growthTracker) : "?")
                                              + ", growth interval "
                                              + (s.scaler->growthInterval ? std::to_string(*s.scaler->growthInterval) : "?")
                                        : "disabled (empty state)")
                  << "  [" << s.scaler->from.file << "]\n";
    } else {
        std::cout << "scaler (A): not in this checkpoint\n";
    }
    if (s.rng) {
        std::cout << "rng (R):\n";
        TextTable table({"  GENERATOR", "RANK", "FINGERPRINT", "STATE", "FROM"});
        for (const auto& g : s.rng->generators)
            table.addRow({std::string("  ") + rngKindName(g.state.kind), g.rank < 0 ? "-" : std::to_string(g.rank),
                          g.state.fingerprint, g.state.valid ? "ok" : g.state.problem, g.file + ": " + formatKeyPath(g.state.key)});
        table.print(std::cout);
    } else {
        std::cout << "rng (R): not in this checkpoint\n";
    }
    std::cout << "\n";
    printFields("data cursor (D):", s.data);
    printFields("progress (C):", s.progress);
    printFields("environment (E):", s.environment);
    for (const auto& w : s.warnings)
        std::cout << "warning: " << w << "\n";
}

} // namespace

int runShow(const CliArgs& args)
{
    if (args.positional.size() != 1)
        return failWith("usage: ckpt show PATH [--json]");
    // The state and the checkpoint's own findings from one read (no hashing, no tensor bytes:
    // `ckpt check` does the full audit); --json needs the state only.
    const bool json = args.has("--json");
    auto read = [&] {
        if (!json)
            return gatherFacts(args.positional[0], {false, false});
        CheckpointFacts stateOnly;
        stateOnly.state = readTrainingState(args.positional[0]);
        return stateOnly;
    };
    std::optional<CheckpointFacts> gathered;
    try {
        gathered.emplace(read());
    } catch (const std::exception& e) {
        return failWith(e.what());
    }
    const CheckpointFacts& facts = *gathered;
    const TrainingState& state = facts.state;
    if (!state.model && !state.optimizer && !state.scheduler && !state.rng && state.progress.empty() && !state.warnings.empty())
        return failWith(state.warnings.front());
    if (json) {
        std::cout << dumpJson(trainingStateToJson(state)) << '\n';
        return kExitOk;
    }
    printState(state);
    try {
        std::vector<Finding> findings = checkCheckpoint(facts);
        sortFindings(findings);
        std::cout << "\nfindings" << (findings.empty() ? ": " : ":\n");
        printFindings(std::cout, findings, {});
    } catch (const std::exception& e) {
        std::cout << "\nfindings: not available (" << e.what() << ")\n";
    }
    return kExitOk;
}

// One table per run the path holds, as the one discovery decides it for every command and the GUI:
// a checkpoint folder or file is a run of one, a folder of runs lists each.
int runRun(const CliArgs& args)
{
    if (args.positional.size() != 1)
        return failWith("usage: ckpt run PATH [--json]");
    std::vector<DiscoveredRun> runs;
    try {
        runs = discoverRuns(args.positional[0]);
    } catch (const std::exception& e) {
        return failWith(e.what());
    }
    if (args.has("--json")) {
        if (runs.size() == 1) {
            std::cout << dumpJson(runHistoryToJson(runs.front().history)) << '\n';
        } else {
            nlohmann::json all = nlohmann::json::array();
            for (const auto& run : runs)
                all.push_back(runHistoryToJson(run.history));
            std::cout << dumpJson(nlohmann::json{{"path", args.positional[0]}, {"runs", all}}) << '\n';
        }
        return kExitOk;
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const RunHistory& history = runs[i].history;
        if (runs.size() > 1)
            std::cout << (i ? "\n" : "") << "run " << runs[i].path << "\n";
        TextTable table({"STEP", "CHECKPOINT", "LAYOUT", "MARKS"});
        for (const auto& c : history.checkpoints) {
            std::string marks;
            if (c.latest)
                marks += "latest ";
            if (c.best)
                marks += "best ";
            if (!c.complete)
                marks += "INCOMPLETE (" + c.incompleteReason + ")";
            table.addRow({c.step ? std::to_string(*c.step) : "?", c.path, layoutName(c.layout), marks});
        }
        table.print(std::cout);
        std::cout << "\n" << history.checkpoints.size() << (history.checkpoints.size() == 1 ? " checkpoint" : " checkpoints");
        if (runs[i].singleCheckpoint)
            std::cout << " (the path is one checkpoint)";
        if (!history.series.empty()) {
            std::cout << "; metric series:";
            for (const auto& [name, points] : history.series)
                std::cout << " " << name << " (" << points.size() << ")";
        }
        std::cout << "\n";
        for (const auto& w : history.warnings)
            std::cout << "warning: " << w << "\n";
    }
    if (runs.size() > 1)
        std::cout << "\n" << runs.size() << " runs\n";
    return kExitOk;
}
