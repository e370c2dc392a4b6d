// SPDX-License-Identifier: MIT
#include "ckpt/formats/imports_scan.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/file_sniff.h"
#include "ckpt/io/archive_members.h"
#include "ckpt/io/errors.h"
#include "ckpt/io/tar_index.h"
#include "ckpt/io/zip_archive.h"

#include <unordered_set>

namespace ckpt {
namespace {

std::string formatBytes(uint64_t n) { return std::to_string(n) + " bytes"; }

bool scanAny(ImportsReport& report, const std::string& name, Bytes data, int depth);

// Runs one pickle only to collect its globals; never throws. Returns the offset after STOP,
// or npos when the pickle is malformed (a note says why).
std::size_t scanPickle(ImportsReport& report, const std::string& record, Bytes data, std::size_t start, int depth)
{
    ValueGraph graph(std::size_t(1) << 21);
    PickleMachine vm(graph);
    try {
        const PickleRun run = vm.run(data, start);
        judgeNestedPickles(report, record, report.addMachine(record, vm), depth);
        return run.end;
    } catch (const std::exception& e) {
        judgeNestedPickles(report, record, report.addMachine(record, vm), depth);
        std::unordered_set<std::size_t> seen;
        for (const auto& g : vm.globals())
            seen.insert(g.offset);
        // A STACK_GLOBAL the machine refused (operands that are no str, a stack too short) is
        // refused by CPython too: nothing is imported there, whatever the lexer guesses its
        // operands were. (GLOBAL is not skipped: a read past a FRAME's end is refused there on
        // purpose while CPython reads it.)
        const std::size_t failed = vm.opcodeOffset();
        if (failed < data.size() && static_cast<uint8_t>(data[failed]) == 0x93)
            seen.insert(failed);
        std::vector<PickleGlobal> rest;
        for (auto& g : scanGlobalOpcodes(data, start)) {
            if (!seen.contains(g.offset))
                rest.push_back(std::move(g));
        }
        report.add(record, rest);
        // A bound of the reader's own (stack, MARKs, memo, objects, integer size) is not a fault
        // of the file: CPython may read it, with the memory it takes. Said as such.
        if (dynamic_cast<const LimitError*>(&e))
            report.notes.push_back(record + ": reading stopped at a resource bound (" + e.what()
                                   + "): the rest was scanned for globals only");
        else
            report.notes.push_back(record + ": the pickle is malformed (" + e.what() + ")");
        report.malformed = true;
        return std::string::npos;
    }
}

constexpr int kMaxNesting = 3;

} // namespace

void judgeNestedPickles(ImportsReport& report, const std::string& record, const CallFlow& flow, int depth)
{
    int index = 0;
    for (const NestedPayload& nested : flow.nested) {
        const std::string inner = record + " > nested #" + std::to_string(++index);
        if (depth + 1 > kMaxNesting) {
            report.judgeNested(record, nested.loader, false, "nested more than " + std::to_string(kMaxNesting)
                                                                 + " levels deep, not read further");
            continue;
        }
        // Read on its own, then merged: the verdict on the loader depends on what the bytes hold.
        ImportsReport sub;
        sub.strict = report.strict;
        std::string problem;
        try {
            const std::string_view view = nested.bytes();
            const Bytes bytes(reinterpret_cast<const std::byte*>(view.data()), view.size());
            if (!scanAny(sub, inner, bytes, depth + 1))
                problem = "they hold no pickle";
        } catch (const std::exception& e) {
            problem = std::string("they cannot be read (") + e.what() + ")";
        }
        if (problem.empty() && sub.malformed)
            problem = "they cannot be read to the end";
        if (problem.empty() && sub.anyDangerous())
            problem = "they reference dangerous globals (see " + inner + ")";
        report.entries.insert(report.entries.end(), sub.entries.begin(), sub.entries.end());
        report.notes.insert(report.notes.end(), sub.notes.begin(), sub.notes.end());
        report.structuralDanger = report.structuralDanger || sub.structuralDanger;
        report.malformed = report.malformed || sub.malformed;
        report.judgeNested(record, nested.loader, problem.empty(),
                           problem.empty() ? "a torch.save stream with nothing dangerous in it (" + inner + ")" : problem);
    }
}

// Plain pickle files may carry more pickles after STOP (a trick to hide a payload from
// scanners that stop at the first STOP): scan every one.
void scanPickleSequence(ImportsReport& report, const std::string& record, Bytes data, bool trailingIsSuspicious, int depth)
{
    std::size_t pos = 0;
    bool hiddenPickle = false; // the bytes after the last STOP look like another pickle
    for (int index = 0; pos < data.size() && index < 64; ++index) {
        const std::string name = index == 0 ? record : record + " (pickle #" + std::to_string(index + 1) + ")";
        const bool wasMalformed = report.malformed;
        const std::size_t end = scanPickle(report, name, data, pos, depth);
        if (end == std::string::npos && index > 0) {
            // Bytes after the STOP that are no complete pickle: pickle.load and torch.load read the
            // first pickle and stop, so the file is still read, and what the lexer found in them
            // stays in the report. A second pickle that cannot be read to the end is a red flag
            // of its own: what it hides cannot be checked.
            report.malformed = wasMalformed;
            report.notes.back() += "; these bytes after the first pickle's STOP are never read by pickle.load";
            report.structuralDanger = report.structuralDanger || hiddenPickle;
            return;
        }
        if (end == std::string::npos || end >= data.size())
            return;
        report.notes.push_back(record + ": " + formatBytes(data.size() - end) + " follow the pickle's STOP opcode"
                               + " (a second pickle hidden after the first is a known scanner bypass; it is read "
                                 "and judged like the first)");
        // A second pickle that reads to its STOP is judged by its own globals (fickling's
        // test_stacked_pickles: two benign lists are benign).
        hiddenPickle = trailingIsSuspicious && looksLikePickle(data.subspan(end));
        pos = end;
    }
}

namespace {

// The PyTorch 0.1.x tar format's `storages` and `tensors` members interleave small pickles
// with raw data (formats.md §2.4); walk them record by record so every pickle is scanned.
void scanTorchTarMember(ImportsReport& report, const std::string& name, Bytes data)
{
    ValueGraph graph(std::size_t(1) << 20);
    auto runOne = [&](std::size_t pos, const std::string& record, NodeId* root) {
        PickleMachine vm(graph);
        const PickleRun run = vm.run(data, pos);
        judgeNestedPickles(report, record, report.addMachine(record, vm), 0);
        if (root)
            *root = run.root;
        return run.end;
    };
    try {
        NodeId countNode = kNoNode;
        std::size_t pos = runOne(0, name, &countNode);
        const int64_t count = graph[countNode].kind == Kind::Int ? graph[countNode].i : -1;
        if (count < 0 || count > 1000000)
            throw FormatError("the record count is not a small number");
        ByteReader r(data);
        for (int64_t i = 0; i < count; ++i) {
            NodeId rec = kNoNode;
            pos = runOne(pos, name + " record " + std::to_string(i), &rec);
            r.seek(pos);
            if (name == "storages") {
                const auto& items = graph[rec].items;
                const DType dt = items.size() >= 3 && graph[items[2]].kind == Kind::Global
                                     ? dtypeFromStorageClass(graph[items[2]].text) : DType::Unknown;
                const int64_t numel = r.i64();
                if (numel < 0 || dtypeSize(dt) == 0)
                    throw FormatError("storage record " + std::to_string(i) + " has an unknown size");
                r.skip(static_cast<uint64_t>(numel) * dtypeSize(dt));
            } else {
                const int32_t ndim = r.i32();
                if (ndim < 0 || ndim > 64)
                    throw FormatError("tensor record " + std::to_string(i) + " has " + std::to_string(ndim) + " dimensions");
                r.skip(4 + 16 * static_cast<uint64_t>(ndim) + 8);
            }
            pos = r.pos();
        }
        if (name == "storages" && pos < data.size())
            pos = runOne(pos, name + " views", nullptr);
        if (pos < data.size())
            report.notes.push_back(name + ": " + formatBytes(data.size() - pos) + " after the last record");
    } catch (const std::exception& e) {
        report.notes.push_back(name + ": cannot walk the records (" + e.what() + ")");
        report.malformed = true;
    }
}

// numpy .npy: a pickle follows the header when the dtype holds Python objects.
void scanNpy(ImportsReport& report, const std::string& record, Bytes data)
{
    ByteReader r(data, 6);
    const uint8_t major = r.u8();
    r.u8();
    const uint32_t headerLen = major == 1 ? r.u16() : r.u32();
    const std::string header(asText(r.take(headerLen)));
    if (header.find("'O'") != std::string::npos || header.find("|O") != std::string::npos)
        scanPickleSequence(report, record + " (object array)", data.subspan(r.pos()));
    else
        report.notes.push_back(record + ": a numpy array of plain numbers (no pickle)");
}

// Whatever `data` is, every pickle in it: a torch.save zip's records, a legacy file's pickles, a
// .npy's object array, the members of an archive (a .nemo's model_weights.ckpt is a zip inside a tar),
// a plain pickle. Returns false when it holds no pickle; throws FormatError when it is nothing known.
bool scanAny(ImportsReport& report, const std::string& name, Bytes data, int depth)
{
    const std::string prefix = name.empty() ? std::string() : name + "/";
    if (data.empty())
        throw FormatError("empty file (0 bytes): nothing to scan");
    if (startsWith(data, "PK\x03\x04")) {
        const ZipArchive zip = ZipArchive::parse(data);
        for (const auto& w : zip.warnings)
            report.notes.push_back(prefix + w);
        bool any = false;
        for (const auto& e : zip.entries) {
            const bool tensorBytes = e.name.find("/data/") != std::string::npos || e.name.find("/constants/") != std::string::npos;
            if (tensorBytes && !e.name.ends_with(".pkl"))
                continue;
            if (e.flags & 0x0001 && e.method == 0 && e.compressedSize != e.uncompressedSize) {
                report.notes.push_back(prefix + e.name + ": encrypted, not scanned");
                continue;
            }
            std::vector<std::byte> scratch;
            const Bytes bytes = entryBytes(data, e, scratch, std::size_t(1) << 28);
            if (e.crc32 != 0 && crc32Of(bytes) != e.crc32)
                report.notes.push_back("CRC-32 mismatch in " + prefix + e.name + " (scanned anyway: PyTorch may not check it)");
            if (startsWith(bytes, "\x93NUMPY")) {
                scanNpy(report, prefix + e.name, bytes);
                any = true;
            } else if (e.name.ends_with(".pkl") || e.name.ends_with(".pickle")
                       || (bytes.size() > 2 && static_cast<uint8_t>(bytes[0]) == 0x80 && static_cast<uint8_t>(bytes[1]) <= 5)) {
                scanPickleSequence(report, prefix + e.name, bytes, true, depth);
                any = true;
            }
        }
        return any;
    }
    if (startsWithLegacyMagic(data)) {
        std::size_t pos = 0;
        for (int i = 0; i < 5 && pos != std::string::npos && pos < data.size(); ++i)
            pos = scanPickle(report, prefix + "pickle #" + std::to_string(i + 1), data, pos, depth);
        return true;
    }
    if (startsWith(data, "\x93NUMPY")) {
        scanNpy(report, prefix + "array", data);
        return true;
    }
    const std::string kind = sniffFileKind(data);
    const bool archive = kind == "a 7-Zip archive" || kind == "a tar archive" || kind == "a gzip file" || kind == "an xz file"
                         || kind == "a bzip2 file";
    if (archive && depth < 3) {
        // Pickles are also shipped inside general archives, and checkpoints inside tars (NeMo's .nemo):
        // every member, a zip or an archive in it too. An uncompressed tar's members are read in place,
        // whatever their size.
        bool any = false;
        auto member = [&](const std::string& memberName, Bytes content) {
            if (kind == "a tar archive" && (memberName == "storages" || memberName == "tensors")) {
                scanTorchTarMember(report, memberName, content);
                any = true;
            } else if (looksLikePickle(content) || memberName.ends_with(".pkl")) {
                scanPickleSequence(report, prefix + memberName, content, true, depth);
                any = true;
            } else if (!content.empty()) {
                try {
                    any = scanAny(report, prefix + memberName, content, depth + 1) || any;
                } catch (const FormatError&) {
                    // a member that holds no pickle (a YAML config, a tokenizer model)
                }
            }
        };
        if (looksLikeTar(data)) {
            for (const TarMember& m : tarIndex(data)) {
                if (m.type == '0')
                    member(m.name, data.subspan(static_cast<std::size_t>(m.offset), static_cast<std::size_t>(m.size)));
            }
        } else {
            std::vector<std::string> skipped;
            forEachArchiveMember(data, std::size_t(1) << 28, member, &skipped);
            for (const auto& skippedName : skipped)
                report.notes.push_back(prefix + skippedName + ": larger than 256 MiB in a compressed archive, not scanned");
        }
        return any;
    }
    if (looksLikeSafetensors(data)) {
        report.notes.push_back(prefix + "safetensors holds no pickle: nothing in it can run code");
        return true;
    }
    if (looksLikePickle(data)) {
        scanPickleSequence(report, prefix + "pickle", data, true, depth);
        return true;
    }
    throw FormatError("no pickle found: " + sniffFileKind(data));
}

} // namespace

ImportsReport scanImports(const std::string& path, bool strict)
{
    MappedFile file;
    try {
        file = MappedFile::open(path);
    } catch (const std::exception& e) {
        throw OpenError(path, e.what());
    }
    ImportsReport report;
    report.strict = strict;
    try {
        const Bytes data = file.bytes();
        if (!scanAny(report, "", data, 0)) {
            const std::string kind = startsWith(data, "PK\x03\x04") ? std::string("a zip archive") : sniffFileKind(data);
            throw FormatError(kind + " with no pickle in it");
        }
    } catch (const OpenError&) {
        throw;
    } catch (const std::exception& e) {
        throw OpenError(path, e.what());
    }
    return report;
}

} // namespace ckpt
