// SPDX-License-Identifier: MIT
// The zip-archive loaders, apart from the other formats: torch.save archives (1.6+) and TorchScript
// archives (data.pkl, plus constants.pkl), and the older TorchScript layout described by model.json.
#include "checkpoint_loaders.h"

#include "ckpt/formats/imports_scan.h"
#include "ckpt/io/zip_archive.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ckpt {
namespace {

using detail::formatBytes;

std::string trimmed(std::string_view s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\0'))
        s.remove_suffix(1);
    return std::string(s);
}

} // namespace

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

} // namespace ckpt
