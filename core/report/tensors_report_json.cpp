// SPDX-License-Identifier: MIT
// `ckpt tensors --json` written one tensor at a time: the document's keys around the entries that
// tensor_entry_json.cpp appends (json_export.h).
#include "ckpt/report/json_export.h"

#include "ckpt/formats/checkpoint_file.h"

#include <ostream>

namespace ckpt {

using nlohmann::json;

void writeTensorsReportJson(std::ostream& out, const CheckpointFile& file, const std::optional<std::string>& role)
{
    writeTensorsReportBegin(out, file, {.role = role});
    for (std::size_t i = 0; i < file.tensorEntries().size(); ++i)
        writeTensorsReportEntry(out, file, i);
    writeTensorsReportEnd(out, file);
}

void writeTensorsReportBegin(std::ostream& out, const CheckpointFile& file, const TensorsReportExtras& extras)
{
    // the keys in the order nlohmann sorts a document's: file, format, [rank,] [role,] tensors, warnings
    out << "{\"file\":" << dumpJson(json(file.path())) << ",\"format\":" << dumpJson(json(formatName(file.format())));
    if (extras.rank)
        out << ",\"rank\":" << dumpJson(*extras.rank);
    if (extras.role)
        out << ",\"role\":" << dumpJson(json(*extras.role));
    out << ",\"tensors\":[";
}

void writeTensorsReportEntry(std::ostream& out, const CheckpointFile& file, std::size_t index, const TensorStats* stats)
{
    std::string text = index ? "," : "";
    appendTensorEntryJson(text, file, file.tensorEntries()[index], stats);
    out << text;
}

void writeTensorsReportEnd(std::ostream& out, const CheckpointFile& file)
{
    out << "],\"warnings\":" << dumpJson(json(file.warnings())) << '}';
}

} // namespace ckpt
