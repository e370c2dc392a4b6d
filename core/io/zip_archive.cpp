// SPDX-License-Identifier: MIT
#include "ckpt/io/zip_archive.h"

#include <algorithm>
#include <zlib.h>

namespace ckpt {
namespace {

constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kLocalSig = 0x04034b50;
constexpr std::size_t kEocdSize = 22;
constexpr std::size_t kMaxComment = 0xFFFF;

struct Directory {
    uint64_t entryCount = 0;
    uint64_t size = 0;
    uint64_t offset = 0;
    uint64_t end = 0; // where the directory's trailing records begin
    bool zip64 = false;
};

std::size_t findEocd(Bytes file)
{
    if (file.size() < kEocdSize)
        throw FormatError("too short to be a zip archive (" + std::to_string(file.size()) + " bytes)");
    const std::size_t lowest = file.size() > kEocdSize + kMaxComment ? file.size() - kEocdSize - kMaxComment : 0;
    for (std::size_t pos = file.size() - kEocdSize + 1; pos-- > lowest;) {
        if (loadLE<uint32_t>(file, pos) == kEocdSig)
            return pos;
    }
    throw FormatError("no zip end-of-central-directory record: the file is truncated or not a zip archive");
}

Directory readDirectory(Bytes file)
{
    const std::size_t eocd = findEocd(file);
    ByteReader r(file, eocd + 4);
    const uint16_t disk = r.u16();
    const uint16_t cdDisk = r.u16();
    r.u16(); // entries on this disk
    Directory dir;
    dir.entryCount = r.u16();
    dir.size = r.u32();
    dir.offset = r.u32();
    dir.end = eocd;
    if (disk != 0 && disk != 0xFFFF)
        throw FormatError("multi-disk zip archives are not supported");
    (void)cdDisk;

    // torch.save always writes ZIP64 records; the locator sits right before the classic EOCD.
    if (eocd >= 20 && loadLE<uint32_t>(file, eocd - 20) == kZip64LocatorSig) {
        ByteReader loc(file, eocd - 20 + 8);
        const uint64_t z64 = loc.u64();
        if (z64 > file.size() || file.size() - z64 < 56 || loadLE<uint32_t>(file, z64) != kZip64EocdSig)
            throw FormatError("the ZIP64 end-of-central-directory locator points at offset " + std::to_string(z64)
                              + ", which holds no ZIP64 record");
        ByteReader z(file, z64 + 4);
        z.u64(); // record size
        z.u16(); // version made by
        z.u16(); // version needed
        z.u32(); // disk
        z.u32(); // cd disk
        z.u64(); // entries on disk
        dir.entryCount = z.u64();
        dir.size = z.u64();
        dir.offset = z.u64();
        dir.end = z64;
        dir.zip64 = true;
    } else if (dir.entryCount == 0xFFFF || dir.size == 0xFFFFFFFF || dir.offset == 0xFFFFFFFF) {
        throw FormatError("the zip end record needs ZIP64 values but the ZIP64 record is missing");
    }
    if (dir.offset > dir.end || dir.size > dir.end - dir.offset)
        throw FormatError("the zip central directory (offset " + std::to_string(dir.offset) + ", "
                          + std::to_string(dir.size) + " bytes) lies outside the file: the file is truncated or corrupt");
    // Each central record takes at least 46 bytes, which bounds the count we are willing to believe.
    if (dir.entryCount > dir.size / 46)
        throw FormatError("the zip end record claims " + std::to_string(dir.entryCount)
                          + " entries, more than its central directory can hold");
    return dir;
}

// APPNOTE 4.5.3: the ZIP64 extra holds only the fields whose 32-bit slot is saturated, in order.
void applyZip64Extra(Bytes extra, ZipEntry& e, bool needU, bool needC, bool needOffset)
{
    ByteReader r(extra);
    while (r.remaining() >= 4) {
        const uint16_t id = r.u16();
        const uint16_t len = r.u16();
        Bytes body = r.take(len);
        if (id != 0x0001)
            continue;
        ByteReader f(body);
        if (needU)
            e.uncompressedSize = f.u64();
        if (needC)
            e.compressedSize = f.u64();
        if (needOffset)
            e.localHeaderOffset = f.u64();
        return;
    }
    if (needU || needC || needOffset)
        throw FormatError("zip entry '" + e.name + "' needs a ZIP64 extra field but has none");
}

ZipEntry readCentralEntry(ByteReader& r, Bytes file)
{
    if (r.u32() != kCentralSig)
        throw FormatError("zip central directory entry at offset " + std::to_string(r.pos() - 4)
                          + " has a bad signature");
    ZipEntry e;
    r.u16(); // version made by
    r.u16(); // version needed
    e.flags = r.u16();
    e.method = r.u16();
    r.u32(); // dos time + date
    e.crc32 = r.u32();
    e.compressedSize = r.u32();
    e.uncompressedSize = r.u32();
    const uint16_t nameLen = r.u16();
    const uint16_t extraLen = r.u16();
    const uint16_t commentLen = r.u16();
    r.u16(); // disk
    r.u16(); // internal attributes
    r.u32(); // external attributes
    e.localHeaderOffset = r.u32();
    e.name = std::string(asText(r.take(nameLen)));
    const Bytes extra = r.take(extraLen);
    r.skip(commentLen);
    applyZip64Extra(extra, e, e.uncompressedSize == 0xFFFFFFFF, e.compressedSize == 0xFFFFFFFF,
                    e.localHeaderOffset == 0xFFFFFFFF);
    (void)file;
    return e;
}

// Sizes live in the central directory only (local headers say 0, flag bit 3); the local
// header is read just to find where the data starts.
void locateData(Bytes file, uint64_t directoryOffset, ZipEntry& e, std::vector<std::string>& warnings,
                const ZipArchive::HeaderReader& readHeader)
{
    if (e.localHeaderOffset > directoryOffset || directoryOffset - e.localHeaderOffset < 30)
        throw FormatError("zip entry '" + e.name + "' has a local header offset (" + std::to_string(e.localHeaderOffset)
                          + ") outside the archive data");
    // The 30-byte header plus the name; read through the hook when there is one.
    const std::size_t want = static_cast<std::size_t>(std::min<uint64_t>(30 + e.name.size(), directoryOffset - e.localHeaderOffset));
    std::vector<std::byte> copy;
    Bytes header = file.subspan(e.localHeaderOffset, want);
    if (readHeader) {
        copy.resize(want);
        readHeader(e.localHeaderOffset, copy);
        header = copy;
    }
    ByteReader r(header);
    if (r.u32() != kLocalSig)
        throw FormatError("zip entry '" + e.name + "' has no local header at offset " + std::to_string(e.localHeaderOffset));
    r.skip(22);
    const uint16_t nameLen = r.u16();
    const uint16_t extraLen = r.u16();
    const std::string localName = nameLen <= r.remaining() ? std::string(asText(r.take(nameLen))) : std::string("?");
    if (localName != e.name)
        warnings.push_back("zip entry '" + e.name + "': its local header names it '" + localName
                           + "' (a trick some malicious archives use to hide a member from scanners)");
    e.dataOffset = e.localHeaderOffset + 30 + nameLen + extraLen;
    if (e.dataOffset > directoryOffset || e.compressedSize > directoryOffset - e.dataOffset)
        throw FormatError("zip entry '" + e.name + "' (" + std::to_string(e.compressedSize) + " bytes at offset "
                          + std::to_string(e.dataOffset) + ") runs past the end of the archive data: the file is truncated or corrupt");
}

void checkNames(const ZipArchive& zip)
{
    for (const auto& e : zip.entries) {
        if (e.name.empty() || e.name.front() == '/' || e.name.find("..") != std::string::npos)
            throw FormatError("zip entry name '" + e.name + "' is empty, absolute or contains '..'");
    }
}

void checkOverlaps(ZipArchive& zip)
{
    std::vector<const ZipEntry*> sorted;
    for (const auto& e : zip.entries)
        sorted.push_back(&e);
    std::sort(sorted.begin(), sorted.end(),
              [](const ZipEntry* a, const ZipEntry* b) { return a->dataOffset < b->dataOffset; });
    for (std::size_t i = 1; i < sorted.size(); ++i) {
        const ZipEntry& prev = *sorted[i - 1];
        if (prev.dataOffset + prev.compressedSize > sorted[i]->localHeaderOffset)
            throw FormatError("zip entries '" + prev.name + "' and '" + sorted[i]->name
                              + "' overlap (a zip-bomb construction or a corrupt archive)");
    }
}

} // namespace

ZipArchive ZipArchive::parse(Bytes file, const HeaderReader& readHeader)
{
    if (file.size() < 4 || loadLE<uint32_t>(file, 0) != kLocalSig)
        throw FormatError("not a zip archive (no PK\\3\\4 signature at the start)");
    const Directory dir = readDirectory(file);
    ZipArchive zip;
    zip.zip64 = dir.zip64;
    ByteReader r(file.subspan(0, dir.offset + dir.size), dir.offset);
    zip.entries.reserve(dir.entryCount);
    for (uint64_t i = 0; i < dir.entryCount; ++i)
        zip.entries.push_back(readCentralEntry(r, file));
    if (r.remaining() != 0)
        zip.warnings.push_back("the zip central directory has " + std::to_string(r.remaining())
                               + " unexplained bytes after its last entry");
    for (auto& e : zip.entries) {
        locateData(file, dir.offset, e, zip.warnings, readHeader);
        if (e.flags & 0x0001)
            zip.warnings.push_back("zip entry '" + e.name + "' is marked encrypted; PyTorch ignores the flag and so do we");
        if (e.method != 0 && e.method != 8)
            throw FormatError("zip entry '" + e.name + "' uses compression method " + std::to_string(e.method)
                              + "; only stored (0) and deflate (8) are supported");
        if (e.method == 0 && e.compressedSize != e.uncompressedSize && !(e.flags & 0x0001))
            throw FormatError("stored zip entry '" + e.name + "' has different compressed and uncompressed sizes");
    }
    checkNames(zip);
    checkOverlaps(zip);
    zip.byName.resize(zip.entries.size());
    for (uint32_t i = 0; i < zip.byName.size(); ++i)
        zip.byName[i] = i;
    std::stable_sort(zip.byName.begin(), zip.byName.end(),
                     [&](uint32_t a, uint32_t b) { return zip.entries[a].name < zip.entries[b].name; });
    return zip;
}

const ZipEntry* ZipArchive::find(std::string_view name) const
{
    if (byName.size() != entries.size()) { // not made by parse(): no index
        for (const auto& e : entries) {
            if (e.name == name)
                return &e;
        }
        return nullptr;
    }
    const auto it = std::lower_bound(byName.begin(), byName.end(), name,
                                     [&](uint32_t i, std::string_view n) { return entries[i].name < n; });
    return it != byName.end() && entries[*it].name == name ? &entries[*it] : nullptr;
}

uint32_t crc32Of(Bytes data, uint32_t seed)
{
    uLong crc = seed;
    const auto* p = reinterpret_cast<const Bytef*>(data.data());
    std::size_t left = data.size();
    while (left > 0) {
        const auto chunk = static_cast<uInt>(std::min<std::size_t>(left, 1u << 30));
        crc = ::crc32(crc, p, chunk);
        p += chunk;
        left -= chunk;
    }
    return static_cast<uint32_t>(crc);
}

Bytes entryBytes(Bytes file, const ZipEntry& entry, std::vector<std::byte>& scratch, uint64_t maxInflated)
{
    const Bytes raw = file.subspan(entry.dataOffset, entry.compressedSize);
    if (entry.method == 0)
        return raw;
    if (entry.uncompressedSize > maxInflated)
        throw LimitError("deflated zip entry '" + entry.name + "' claims " + std::to_string(entry.uncompressedSize)
                         + " bytes, more than the " + std::to_string(maxInflated) + "-byte limit");
    // DEFLATE expands at most 1032:1 (a 258-byte match per two bits); a claim beyond that is a lie
    // that would make a tiny file allocate (and zero) gigabytes before inflating a single byte.
    if (entry.uncompressedSize > 1024 && (entry.uncompressedSize - 1024) / 1032 > entry.compressedSize)
        throw FormatError("deflated zip entry '" + entry.name + "' claims " + std::to_string(entry.uncompressedSize)
                          + " bytes, more than its " + std::to_string(entry.compressedSize)
                          + " compressed bytes can hold: the archive is corrupt");
    scratch.assign(entry.uncompressedSize, std::byte{0});
    z_stream zs{};
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
        throw FormatError("cannot start the deflate decoder");
    zs.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(raw.data()));
    zs.next_out = reinterpret_cast<Bytef*>(scratch.data());
    std::size_t inLeft = raw.size();
    std::size_t outLeft = scratch.size();
    int rc = Z_OK;
    while (rc == Z_OK) {
        zs.avail_in = static_cast<uInt>(std::min<std::size_t>(inLeft, 1u << 30));
        zs.avail_out = static_cast<uInt>(std::min<std::size_t>(outLeft, 1u << 30));
        const uInt inBefore = zs.avail_in;
        const uInt outBefore = zs.avail_out;
        rc = inflate(&zs, Z_NO_FLUSH);
        inLeft -= inBefore - zs.avail_in;
        outLeft -= outBefore - zs.avail_out;
        if (rc == Z_OK && inBefore == zs.avail_in && outBefore == zs.avail_out)
            break; // no progress: input ended early or output is full
    }
    inflateEnd(&zs);
    if (rc != Z_STREAM_END || outLeft != 0)
        throw FormatError("deflated zip entry '" + entry.name + "' does not inflate to its recorded "
                          + std::to_string(entry.uncompressedSize) + " bytes");
    return scratch;
}

} // namespace ckpt
