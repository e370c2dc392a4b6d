// SPDX-License-Identifier: MIT
#include "ckpt/formats/checkpoint_file.h"

#include "ckpt/formats/file_sniff.h"
#include "ckpt/formats/imports_scan.h"
#include "ckpt/pickle/pickle_interpreter.h"
#include "ckpt/formats/safetensors_format.h"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <cstring>
#include <map>
#include <set>
#include <unordered_set>

namespace ckpt {
namespace {

constexpr std::string_view kLegacyMagicDecimal = "119547037146038801333356";

std::string trimmed(std::string_view s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\0'))
        s.remove_suffix(1);
    return std::string(s);
}

std::string formatBytes(uint64_t n) { return std::to_string(n) + " bytes"; }

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
        m_imports.addMachine(record, vm);
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
    m_imports.addMachine(record, vm);
    if (end)
        *end = run.end;
    if (protocol)
        *protocol = run.protocol;
    InterpretOptions io;
    io.maxDepth = options.maxDepth;
    return interpretPickle(raw, run.root, m_doc, resolver, io);
}

void CheckpointFile::loadTorchZip(const OpenOptions& options)
{
    const Bytes data = bytes();
    m_zip = ZipArchive::parse(data, [this](uint64_t offset, std::span<std::byte> out) {
        m_file.readAt(m_sliceOffset + offset, out);
    });
    const ZipArchive& zip = *m_zip;
    for (const auto& w : zip.warnings)
        m_doc.warnings.push_back(w);
    if (zip.entries.empty())
        throw FormatError("an empty zip archive: not a PyTorch checkpoint");

    const std::string& first = zip.entries.front().name;
    if (std::all_of(zip.entries.begin(), zip.entries.end(), [](const ZipEntry& e) { return e.name.ends_with(".npy"); }))
        throw FormatError("a numpy .npz archive (" + std::to_string(zip.entries.size())
                          + " arrays), not a PyTorch checkpoint");
    const auto slash = first.find('/');
    if (slash == std::string::npos)
        throw FormatError("zip record '" + first + "' is not in a subdirectory, so this is not a torch.save archive");
    const std::string prefix = first.substr(0, slash);
    m_properties.emplace_back("archive_prefix", prefix);
    for (const auto& e : zip.entries) {
        if (!e.name.starts_with(prefix + "/"))
            throw FormatError("zip record '" + e.name + "' lies outside the archive folder '" + prefix
                              + "/' (PyTorch refuses such archives too)");
    }
    auto record = [&](std::string_view name) { return zip.find(prefix + "/" + std::string(name)); };

    const ZipEntry* dataPkl = record("data.pkl");
    const ZipEntry* constantsPkl = record("constants.pkl");
    if (!dataPkl && record("model.json")) {
        loadOldTorchScript(prefix);
        return;
    }
    if (!dataPkl) {
        std::string names;
        for (std::size_t i = 0; i < zip.entries.size() && i < 5; ++i)
            names += (i ? ", " : "") + zip.entries[i].name;
        throw FormatError("a zip archive without a data.pkl record, so not a PyTorch checkpoint (records: " + names
                          + (zip.entries.size() > 5 ? ", ..." : "") + ")");
    }
    m_format = constantsPkl ? FileFormat::TorchScript : FileFormat::TorchZip;

    std::vector<std::byte> scratch;
    for (const char* small : {"version", ".data/version", "byteorder", ".format_version", ".storage_alignment",
                              ".data/serialization_id"}) {
        if (const ZipEntry* e = record(small); e && e->uncompressedSize <= 256)
            m_properties.emplace_back(small[0] == '.' ? std::string(small + 1) : std::string(small),
                                      trimmed(asText(entryBytes(data, *e, scratch))));
    }
    if (const auto order = property("byteorder")) {
        if (*order == "big")
            m_bigEndian = true;
        else if (*order != "little")
            m_doc.warnings.push_back("unknown byteorder record '" + *order + "'; assuming little-endian");
    }

    // Storages are zip records `<prefix>/<folder>/<key>`; one StorageInfo per distinct key.
    std::map<std::string, int32_t> byRecord;
    auto resolverFor = [&](std::string folder) {
        return [this, &zip, &byRecord, &record, folder](const StorageRequest& req, std::string& problem) -> int32_t {
            const std::string name = folder + "/" + req.key;
            if (const auto it = byRecord.find(name); it != byRecord.end()) {
                const StorageInfo& s = m_doc.storages[static_cast<std::size_t>(it->second)];
                if (s.dtype != req.dtype && !req.untyped)
                    m_doc.warnings.push_back("storage " + name + " is referenced with two element types");
                return it->second;
            }
            StorageInfo s;
            s.key = req.key;
            s.location = req.location;
            s.dtype = req.dtype;
            s.numel = req.numel;
            if (const ZipEntry* e = record(name)) {
                s.fileOffset = m_sliceOffset + e->dataOffset;
                s.byteSize = e->uncompressedSize;
                s.compressed = e->method != 0;
                s.zipEntry = static_cast<int32_t>(e - zip.entries.data());
                const UInt128 need = static_cast<UInt128>(req.numel) * dtypeSize(req.dtype);
                if (need > s.byteSize)
                    s.problem = "record " + name + " holds " + formatBytes(s.byteSize) + " but the storage needs "
                              + std::to_string(static_cast<uint64_t>(need));
                else if (need < s.byteSize)
                    m_doc.warnings.push_back("record " + name + " holds more bytes than its storage uses");
                s.available = s.problem.empty();
            } else {
                s.problem = "record " + name + " is missing from the archive";
            }
            (void)problem;
            m_doc.storages.push_back(std::move(s));
            const auto index = static_cast<int32_t>(m_doc.storages.size() - 1);
            byRecord.emplace(name, index);
            return index;
        };
    };

    auto checkCrc = [&](const ZipEntry& e, Bytes bytes) {
        if (e.crc32 != 0 && crc32Of(bytes) != e.crc32)
            m_doc.warnings.push_back("CRC-32 mismatch in record " + e.name + ": the file is corrupt or was edited");
    };

    std::vector<std::byte> pklScratch;
    const Bytes pkl = entryBytes(data, *dataPkl, pklScratch, std::size_t(1) << 31);
    checkCrc(*dataPkl, pkl);
    int protocol = 0;
    const NodeId dataRoot = runPickle(pkl, 0, "data.pkl", options, resolverFor("data"), nullptr, &protocol);
    m_properties.emplace_back("pickle_protocol", std::to_string(protocol));

    if (m_format == FileFormat::TorchScript) {
        // A TorchScript module: the module object from data.pkl and the constants tuple.
        std::vector<std::byte> constScratch;
        const Bytes constants = entryBytes(data, *constantsPkl, constScratch, std::size_t(1) << 31);
        checkCrc(*constantsPkl, constants);
        const NodeId constRoot = runPickle(constants, 0, "constants.pkl", options, resolverFor("constants"));
        m_doc.root = dataRoot;
        m_doc.extraRoots.emplace_back("constants.pkl", constRoot);
        std::size_t code = 0;
        for (const auto& e : zip.entries)
            code += e.name.find("/code/") != std::string::npos && e.name.ends_with(".py");
        m_properties.emplace_back("torchscript_code_files", std::to_string(code));
    } else {
        m_doc.root = dataRoot;
    }

    // Other pickles in the archive are not part of the object, but can carry payloads.
    for (const auto& e : zip.entries) {
        if (&e == dataPkl || &e == constantsPkl || !e.name.ends_with(".pkl"))
            continue;
        std::vector<std::byte> s;
        try {
            scanPickleSequence(m_imports, e.name.substr(e.name.find('/') + 1), entryBytes(data, e, s, std::size_t(1) << 28));
        } catch (const FormatError& err) {
            m_imports.notes.push_back(e.name + ": " + err.what());
        }
    }
    if (options.verifyCrc)
        verifyRecordCrcs();
}

// TorchScript archives from PyTorch 1.0-1.3: model.json describes the module tree and every
// tensor (dims, strides, dataType, a `tensors/N` record); attributes.pkl holds the rest.
void CheckpointFile::loadOldTorchScript(const std::string& prefix)
{
    m_format = FileFormat::TorchScript;
    const Bytes data = bytes();
    const ZipArchive& zip = *m_zip;
    std::vector<std::byte> scratch;
    const ZipEntry* modelJson = zip.find(prefix + "/model.json");
    nlohmann::json model;
    try {
        model = nlohmann::json::parse(asText(entryBytes(data, *modelJson, scratch, std::size_t(1) << 28)));
    } catch (const nlohmann::json::exception& e) {
        throw FormatError(std::string("model.json of this TorchScript archive is not valid JSON: ") + e.what());
    }
    m_properties.emplace_back("torchscript_layout", "model.json (PyTorch 1.0-1.3)");
    if (model.contains("producerVersion") && model["producerVersion"].is_string())
        m_properties.emplace_back("producer_version", model["producerVersion"].get<std::string>());

    static const std::map<std::string, DType> kTypes = {
        {"FLOAT", DType::Float32}, {"DOUBLE", DType::Float64}, {"HALF", DType::Float16}, {"BFLOAT16", DType::BFloat16},
        {"INT8", DType::Int8},     {"UINT8", DType::UInt8},    {"INT16", DType::Int16},  {"INT32", DType::Int32},
        {"INT64", DType::Int64},   {"BOOL", DType::Bool}};
    auto toInt = [](const nlohmann::json& v) -> int64_t {
        if (v.is_number_integer())
            return v.get<int64_t>();
        if (v.is_string())
            return std::stoll(v.get<std::string>());
        throw FormatError("model.json holds a non-numeric dimension");
    };
    std::vector<NodeId> tensorNodes;
    ValueGraph& g = m_doc.graph;
    const nlohmann::json tensors = model.value("tensors", nlohmann::json::array());
    for (const auto& tj : tensors) {
        TensorInfo t;
        const std::string type = tj.value("dataType", std::string("?"));
        const auto it = kTypes.find(type);
        t.dtype = it == kTypes.end() ? DType::Unknown : it->second;
        t.dtypeName = it == kTypes.end() ? type : std::string(dtypeName(t.dtype));
        for (const auto& d : tj.value("dims", nlohmann::json::array()))
            t.shape.push_back(toInt(d));
        for (const auto& d : tj.value("strides", nlohmann::json::array()))
            t.stride.push_back(toInt(d));
        t.storageOffset = tj.contains("offset") ? toInt(tj["offset"]) : 0;
        t.requiresGrad = tj.value("requiresGrad", false);
        t.device = tj.value("device", std::string("cpu"));
        const std::string key = tj.contains("data") ? tj["data"].value("key", std::string()) : std::string();
        StorageInfo s;
        s.key = key;
        s.dtype = t.dtype == DType::Unknown ? DType::UInt8 : t.dtype;
        s.location = t.device;
        if (const ZipEntry* e = zip.find(prefix + "/" + key)) {
            s.fileOffset = m_sliceOffset + e->dataOffset;
            s.byteSize = e->uncompressedSize;
            s.compressed = e->method != 0;
            s.zipEntry = static_cast<int32_t>(e - zip.entries.data());
            s.numel = s.byteSize / dtypeSize(s.dtype);
            s.available = true;
        } else {
            s.problem = "record " + key + " is missing from the archive";
        }
        m_doc.storages.push_back(std::move(s));
        t.storage = static_cast<int32_t>(m_doc.storages.size() - 1);
        m_doc.tensors.push_back(std::move(t));
        tensorNodes.push_back(g.add(Node{.kind = Kind::Tensor, .ref = static_cast<uint32_t>(m_doc.tensors.size() - 1)}));
    }
    for (std::size_t i = 0; i < m_doc.tensors.size(); ++i) {
        TensorInfo& t = m_doc.tensors[i];
        const auto& s = m_doc.storages[static_cast<std::size_t>(t.storage)];
        if (!s.problem.empty())
            t.problem = s.problem;
        // Same bound check as pickled tensors: the view must fit its record.
        Int128 last = t.storageOffset;
        bool empty = t.shape.size() != t.stride.size();
        for (std::size_t d = 0; d < t.shape.size() && d < t.stride.size(); ++d) {
            if (t.shape[d] <= 0 || t.stride[d] < 0)
                empty = empty || t.shape[d] == 0;
            else
                last += static_cast<Int128>(t.shape[d] - 1) * t.stride[d];
        }
        if (t.problem.empty() && (t.shape.size() != t.stride.size() || (!empty && last >= static_cast<Int128>(s.numel))))
            t.problem = "the view does not fit its record";
    }

    // The module tree: parameters and tensor attributes by name, submodules nested.
    std::function<NodeId(const nlohmann::json&, int)> module = [&](const nlohmann::json& m, int depth) -> NodeId {
        const NodeId node = g.add(Node{.kind = Kind::Dict, .text = "TorchScript module " + m.value("name", std::string())});
        auto add = [&](const std::string& name, NodeId value) {
            const NodeId k = g.addText(Kind::String, name);
            g[node].items.push_back(k);
            g[node].items.push_back(value);
        };
        auto tensorById = [&](const nlohmann::json& id) -> NodeId {
            const int64_t i = id.is_null() ? -1 : (id.is_string() ? std::stoll(id.get<std::string>()) : id.get<int64_t>());
            return i >= 0 && static_cast<std::size_t>(i) < tensorNodes.size() ? tensorNodes[static_cast<std::size_t>(i)]
                                                                              : g.addText(Kind::Invalid, "unknown tensor id");
        };
        for (const auto& p : m.value("parameters", nlohmann::json::array()))
            add(p.value("name", std::string("?")), tensorById(p.value("tensorId", nlohmann::json())));
        for (const auto& a : m.value("attributes", nlohmann::json::array())) {
            if (a.value("type", std::string()) == "Tensor")
                add(a.value("name", std::string("?")), tensorById(a.value("id", nlohmann::json())));
        }
        if (depth < 64) {
            for (const auto& sub : m.value("submodules", nlohmann::json::array()))
                add(sub.value("name", std::string("?")), module(sub, depth + 1));
        }
        return node;
    };
    try {
        m_doc.root = module(model.value("mainModule", nlohmann::json::object()), 0);
    } catch (const nlohmann::json::exception& e) {
        throw FormatError(std::string("model.json has an unexpected structure: ") + e.what());
    } catch (const std::logic_error& e) {
        throw FormatError(std::string("model.json holds a malformed number: ") + e.what());
    }
    for (const auto& e : zip.entries) {
        if (!e.name.ends_with(".pkl"))
            continue;
        std::vector<std::byte> s;
        scanPickleSequence(m_imports, e.name.substr(e.name.find('/') + 1), entryBytes(data, e, s, std::size_t(1) << 28));
    }
}

void CheckpointFile::verifyRecordCrcs()
{
    const Bytes data = bytes();
    std::vector<std::byte> scratch;
    for (const auto& e : m_zip->entries) {
        if (e.crc32 == 0)
            continue;
        const Bytes bytes = entryBytes(data, e, scratch);
        if (crc32Of(bytes) != e.crc32)
            m_doc.warnings.push_back("CRC-32 mismatch in record " + e.name + ": the file is corrupt or was edited");
        if (e.method == 0)
            m_file.adviseDone(m_sliceOffset + e.dataOffset, e.compressedSize);
    }
}

void CheckpointFile::loadLegacy(const OpenOptions& options)
{
    const Bytes data = bytes();
    const StorageResolver none = [](const StorageRequest&, std::string& problem) {
        problem = "a storage outside the object pickle";
        return -1;
    };
    std::size_t pos = 0;
    ValueGraph& g = m_doc.graph;

    const NodeId magic = runPickle(data, pos, "pickle #1 (magic number)", options, none, &pos);
    if (g[magic].kind != Kind::BigInt || g[magic].text != kLegacyMagicDecimal)
        throw FormatError("the legacy magic-number pickle holds something else: not a torch.save file");
    const NodeId protocol = runPickle(data, pos, "pickle #2 (protocol version)", options, none, &pos);
    if (g[protocol].kind != Kind::Int || g[protocol].i != 1001)
        throw FormatError("unsupported legacy protocol version " + reprOf(g, protocol) + " (expected 1001)");
    const NodeId sysInfo = runPickle(data, pos, "pickle #3 (sys_info)", options, none, &pos);
    m_properties.emplace_back("legacy_protocol", "1001");
    if (const NodeId le = g.get(sysInfo, "little_endian"); le != kNoNode && g[le].kind == Kind::Bool) {
        m_bigEndian = !g[le].flag;
        m_properties.emplace_back("byteorder", m_bigEndian ? "big" : "little");
    }

    std::map<std::string, int32_t> byKey;
    const StorageResolver resolver = [this, &byKey](const StorageRequest& req, std::string&) -> int32_t {
        if (const auto it = byKey.find(req.key); it != byKey.end())
            return it->second;
        StorageInfo s;
        s.key = req.key;
        s.location = req.location;
        s.dtype = req.dtype;
        s.numel = req.numel; // located after the key-list pickle, below
        m_doc.storages.push_back(std::move(s));
        const auto index = static_cast<int32_t>(m_doc.storages.size() - 1);
        byKey.emplace(req.key, index);
        return index;
    };
    int objectProtocol = 0;
    m_doc.root = runPickle(data, pos, "pickle #4 (object)", options, resolver, &pos, &objectProtocol);
    m_properties.emplace_back("pickle_protocol", std::to_string(objectProtocol));
    const NodeId keys = runPickle(data, pos, "pickle #5 (storage keys)", options, none, &pos);
    if (g[keys].kind != Kind::List)
        throw FormatError("the legacy storage-key pickle is not a list");

    // Raw storages follow in key order: int64 element count, then the elements.
    ByteReader r(data, pos);
    const std::vector<NodeId> keyNodes = g[keys].items;
    for (NodeId k : keyNodes) {
        const std::string key = g[k].kind == Kind::String ? g[k].text : reprOf(g, k);
        const auto it = byKey.find(key);
        if (it == byKey.end())
            throw FormatError("storage record '" + key + "' is listed but no tensor refers to it, so its size is unknown");
        StorageInfo& s = m_doc.storages[static_cast<std::size_t>(it->second)];
        if (r.remaining() < 8) {
            s.problem = "the file ends before storage " + key + " (truncated)";
            break;
        }
        const int64_t numel = r.i64();
        const UInt128 bytes = static_cast<UInt128>(static_cast<uint64_t>(numel)) * dtypeSize(s.dtype);
        if (numel < 0 || bytes > r.remaining()) {
            s.problem = "storage " + key + " needs " + std::to_string(static_cast<uint64_t>(bytes)) + " bytes but only "
                      + formatBytes(r.remaining()) + " remain (truncated)";
            break;
        }
        s.fileOffset = m_sliceOffset + r.pos();
        s.byteSize = static_cast<uint64_t>(bytes);
        s.problem.clear();
        if (static_cast<uint64_t>(numel) != s.numel)
            s.problem = "storage " + key + " has " + std::to_string(numel) + " elements but the object expects "
                      + std::to_string(s.numel);
        s.available = s.problem.empty();
        r.skip(static_cast<uint64_t>(bytes));
    }
    if (r.remaining() > 0)
        m_doc.warnings.push_back(formatBytes(r.remaining()) + " of unexplained data after the last storage");
    for (auto& s : m_doc.storages) {
        if (!s.available && s.problem.empty())
            s.problem = "storage " + s.key + " is not among the records after the pickles";
    }
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
    const NodeId root = g.add(Node{.kind = Kind::Dict});
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
    const SafetensorsIndex index = parseSafetensorsIndex(asText(bytes()));
    for (const auto& [k, v] : index.metadata)
        m_properties.emplace_back("metadata." + k, v);
    const std::string dir = path().find('/') == std::string::npos ? "." : path().substr(0, path().rfind('/'));

    std::vector<std::string> shardNames;
    for (const auto& [tensor, shard] : index.weightMap) {
        if (std::find(shardNames.begin(), shardNames.end(), shard) == shardNames.end())
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

    ValueGraph& g = m_doc.graph;
    const NodeId root = g.add(Node{.kind = Kind::Dict});
    std::set<std::pair<std::string, std::string>> listed;
    for (const auto& [name, shard] : index.weightMap) {
        listed.emplace(shard, name);
        NodeId value = kNoNode;
        const auto h = headers.find(shard);
        const SafetensorsTensor* st = nullptr;
        if (h != headers.end()) {
            for (const auto& t : h->second.second.tensors) {
                if (t.name == name)
                    st = &t;
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
            t.shape = st->shape;
            t.stride.assign(st->shape.size(), 1);
            for (std::size_t d = st->shape.size(); d-- > 1;)
                t.stride[d - 1] = t.stride[d] * std::max<int64_t>(st->shape[d], 1);
            t.storage = static_cast<int32_t>(m_doc.storages.size() - 1);
            if (st->dtype == DType::Unknown)
                t.problem = "sub-byte element type " + st->dtypeCode + " is listed but not decoded";
            m_doc.tensors.push_back(std::move(t));
            value = g.add(Node{.kind = Kind::Tensor, .ref = static_cast<uint32_t>(m_doc.tensors.size() - 1)});
        }
        const NodeId key = g.addText(Kind::String, name);
        g[root].items.push_back(key);
        g[root].items.push_back(value);
    }
    for (const auto& [shard, entry] : headers) {
        for (const auto& t : entry.second.tensors) {
            if (!listed.contains({shard, t.name}))
                m_doc.warnings.push_back("shard " + shard + " holds tensor " + t.name + ", which the index does not list");
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
