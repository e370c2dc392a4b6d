// SPDX-License-Identifier: MIT
// `ckpt tensors PATH --stats`: per-tensor statistics of a file, or of a checkpoint directory
// with its DCP chunk maps, merged ZeRO partitions and per-rank replica checks.
#include "commands.h"
#include "progress_line.h"
#include "text_format.h"

#include "ckpt/report/json_export.h"
#include "ckpt/report/stats_json.h"
#include "ckpt/stats/checkpoint_stats.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace {

using namespace ckpt;

std::string figure(double v) { return ckpt::figure(v, 6); }

std::string specials(const TensorStats& s)
{
    std::string out;
    if (s.nan)
        out += std::to_string(s.nan) + " nan ";
    if (s.posinf)
        out += std::to_string(s.posinf) + " +inf ";
    if (s.neginf)
        out += std::to_string(s.neginf) + " -inf ";
    return out.empty() ? "-" : out.substr(0, out.size() - 1);
}

void addStatsRow(TextTable& table, const std::string& key, const TensorStats& s)
{
    if (!s.ok()) {
        table.addRow({key, s.dtype, "", "", "", "", "", "", "", s.problem});
        return;
    }
    table.addRow({key, s.dtype + (s.complexMagnitude ? " |z|" : ""), figure(s.min), figure(s.max), figure(s.mean), figure(s.std),
                  figure(s.absmax), std::to_string(s.zeros), specials(s), ""});
}

TextTable statsTable()
{
    return TextTable({"KEY", "DTYPE", "MIN", "MAX", "MEAN", "STD", "ABSMAX", "ZEROS", "NAN/INF", "NOTE"});
}

void printFileStats(const FileStats& fs)
{
    TextTable table = statsTable();
    for (const auto& e : fs.tensors)
        addStatsRow(table, formatKeyPath(e.key) + (e.alias ? " (alias)" : ""), e.stats);
    table.print(std::cout);
}

// --json writes each tensor's statistics as soon as they and the earlier tensors' are computed
// (computeCheckpointStats' stream),
// the same bytes as one document built in memory, whose keys nlohmann sorts: cancelled, files,
// layout, path, replicas, sharded, warnings. A frontier model's document held ~15 KB per tensor.
// "cancelled" comes first, before it is known: it is false here, as this command's progress
// callback never cancels.
int directoryStatsJson(const CliArgs& args, const StatsOptions& options)
{
    bool opened = false, first = true;
    auto open = [&] {
        if (!opened)
            std::cout << "{\"cancelled\":false,\"files\":[";
        opened = true;
    };
    const CheckpointFile* current = nullptr;
    StatsStream stream;
    stream.beginFile = [&](const CheckpointFile& file, const FileStats& header) {
        open();
        std::cout << (first ? "" : ",");
        first = false;
        current = &file;
        writeTensorsReportBegin(std::cout, file,
                                {.rank = header.rank < 0 ? nlohmann::json(nullptr) : nlohmann::json(header.rank), .role = header.role});
    };
    stream.entry = [&](std::size_t index, TensorStatsEntry&& entry) {
        writeTensorsReportEntry(std::cout, *current, index, &entry.stats);
    };
    stream.endFile = [&](const CheckpointFile& file) { writeTensorsReportEnd(std::cout, file); };
    const CheckpointStats cs = computeCheckpointStats(args.positional[0], options, stream);
    open();
    nlohmann::json sharded = nlohmann::json::array(), replicas = nlohmann::json::array();
    for (const auto& s : cs.sharded)
        sharded.push_back(shardedStatsToJson(s));
    for (const auto& r : cs.replicas)
        replicas.push_back(replicaGroupToJson(r));
    std::cout << "],\"layout\":" << dumpJson(nlohmann::json(cs.layout)) << ",\"path\":" << dumpJson(nlohmann::json(cs.path))
              << ",\"replicas\":" << dumpJson(replicas) << ",\"sharded\":" << dumpJson(sharded)
              << ",\"warnings\":" << dumpJson(nlohmann::json(cs.warnings)) << "}\n";
    return kExitOk;
}

int directoryStats(const CliArgs& args, const StatsOptions& options)
{
    if (args.has("--json"))
        return directoryStatsJson(args, options);
    const CheckpointStats cs = computeCheckpointStats(args.positional[0], options);
    std::cout << cs.path << "  (layout " << cs.layout << ")\n";
    for (const auto& fs : cs.files) {
        std::cout << "\n" << fs.path << (fs.rank >= 0 ? "  (rank " + std::to_string(fs.rank) + ")" : "") << "\n";
        printFileStats(fs);
    }
    for (const auto& s : cs.sharded) {
        std::cout << "\n" << s.key << "  " << s.dtype << " " << formatShape(s.shape) << "  " << s.kind << "\n";
        TextTable table = statsTable();
        for (const auto& shard : s.shards)
            addStatsRow(table, "  rank " + std::to_string(shard.rank) + " @" + formatShape(shard.offsets) + " " + formatShape(shard.sizes), shard.stats);
        addStatsRow(table, "  merged", s.merged);
        table.print(std::cout);
    }
    for (const auto& r : cs.replicas) {
        if (r.identical)
            continue;
        std::cout << "\nreplicas differ: " << r.key << "\n";
        for (const auto& d : r.vsFirst)
            std::cout << "  rank " << r.ranks.front() << " vs " << d.fileB << ": " << diffStatusName(d.status) << ", " << d.nDiff
                      << " elements differ, max |a-b| " << figure(d.maxAbsDiff) << "\n";
    }
    std::size_t identical = 0;
    for (const auto& r : cs.replicas)
        identical += r.identical;
    if (!cs.replicas.empty())
        std::cout << "\n" << identical << " of " << cs.replicas.size() << " replicated tensors identical on every rank\n";
    for (const auto& w : cs.warnings)
        std::cout << "warning: " << w << "\n";
    return cs.cancelled ? kExitUnreadable : kExitOk;
}

} // namespace

int runTensorStats(const CliArgs& args)
{
    ProgressLine progress("stats");
    StatsOptions options;
    options.progress = progress.callback();
    options.exactHistograms = args.has("--exact-hist");
    // A folder, or a .nemo archive (a tar of files, read member by member like a folder's).
    if (std::filesystem::is_directory(args.positional[0]) || args.positional[0].ends_with(".nemo"))
        return directoryStats(args, options);
    std::unique_ptr<CheckpointFile> file;
    try {
        file = CheckpointFile::open(args.positional[0]);
    } catch (const std::exception& e) {
        return failWith(e.what());
    }
    if (args.has("--json")) {
        // streamed entry by entry, as a folder's files are
        writeTensorsReportBegin(std::cout, *file, {});
        streamFileStats(*file, options, [&](std::size_t index, TensorStatsEntry&& entry) {
            writeTensorsReportEntry(std::cout, *file, index, &entry.stats);
        });
        writeTensorsReportEnd(std::cout, *file);
        progress.clear();
        std::cout << '\n';
        return kExitOk;
    }
    const FileStats fs = computeFileStats(*file, options);
    progress.clear();
    printFileStats(fs);
    for (const auto& w : file->warnings())
        std::cout << "warning: " << w << "\n";
    return kExitOk;
}
