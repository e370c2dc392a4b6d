// SPDX-License-Identifier: MIT
#include "commands.h"
#include "text_format.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/report/json_export.h"

#include <iostream>

int failWith(const std::string& message)
{
    std::string line = message;
    for (char& c : line) {
        if (c == '\n')
            c = ' ';
    }
    std::cerr << "ckpt: " << line << std::endl;
    return kExitUnreadable;
}

int runTensors(const CliArgs& args)
{
    if (args.positional.size() != 1)
        return failWith("usage: ckpt tensors FILE [--json] [--verify-crc] [--stats [--exact-hist]]");
    if (args.has("--stats"))
        return runTensorStats(args);
    ckpt::OpenOptions options;
    options.verifyCrc = args.has("--verify-crc");
    std::unique_ptr<ckpt::CheckpointFile> file;
    try {
        file = ckpt::CheckpointFile::open(args.positional[0], options);
    } catch (const std::exception& e) {
        return failWith(e.what());
    }
    if (args.has("--json")) {
        std::cout << ckpt::dumpJson(ckpt::tensorsReportToJson(*file)) << '\n';
        return kExitOk;
    }

    TextTable table({"KEY", "DTYPE", "SHAPE", "SIZE", "DEVICE", "NOTE"});
    uint64_t total = 0;
    for (const auto& e : file->tensorEntries()) {
        const auto& t = file->tensors()[e.tensor];
        std::string note = e.alias ? "same tensor as above" : "";
        if (t.layout != ckpt::TensorLayout::Strided)
            note += std::string(note.empty() ? "" : "; ") + ckpt::layoutName(t.layout);
        if (t.isParameter)
            note += std::string(note.empty() ? "" : "; ") + "parameter";
        if (!t.problem.empty())
            note += std::string(note.empty() ? "" : "; ") + t.problem;
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
