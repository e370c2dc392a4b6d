// SPDX-License-Identifier: MIT
#include "ckpt/rules/checkpoint_facts.h"

#include "ckpt/audit/manifest_audit.h"
#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/imports_scan.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace ckpt {
namespace {

struct Range {
    uint64_t begin, end;
    std::size_t entry;
};

std::vector<SharedStorage> overlappingTensors(const CheckpointFile& file)
{
    std::map<int32_t, std::vector<Range>> byStorage;
    const auto& entries = file.tensorEntries();
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const TensorInfo& t = file.tensors()[entries[i].tensor];
        if (!t.hasData() || t.numel() == 0)
            continue;
        const uint64_t size = dtypeSize(t.dtype);
        const uint64_t begin = static_cast<uint64_t>(t.storageOffset) * size;
        byStorage[t.storage].push_back({begin, begin + t.nbytes(), i});
    }
    std::vector<SharedStorage> out;
    for (auto& [storage, ranges] : byStorage) {
        std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
        for (std::size_t i = 0; i < ranges.size() && out.size() < 256; ++i) {
            for (std::size_t j = i + 1; j < ranges.size() && ranges[j].begin < ranges[i].end && out.size() < 256; ++j)
                out.push_back({entries[ranges[i].entry].key, entries[ranges[j].entry].key});
        }
    }
    return out;
}

bool holdsPickles(const LayoutFile& f)
{
    static const std::set<std::string> skip = {"manifest", "complete", "trainer_state", "metadata"};
    return !skip.contains(f.role) && !f.path.ends_with(".json") && !f.path.ends_with(".distcp")
        && std::filesystem::is_regular_file(f.path);
}

} // namespace

FileFacts fileFacts(const CheckpointFile& file)
{
    return {file.path(), file.imports(), overlappingTensors(file)};
}

CheckpointFacts gatherFacts(const std::string& path, const FactOptions& options)
{
    CheckpointFacts c;
    // The reader's parsed files serve the imports and overlap facts below and the content rules'
    // resolver (which would otherwise parse them again); the state lets go of them unless the
    // caller keeps them too.
    c.state = readTrainingState(path, {.keepFiles = true});
    for (const auto& f : c.state.layout.files) {
        if (!holdsPickles(f))
            continue;
        const auto kept = c.state.keptFile(f.path);
        // A safetensors file holds no pickle and its reader refuses overlapping tensors, so its
        // facts are empty: the shards of an index (which the reader parsed through the index, not
        // one by one) are not parsed again for them, 163 of them for a frontier model.
        if (!kept && f.path.ends_with(".safetensors"))
            continue;
        try {
            c.files.push_back(fileFacts(kept ? *kept : *CheckpointFile::open(f.path)));
        } catch (const std::exception&) {
            // readTrainingState already recorded why the file cannot be opened. A file the loader
            // refuses can still carry a payload: report its pickles' imports when they are dangerous.
            try {
                ImportsReport imports = scanImports(f.path);
                if (imports.anyDangerous() || imports.structuralDanger)
                    c.files.push_back({f.path, std::move(imports), {}});
            } catch (const std::exception&) {
            }
        }
    }
    if (options.content)
        c.content = makeStatsContentSource(c.state.files);
    if (!options.keepFiles)
        c.state.files.clear();
    if (options.audit)
        auditFacts(c, path);
    return c;
}

void auditFacts(CheckpointFacts& c, const std::string& path)
{
    if (!std::filesystem::is_directory(path))
        return;
    try {
        c.audit = auditPath(path).findings;
        c.audited = true;
    } catch (const std::exception&) {
        // not a directory the audit understands (no manifest or commit marker): nothing to verify
    }
}

} // namespace ckpt
