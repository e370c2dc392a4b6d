// SPDX-License-Identifier: MIT
#include "commands.h"
#include "text_format.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/dcp_checkpoint.h"
#include "ckpt/report/json_export.h"
#include "ckpt/frameworks/checkpoint_layout.h"

#include <filesystem>
#include <iostream>

namespace {

std::string noteOf(const ckpt::TensorEntry& e, const ckpt::TensorInfo& t)
{
    std::string note = e.alias ? "same tensor as above" : "";
    if (t.layout != ckpt::TensorLayout::Strided)
        note += std::string(note.empty() ? "" : "; ") + ckpt::layoutName(t.layout);
    if (t.isParameter)
        note += std::string(note.empty() ? "" : "; ") + "parameter";
    if (!t.problem.empty())
        note += std::string(note.empty() ? "" : "; ") + t.problem;
    return note;
}

// A checkpoint folder of any layout: the tensors of every file that holds some, each counted once
// (a safetensors index stands for its shards: opensAsCheckpointFile), DCP entries from .metadata.
int directoryTensors(const CliArgs& args)
{
    const std::string dir = args.positional[0];
    ckpt::CheckpointLayout layout;
    try {
        layout = ckpt::detectLayout(dir);
    } catch (const std::exception& e) {
        return failWith(e.what());
    }
    // --json streams each file's listing as it is read (the same bytes as one JSON document built in
    // memory, whose keys nlohmann sorts: files, layout, path, warnings); the table is built only
    // for text.
    const bool json = args.has("--json");
    TextTable table({"FILE", "KEY", "DTYPE", "SHAPE", "SIZE", "NOTE"});
    std::size_t count = 0;
    uint64_t total = 0;
    std::vector<std::string> warnings;
    bool firstFile = true;
    auto beginFile = [&] {
        if (json)
            std::cout << (firstFile ? "{\"files\":[" : ",");
        firstFile = false;
    };
    auto relative = [&](const std::string& path) { return std::filesystem::path(path).lexically_relative(dir).string(); };
    if (const std::string dcp = ckpt::dcpFolder(layout); !dcp.empty()) {
        try {
            const ckpt::DcpCheckpoint d = ckpt::readDcpCheckpoint(dcp);
            nlohmann::json entries = nlohmann::json::array();
            for (const auto& e : d.entries) {
                if (e.isBytes)
                    continue;
                ++count;
                if (json)
                    entries.push_back({{"fqn", e.fqn}, {"dtype", e.dtype}, {"shape", e.size}, {"chunks", e.chunks.size()},
                                       {"problem", e.problem}});
                else
                    table.addRow({".metadata", e.fqn, e.dtype, formatShape(e.size), std::to_string(e.chunks.size()) + " chunk(s)", e.problem});
            }
            beginFile();
            if (json)
                std::cout << ckpt::dumpJson({{"path", dcp + "/.metadata"}, {"role", "metadata"}, {"entries", entries}});
            warnings = d.warnings;
        } catch (const std::exception& e) {
            return failWith(e.what());
        }
    }
    for (const auto& info : layout.files) {
        if (!ckpt::opensAsCheckpointFile(info))
            continue;
        std::unique_ptr<ckpt::CheckpointFile> file;
        try {
            file = ckpt::CheckpointFile::open(info.path);
        } catch (const std::exception& e) {
            warnings.push_back(e.what()); // the rest still lists
            continue;
        }
        beginFile();
        if (json)
            ckpt::writeTensorsReportJson(std::cout, *file, info.role);
        for (const auto& e : file->tensorEntries()) {
            const auto& t = file->tensors()[e.tensor];
            if (!e.alias)
                total += t.nbytes();
            ++count;
            if (!json)
                table.addRow({relative(info.path), ckpt::formatKeyPath(e.key), t.dtypeName, formatShape(t.shape), humanBytes(t.nbytes()), noteOf(e, t)});
        }
        for (const auto& w : file->warnings())
            warnings.push_back(info.path + ": " + w);
    }
    if (json) {
        std::cout << (firstFile ? "{\"files\":[" : "") << "],\"layout\":" << ckpt::dumpJson(nlohmann::json(ckpt::layoutName(layout.layout)))
                  << ",\"path\":" << ckpt::dumpJson(nlohmann::json(dir)) << ",\"warnings\":" << ckpt::dumpJson(nlohmann::json(warnings)) << "}\n";
        return kExitOk;
    }
    table.print(std::cout);
    std::cout << "\n" << count << " tensors" << (total ? ", " + humanBytes(total) : std::string()) << " in " << dir << " (layout " << ckpt::layoutName(layout.layout) << ")\n";
    for (const auto& w : warnings)
        std::cout << "warning: " << w << "\n";
    return kExitOk;
}

} // namespace

int runTensors(const CliArgs& args)
{
    if (args.positional.size() != 1)
        return failWith("usage: ckpt tensors PATH [--json] [--verify-crc] [--stats [--exact-hist]]  (PATH: a file or a checkpoint folder)");
    if (args.has("--stats"))
        return runTensorStats(args);
    // A folder, or a .nemo archive (a tar of files, read member by member like a folder's).
    if (std::filesystem::is_directory(args.positional[0]) || args.positional[0].ends_with(".nemo"))
        return directoryTensors(args);
    ckpt::OpenOptions options;
    options.verifyCrc = args.has("--verify-crc");
    std::unique_ptr<ckpt::CheckpointFile> file;
    try {
        file = ckpt::CheckpointFile::open(args.positional[0], options);
    } catch (const std::exception& e) {
        return failWith(e.what());
    }
    if (args.has("--json")) {
        ckpt::writeTensorsReportJson(std::cout, *file);
        std::cout << '\n';
        return kExitOk;
    }

    TextTable table({"KEY", "DTYPE", "SHAPE", "SIZE", "DEVICE", "NOTE"});
    uint64_t total = 0;
    for (const auto& e : file->tensorEntries()) {
        const auto& t = file->tensors()[e.tensor];
        const std::string note = noteOf(e, t);
        if (!e.alias)
            total += t.nbytes();
        table.addRow({ckpt::formatKeyPath(e.key), t.dtypeName, formatShape(t.shape), humanBytes(t.nbytes()), t.device, note});
    }
    table.print(std::cout);
    std::cout << "\n" << file->tensorEntries().size() << " tensors, " << humanBytes(total) << " in "
              << ckpt::formatName(file->format()) << " file of " << humanBytes(file->fileSize()) << "\n";
    for (const auto& w : file->warnings())
        std::cout << "warning: " << w << "\n";
    return kExitOk;
}
