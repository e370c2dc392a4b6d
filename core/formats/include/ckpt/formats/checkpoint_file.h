// SPDX-License-Identifier: MIT
// One checkpoint file, opened read-only and understood without running Python: torch.save
// zip archives (1.6+), legacy torch.save files (<1.6), TorchScript archives, safetensors and
// plain pickles. Bad input raises OpenError naming the file and the reason.
#pragma once

#include "ckpt/formats/file_sniff.h"
#include "ckpt/formats/imports_scan.h"
#include "ckpt/formats/key_path.h"
#include "ckpt/io/mapped_file.h"
#include "ckpt/io/zip_archive.h"
#include "ckpt/pickle/imports_report.h"
#include "ckpt/pickle/pickle_interpreter.h"
#include "ckpt/pickle/tensor_info.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckpt {

enum class FileFormat : uint8_t { TorchZip, TorchLegacy, TorchScript, Safetensors, SafetensorsIndex, Pickle };

/// "torch_zip", "torch_legacy", "torchscript", "safetensors", "safetensors_index", "pickle".
const char* formatName(FileFormat format);

/// Opening failed. what() reads "<path>: <reason>".
class OpenError : public std::runtime_error {
public:
    OpenError(const std::string& path, const std::string& reason)
        : std::runtime_error(path + ": " + reason), m_path(path), m_reason(reason) {}
    const std::string& path() const { return m_path; }
    const std::string& reason() const { return m_reason; }

private:
    std::string m_path, m_reason;
};

struct OpenOptions {
    PickleLimits limits;
    std::size_t maxDepth = 1000;
    bool verifyCrc = false; // also check the CRC of every tensor record (reads all data)
};

class CheckpointFile {
public:
    static std::unique_ptr<CheckpointFile> open(const std::string& path, const OpenOptions& options = {});
    /// A checkpoint embedded in a larger file at [offset, offset + length): the items of a
    /// torch.distributed.checkpoint .distcp file are complete torch.save archives.
    static std::unique_ptr<CheckpointFile> openSlice(const std::string& path, uint64_t offset, uint64_t length,
                                                     const OpenOptions& options = {});

    const std::string& path() const { return m_file.path(); }
    uint64_t fileSize() const { return m_file.size(); }
    FileFormat format() const { return m_format; }
    const Document& document() const { return m_doc; }
    const ValueGraph& graph() const { return m_doc.graph; }
    NodeId root() const { return m_doc.root; }
    const std::vector<TensorInfo>& tensors() const { return m_doc.tensors; }
    const std::vector<StorageInfo>& storages() const { return m_doc.storages; }
    const std::vector<std::string>& warnings() const { return m_doc.warnings; }
    const ImportsReport& imports() const { return m_imports; }
    /// Facts about the container: zip prefix, byteorder, version records, pickle protocol...
    const std::vector<std::pair<std::string, std::string>>& properties() const { return m_properties; }
    std::optional<std::string> property(const std::string& key) const;
    /// True when storages hold big-endian bytes (the `byteorder` record or legacy sys_info).
    bool bigEndian() const { return m_bigEndian; }

    /// Makes `node` (a value inside the document) the root the readers start from and key paths
    /// count from: Megatron's distributed checkpoint pickles each object in a one-element list.
    void setRoot(NodeId node);

    /// Every tensor with its key path (computed once on open).
    const std::vector<TensorEntry>& tensorEntries() const { return m_entries; }

    /// The bytes of one storage: a zero-copy view of the mapped file for stored records;
    /// DEFLATE records are inflated into `scratch`. Throws FormatError when unavailable.
    Bytes storageBytes(std::size_t storage, std::vector<std::byte>& scratch) const;

    /// The bytes of a tensor's view region (offset .. last element), or empty when it has none.
    Bytes tensorRegion(const TensorInfo& tensor, std::vector<std::byte>& scratch) const;

    const MappedFile& mappedFile() const { return m_file; }
    /// The shard files a sharded safetensors index refers to (StorageInfo::fileIndex - 1).
    const std::vector<MappedFile>& shards() const { return m_shards; }
    const ZipArchive* zip() const { return m_zip ? &*m_zip : nullptr; }

private:
    CheckpointFile() = default;
    void load(const OpenOptions& options);
    void loadTorchZip(const OpenOptions& options);
    void loadOldTorchScript(const std::string& prefix);
    void loadLegacy(const OpenOptions& options);
    void loadSafetensors();
    void loadSafetensorsIndex();
    void loadPlainPickle(const OpenOptions& options);
    NodeId runPickle(Bytes data, std::size_t start, const std::string& record, const OpenOptions& options,
                     const StorageResolver& resolver, std::size_t* end = nullptr, int* protocol = nullptr);
    void verifyRecordCrcs();
    Bytes bytes() const; // the whole file, or the slice this checkpoint occupies

    MappedFile m_file;
    std::vector<MappedFile> m_shards;
    FileFormat m_format = FileFormat::Pickle;
    Document m_doc;
    ImportsReport m_imports;
    std::vector<std::pair<std::string, std::string>> m_properties;
    std::optional<ZipArchive> m_zip;
    std::vector<TensorEntry> m_entries;
    bool m_bigEndian = false;
    bool m_sliced = false;
    uint64_t m_sliceOffset = 0, m_sliceLength = 0;
};

} // namespace ckpt
