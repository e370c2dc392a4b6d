// SPDX-License-Identifier: MIT
// CheckpointFile: opening a file (or a slice of one), telling its format, the safetensors and plain
// pickle loaders, and storage bytes. Zip archives: torch_zip_loader.cpp; legacy files: legacy_loader.cpp.
#include "ckpt/formats/checkpoint_file.h"

#include "checkpoint_loaders.h"
#include "ckpt/formats/file_sniff.h"
#include "ckpt/formats/imports_scan.h"
#include "ckpt/formats/safetensors_format.h"
#include "ckpt/pickle/pickle_interpreter.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace ckpt {
namespace {

using detail::formatBytes;

} // namespace

const char* formatName(FileFormat format)
{
    switch (format) {
    case FileFormat::TorchZip: return "torch_zip";
    case FileFormat::TorchLegacy: return "torch_legacy";
    case FileFormat::TorchScript: return "torchscript";
    case FileFormat::Safetensors: return "safetensors";
    case FileFormat::SafetensorsIndex: return "safetensors_index";
    case FileFormat::Pickle: return "pickle";
    }
    return "?";
}

std::unique_ptr<CheckpointFile> CheckpointFile::open(const std::string& path, const OpenOptions& options)
{
    std::unique_ptr<CheckpointFile> file(new CheckpointFile());
    try {
        file->m_file = MappedFile::open(path);
        file->load(options);
    } catch (const OpenError&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw OpenError(path, "out of memory while reading (the file is larger than its limits allow)");
    } catch (const std::exception& e) {
        throw OpenError(path, e.what());
    }
    return file;
}

std::unique_ptr<CheckpointFile> CheckpointFile::openSlice(const std::string& path, uint64_t offset, uint64_t length,
                                                          const OpenOptions& options)
{
    std::unique_ptr<CheckpointFile> file(new CheckpointFile());
    const std::string name = path + " [" + std::to_string(offset) + ", " + std::to_string(offset + length) + ")";
    try {
        file->m_file = MappedFile::open(path);
        if (offset > file->m_file.size() || length > file->m_file.size() - offset)
            throw FormatError("the item [" + std::to_string(offset) + ", +" + std::to_string(length)
                              + ") lies outside the file (" + std::to_string(file->m_file.size()) + " bytes)");
        file->m_sliceOffset = offset;
        file->m_sliceLength = length;
        file->m_sliced = true;
        file->load(options);
    } catch (const OpenError&) {
        throw;
    } catch (const std::exception& e) {
        throw OpenError(name, e.what());
    }
    return file;
}

Bytes CheckpointFile::bytes() const
{
    return m_sliced ? m_file.bytes().subspan(m_sliceOffset, m_sliceLength) : m_file.bytes();
}

std::optional<std::string> CheckpointFile::property(const std::string& key) const
{
    for (const auto& [k, v] : m_properties) {
        if (k == key)
            return v;
    }
    return std::nullopt;
}

void CheckpointFile::load(const OpenOptions& options)
{
    const Bytes data = bytes();
    if (data.empty())
        throw FormatError("empty file (0 bytes): not a checkpoint");
    if (startsWith(data, "PK\x03\x04")) {
        loadTorchZip(options);
    } else if (startsWithLegacyMagic(data)) {
        m_format = FileFormat::TorchLegacy;
        loadLegacy(options);
    } else if (startsWith(data, "PYTORCH1")) {
        throw FormatError("a TorchScript container from the PyTorch 1.0 preview release, which no PyTorch "
                          "since 1.0 can read either");
    } else if (data.size() > 262 && std::memcmp(data.data() + 257, "ustar", 5) == 0 && path().ends_with(".nemo")) {
        throw FormatError("a NeMo .nemo archive, a tar of several files: open it as a checkpoint (ckpt show, ckpt tensors), "
                          "or one member as a path below it (" + path() + "/model_weights.ckpt)");
    } else if (data.size() > 262 && std::memcmp(data.data() + 257, "ustar", 5) == 0) {
        throw FormatError("the PyTorch 0.1.x tar format (torch.save before 0.2); load and re-save it with "
                          "PyTorch 1.x to inspect it");
    } else if (looksLikeSafetensors(data)) {
        m_format = FileFormat::Safetensors;
        loadSafetensors();
    } else if (path().ends_with(".safetensors.index.json")) {
        m_format = FileFormat::SafetensorsIndex;
        loadSafetensorsIndex();
    } else if (looksLikePickle(data)) {
        m_format = FileFormat::Pickle;
        loadPlainPickle(options);
    } else {
        throw FormatError("not a checkpoint: " + sniffFileKind(data)
                          + " (not a torch.save file, safetensors or pickle)");
    }

    // A storage found missing or short after its tensors were built taints those tensors.
    for (auto& t : m_doc.tensors) {
        if (t.storage >= 0 && t.problem.empty()) {
            const auto& s = m_doc.storages[static_cast<std::size_t>(t.storage)];
            if (!s.problem.empty())
                t.problem = s.problem;
        }
    }
    m_entries = listTensors(m_doc);
    for (const auto& e : m_entries) {
        const auto& t = m_doc.tensors[e.tensor];
        if (!e.alias && !t.problem.empty() && t.layout != TensorLayout::NoStorage && t.layout != TensorLayout::Meta
            && t.storage >= 0)
            m_doc.warnings.push_back("tensor " + formatKeyPath(e.key) + ": " + t.problem);
    }
}

void CheckpointFile::setRoot(NodeId node)
{
    if (!m_doc.graph.valid(node))
        return;
    m_doc.root = node;
    m_entries = listTensors(m_doc);
}

NodeId CheckpointFile::runPickle(Bytes data, std::size_t start, const std::string& record, const OpenOptions& options,
                                 const StorageResolver& resolver, std::size_t* end, int* protocol)
{
    ValueGraph raw(options.limits.maxNodes);
    PickleMachine vm(raw, options.limits);
    PickleRun run;
    try {
        run = vm.run(data, start);
    } catch (const FormatError& e) {
        // Keep what the scanner can still tell: the globals named before and after the break.
        std::unordered_set<std::size_t> seen;
        for (const auto& g : vm.globals())
            seen.insert(g.offset);
        judgeNestedPickles(m_imports, record, m_imports.addMachine(record, vm), 0);
        std::vector<PickleGlobal> rest;
        for (auto& g : scanGlobalOpcodes(data, start)) {
            if (!seen.contains(g.offset))
                rest.push_back(std::move(g));
        }
        m_imports.add(record, rest);
        if (dynamic_cast<const LimitError*>(&e))
            throw LimitError(record + ": " + e.what());
        throw FormatError(record + ": " + e.what());
    }
    judgeNestedPickles(m_imports, record, m_imports.addMachine(record, vm), 0);
    if (end)
        *end = run.end;
    if (protocol)
        *protocol = run.protocol;
    InterpretOptions io;
    io.maxDepth = options.maxDepth;
    return interpretPickle(raw, run.root, m_doc, resolver, io);
}

void CheckpointFile::loadSafetensors()
{
    const SafetensorsHeader header = parseSafetensors(bytes());
    for (const auto& w : header.warnings)
        m_doc.warnings.push_back(w);
    m_properties.emplace_back("header_size", std::to_string(header.headerSize));
    for (const auto& [k, v] : header.metadata)
        m_properties.emplace_back("metadata." + k, v);
    ValueGraph& g = m_doc.graph;
    g.reserve(g.size() + 1 + 2 * header.tensors.size()); // nodes are large: no regrowth on 10k-tensor files
    const NodeId root = g.add(Node{.kind = Kind::Dict});
    g[root].items.reserve(2 * header.tensors.size());
    m_doc.tensors.reserve(m_doc.tensors.size() + header.tensors.size());
    m_doc.storages.reserve(m_doc.storages.size() + header.tensors.size());
    for (const auto& st : header.tensors) {
        StorageInfo s;
        s.key = st.name;
        s.dtype = st.dtype == DType::Unknown ? DType::UInt8 : st.dtype;
        s.fileOffset = m_sliceOffset + st.begin;
        s.byteSize = st.end - st.begin;
        s.numel = s.byteSize / dtypeSize(s.dtype);
        s.available = true;
        m_doc.storages.push_back(std::move(s));

        TensorInfo t;
        t.dtype = st.dtype;
        t.dtypeName = st.dtype == DType::Unknown ? st.dtypeCode : std::string(dtypeName(st.dtype));
        t.shape = st.shape;
        t.stride.assign(st.shape.size(), 1);
        for (std::size_t d = st.shape.size(); d-- > 1;)
            t.stride[d - 1] = t.stride[d] * std::max<int64_t>(st.shape[d], 1);
        t.storage = static_cast<int32_t>(m_doc.storages.size() - 1);
        if (st.dtype == DType::Unknown)
            t.problem = "sub-byte element type " + st.dtypeCode + " is listed but not decoded";
        m_doc.tensors.push_back(std::move(t));
        const NodeId key = g.addText(Kind::String, st.name);
        const NodeId value = g.add(Node{.kind = Kind::Tensor, .ref = static_cast<uint32_t>(m_doc.tensors.size() - 1)});
        g[root].items.push_back(key);
        g[root].items.push_back(value);
    }
    m_doc.root = root;
}

// A sharded set: the index maps each tensor to a shard file beside it. Every shard is read
// with the same strictness as a single file; a missing or broken shard is reported and the
// tensors it should hold are marked, while the other shards still open.
void CheckpointFile::loadSafetensorsIndex()
{
    SafetensorsIndex index = parseSafetensorsIndex(asText(bytes()));
    for (const auto& [k, v] : index.metadata)
        m_properties.emplace_back("metadata." + k, v);
    const std::string dir = path().find('/') == std::string::npos ? "." : path().substr(0, path().rfind('/'));

    // Hash lookups: a frontier model's index names ~90k tensors over ~160 shards, and scanning the
    // shard list and each shard's header per tensor made listing quadratic (seconds, not milliseconds).
    std::vector<std::string> shardNames;
    std::unordered_set<std::string> seenShards;
    for (const auto& [tensor, shard] : index.weightMap) {
        if (seenShards.insert(shard).second)
            shardNames.push_back(shard);
    }
    m_properties.emplace_back("shards", std::to_string(shardNames.size()));

    // Per shard: its header, or why it could not be read.
    std::map<std::string, std::pair<uint32_t, SafetensorsHeader>> headers;
    for (const auto& shard : shardNames) {
        try {
            MappedFile file = MappedFile::open(dir + "/" + shard);
            SafetensorsHeader header = parseSafetensors(file.bytes());
            for (const auto& w : header.warnings)
                m_doc.warnings.push_back(shard + ": " + w);
            m_shards.push_back(std::move(file));
            headers.emplace(shard, std::make_pair(static_cast<uint32_t>(m_shards.size()), std::move(header)));
        } catch (const FormatError& e) {
            m_doc.warnings.push_back("shard " + shard + " cannot be read: " + e.what());
        }
    }

    // each shard's tensors by name (a header's names are unique: the strict JSON reader refuses a
    // repeated key)
    std::map<std::string, std::unordered_map<std::string_view, SafetensorsTensor*>> byName;
    for (auto& [shard, entry] : headers) {
        auto& names = byName[shard];
        names.reserve(entry.second.tensors.size());
        for (auto& t : entry.second.tensors)
            names.emplace(t.name, &t);
    }
    ValueGraph& g = m_doc.graph;
    g.reserve(g.size() + 1 + 2 * index.weightMap.size());
    const NodeId root = g.add(Node{.kind = Kind::Dict});
    // Which of each shard's tensors the index lists, by position in its header: a set of (shard,
    // name) string pairs cost ~90k allocations on a frontier model.
    std::map<std::string, std::vector<bool>> listed;
    for (const auto& [shard, entry] : headers)
        listed[shard].assign(entry.second.tensors.size(), false);
    m_doc.tensors.reserve(m_doc.tensors.size() + index.weightMap.size());
    m_doc.storages.reserve(m_doc.storages.size() + index.weightMap.size());
    g[root].items.reserve(2 * index.weightMap.size());
    // An index lists a shard's tensors together as a rule: the shard's entries are looked up when
    // it changes, not per tensor.
    const std::string* lastShard = nullptr;
    auto h = headers.end();
    std::unordered_map<std::string_view, SafetensorsTensor*>* names = nullptr;
    std::vector<bool>* listedHere = nullptr;
    for (auto& [name, shard] : index.weightMap) {
        NodeId value = kNoNode;
        if (!lastShard || *lastShard != shard) {
            lastShard = &shard;
            h = headers.find(shard);
            names = h == headers.end() ? nullptr : &byName[shard];
            listedHere = h == headers.end() ? nullptr : &listed[shard];
        }
        SafetensorsTensor* st = nullptr;
        if (names) {
            if (const auto it = names->find(name); it != names->end()) {
                st = it->second;
                (*listedHere)[static_cast<std::size_t>(st - h->second.second.tensors.data())] = true;
            }
        }
        if (!st) {
            const std::string why = h == headers.end() ? "its shard " + shard + " cannot be read"
                                                       : "the index puts it in " + shard + ", which does not hold it";
            m_doc.warnings.push_back("tensor " + name + ": " + why);
            value = g.addText(Kind::Invalid, why);
        } else {
            StorageInfo s;
            s.key = shard + ":" + name;
            s.dtype = st->dtype == DType::Unknown ? DType::UInt8 : st->dtype;
            s.fileIndex = h->second.first;
            s.fileOffset = st->begin;
            s.byteSize = st->end - st->begin;
            s.numel = s.byteSize / dtypeSize(s.dtype);
            s.available = true;
            m_doc.storages.push_back(std::move(s));
            TensorInfo t;
            t.dtype = st->dtype;
            t.dtypeName = st->dtype == DType::Unknown ? st->dtypeCode : std::string(dtypeName(st->dtype));
            t.shape = std::move(st->shape); // the header's copy is not read again
            t.stride.assign(t.shape.size(), 1);
            for (std::size_t d = t.shape.size(); d-- > 1;)
                t.stride[d - 1] = t.stride[d] * std::max<int64_t>(t.shape[d], 1);
            t.storage = static_cast<int32_t>(m_doc.storages.size() - 1);
            if (st->dtype == DType::Unknown)
                t.problem = "sub-byte element type " + st->dtypeCode + " is listed but not decoded";
            m_doc.tensors.push_back(std::move(t));
            value = g.add(Node{.kind = Kind::Tensor, .ref = static_cast<uint32_t>(m_doc.tensors.size() - 1)});
        }
        const NodeId key = g.addText(Kind::String, std::move(name)); // its last use
        g[root].items.push_back(key);
        g[root].items.push_back(value);
    }
    for (const auto& [shard, entry] : headers) {
        const std::vector<bool>& seen = listed[shard];
        for (std::size_t i = 0; i < entry.second.tensors.size(); ++i) {
            if (!seen[i])
                m_doc.warnings.push_back("shard " + shard + " holds tensor " + entry.second.tensors[i].name + ", which the index does not list");
        }
    }
    m_doc.root = root;
}

void CheckpointFile::loadPlainPickle(const OpenOptions& options)
{
    const Bytes data = bytes();
    const StorageResolver none = [](const StorageRequest& req, std::string& problem) {
        problem = "storage '" + req.key + "' is a persistent id, but a plain pickle file has no storage records";
        return -1;
    };
    std::size_t end = 0;
    int protocol = 0;
    m_doc.root = runPickle(data, 0, "pickle", options, none, &end, &protocol);
    m_properties.emplace_back("pickle_protocol", std::to_string(protocol));
    if (end < data.size()) {
        m_doc.warnings.push_back(formatBytes(data.size() - end) + " follow the pickle's STOP opcode; they are not part of the object");
        scanPickleSequence(m_imports, "data after STOP", data.subspan(end));
    }
}

Bytes CheckpointFile::storageBytes(std::size_t index, std::vector<std::byte>& scratch) const
{
    if (index >= m_doc.storages.size())
        throw FormatError("no storage " + std::to_string(index));
    const StorageInfo& s = m_doc.storages[index];
    if (!s.available)
        throw FormatError(s.problem.empty() ? "storage " + s.key + " has no bytes" : s.problem);
    if (s.compressed && m_zip)
        return entryBytes(bytes(), m_zip->entries[static_cast<std::size_t>(s.zipEntry)], scratch);
    const MappedFile& file = s.fileIndex == 0 ? m_file : m_shards.at(s.fileIndex - 1);
    return file.bytes().subspan(s.fileOffset, s.byteSize);
}

Bytes CheckpointFile::tensorRegion(const TensorInfo& t, std::vector<std::byte>& scratch) const
{
    if (!t.hasData() || (t.layout != TensorLayout::Strided && t.layout != TensorLayout::Quantized))
        return {};
    const Bytes storage = storageBytes(static_cast<std::size_t>(t.storage), scratch);
    const std::size_t elem = dtypeSize(t.dtype);
    if (t.numel() == 0)
        return storage.subspan(0, 0);
    uint64_t last = static_cast<uint64_t>(t.storageOffset);
    for (std::size_t d = 0; d < t.shape.size(); ++d)
        last += static_cast<uint64_t>(t.shape[d] - 1) * static_cast<uint64_t>(t.stride[d]);
    const uint64_t begin = static_cast<uint64_t>(t.storageOffset) * elem;
    return storage.subspan(begin, (last + 1) * elem - begin);
}

} // namespace ckpt
