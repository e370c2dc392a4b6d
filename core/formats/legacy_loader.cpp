// SPDX-License-Identifier: MIT
// The legacy torch.save loader (PyTorch < 1.6, no zip), a format of its own: five pickles in a row
// (magic number, protocol, sys_info, the object, the storage keys), then the raw storages.
#include "checkpoint_loaders.h"

#include "ckpt/formats/key_path.h"
#include "ckpt/io/byte_reader.h"

#include <map>
#include <string>
#include <string_view>

namespace ckpt {
namespace {

constexpr std::string_view kLegacyMagicDecimal = "119547037146038801333356";

using detail::formatBytes;

} // namespace

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

} // namespace ckpt
