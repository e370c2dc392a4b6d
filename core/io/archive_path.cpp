// SPDX-License-Identifier: MIT
#include "ckpt/io/archive_path.h"

#include "ckpt/io/errors.h"
#include "ckpt/io/read_only_file.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sys/mman.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ckpt {
namespace {

std::string memberName(std::string name)
{
    while (name.starts_with("./"))
        name.erase(0, 2);
    return name;
}

// Whether a member's name stays below the archive. An absolute name, or one climbing out with
// "..", joined to the archive's path names a file outside it ("exp/a.nemo" / "/home/u/c.yaml" is
// "/home/u/c.yaml"), which the layouts would then read as that member (caught by the tar fuzz
// target's check of these paths). NeMo never writes such names; tarfile refuses to extract them.
bool staysInside(const std::string& name)
{
    const fs::path p(name);
    if (p.is_absolute())
        return false;
    return std::none_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".."; });
}

// The archive's members, read through a read-only mapping that lives only as long as the index is
// built (headers are a few pages; the members' data is not touched).
std::vector<TarMember> indexOf(const std::string& archive)
{
    uint64_t size = 0;
    const FileDescriptor fd = openRegularFileReadOnly(archive, &size);
    if (size == 0)
        throw FormatError("not a tar archive: the file is empty");
    void* p = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p == MAP_FAILED)
        throw FormatError("cannot map the archive");
    struct Unmap {
        void* p;
        std::size_t n;
        ~Unmap() { ::munmap(p, n); }
    } unmap{p, static_cast<std::size_t>(size)};
    const Bytes bytes(static_cast<const std::byte*>(p), static_cast<std::size_t>(size));
    if (!looksLikeTar(bytes))
        throw FormatError("not an uncompressed tar archive");
    return tarIndex(bytes);
}

using ArchiveReader = std::unique_ptr<archive, decltype(&archive_read_free)>;

// libarchive's message for the last error. archive_error_string returns NULL when the failing
// call set none (a gzip tar that ends inside a pax header), and appending NULL to a
// std::string crashed (found by fuzzing).
std::string errorOf(archive* a)
{
    const char* message = archive_error_string(a);
    return message ? message : "unknown error";
}

// A compressed tar opened for streaming with libarchive (its decompressors and tar reader), or
// nullptr when the file is not one.
ArchiveReader openCompressedTar(const std::string& path)
{
    ArchiveReader a(archive_read_new(), &archive_read_free);
    archive_read_support_filter_gzip(a.get());
    archive_read_support_filter_bzip2(a.get());
    archive_read_support_filter_xz(a.get());
    archive_read_support_format_tar(a.get());
    if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK)
        return ArchiveReader(nullptr, &archive_read_free);
    if (archive_filter_count(a.get()) < 2) // only the "none" filter: not compressed
        return ArchiveReader(nullptr, &archive_read_free);
    return a;
}

// The regular members of a compressed tar with their sizes (offset 0: the data is compressed).
std::vector<TarMember> compressedIndex(const std::string& path)
{
    ArchiveReader a = openCompressedTar(path);
    if (!a)
        throw FormatError("not a tar archive");
    std::vector<TarMember> out;
    archive_entry* entry = nullptr;
    int rc = ARCHIVE_OK;
    while ((rc = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
        if (out.size() > 1000000)
            throw LimitError("the archive has more than 1000000 members (limit exceeded)");
        if (archive_entry_filetype(entry) == AE_IFREG && archive_entry_pathname(entry))
            out.push_back({archive_entry_pathname(entry), '0', 0, static_cast<uint64_t>(std::max<la_int64_t>(0, archive_entry_size(entry)))});
    }
    if (rc != ARCHIVE_EOF)
        throw FormatError(std::string("cannot read the compressed archive: ") + errorOf(a.get()));
    if (out.empty())
        throw FormatError("not a tar archive");
    return out;
}

bool isCompressedTar(const std::string& path)
{
    try {
        ArchiveReader a = openCompressedTar(path);
        archive_entry* entry = nullptr;
        return a && archive_read_next_header(a.get(), &entry) == ARCHIVE_OK;
    } catch (const std::exception&) {
        return false;
    }
}

} // namespace

FileDescriptor decompressMember(const ArchiveMemberRef& ref)
{
    if (ref.member.size > kDecompressedMemberLimit)
        throw FormatError("the member " + ref.member.name + " of the compressed archive is " + std::to_string(ref.member.size)
                          + " bytes, more than the " + std::to_string(kDecompressedMemberLimit) + " decompressed into memory; extract the archive");
    // A decompression bomb: gzip cannot pass ~1,032:1, while bzip2 and xz turn a few kilobytes of
    // repeated bytes into gigabytes (a 7,700-byte fuzz input stated a 1.6 GB member, all of it held
    // in memory). Real members (weights, configs, tokenizers) compress far less than 1,024:1.
    std::error_code sizeError;
    const uint64_t archiveBytes = std::filesystem::file_size(ref.archive, sizeError);
    constexpr uint64_t kBombRatio = 1024, kSmallMember = uint64_t{64} << 20;
    if (!sizeError && ref.member.size > kSmallMember && ref.member.size / kBombRatio > archiveBytes)
        throw FormatError("the member " + ref.member.name + " states " + std::to_string(ref.member.size) + " bytes from a "
                          + std::to_string(archiveBytes) + "-byte compressed archive, more than " + std::to_string(kBombRatio)
                          + " times its size: a decompression bomb, not read (extract it with a tool you trust if it is genuine)");
    ArchiveReader a = openCompressedTar(ref.archive);
    if (!a)
        throw FormatError("cannot reopen the compressed archive");
    const int fd = ::memfd_create("ckpt-archive-member", MFD_CLOEXEC);
    if (fd < 0)
        throw FormatError(std::string("cannot create an in-memory file: ") + std::strerror(errno));
    FileDescriptor guard(fd);
    archive_entry* entry = nullptr;
    while (archive_read_next_header(a.get(), &entry) == ARCHIVE_OK) {
        if (!archive_entry_pathname(entry) || ref.member.name != archive_entry_pathname(entry))
            continue;
        std::vector<char> buffer(1 << 20);
        uint64_t total = 0;
        for (la_ssize_t n; (n = archive_read_data(a.get(), buffer.data(), buffer.size())) != 0;) {
            if (n < 0)
                throw FormatError(std::string("cannot decompress ") + ref.member.name + ": " + errorOf(a.get()));
            total += static_cast<uint64_t>(n);
            if (total > ref.member.size || total > kDecompressedMemberLimit)
                throw FormatError("the member " + ref.member.name + " decompresses past its stated size");
            for (la_ssize_t done = 0; done < n;) {
                const ssize_t w = ::write(fd, buffer.data() + done, static_cast<std::size_t>(n - done));
                if (w < 0 && errno == EINTR)
                    continue;
                if (w <= 0)
                    throw FormatError(std::string("cannot hold the decompressed member in memory: ") + std::strerror(errno));
                done += w;
            }
        }
        // The caller maps the stated size: a shorter member (a truncated archive, or a second entry
        // of the same name) would leave pages past the in-memory file's end, which fault (SIGBUS).
        if (total != ref.member.size)
            throw FormatError("the member " + ref.member.name + " decompresses to " + std::to_string(total)
                              + " bytes, not the " + std::to_string(ref.member.size) + " its header states");
        return guard;
    }
    throw FormatError("the compressed archive has no member " + ref.member.name);
}

bool isTarFile(const std::string& path)
{
    try {
        const FileDescriptor fd = openRegularFileReadOnly(path);
        std::array<std::byte, 512> head{};
        return ::pread(fd.get(), head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()) && looksLikeTar(Bytes(head.data(), head.size()));
    } catch (const FormatError&) {
        return false;
    }
}

std::optional<ArchiveMemberRef> archiveMember(const std::string& path)
{
    std::error_code ec;
    if (path.empty() || fs::exists(fs::symlink_status(path, ec)))
        return std::nullopt;
    fs::path archive = fs::path(path).lexically_normal();
    fs::path rest;
    while (archive.has_relative_path() && archive.has_parent_path() && archive != archive.parent_path()) {
        rest = rest.empty() ? archive.filename() : archive.filename() / rest;
        archive = archive.parent_path();
        const fs::file_status st = fs::status(archive, ec);
        if (ec || !fs::exists(st))
            continue;
        if (!fs::is_regular_file(st))
            return std::nullopt;
        const bool plain = isTarFile(archive.string());
        if (!plain && !isCompressedTar(archive.string()))
            return std::nullopt;
        const std::string wanted = rest.lexically_normal().string();
        for (TarMember& m : plain ? indexOf(archive.string()) : compressedIndex(archive.string())) {
            if (m.type == '0' && memberName(m.name) == wanted)
                return ArchiveMemberRef{archive.string(), std::move(m), !plain};
        }
        throw FormatError("the archive " + archive.string() + " has no member " + wanted);
    }
    return std::nullopt;
}

std::vector<std::string> archiveMemberPaths(const std::string& archive)
{
    std::vector<std::string> out;
    for (const TarMember& m : isTarFile(archive) ? indexOf(archive) : compressedIndex(archive)) {
        if (m.type == '0' && staysInside(memberName(m.name)))
            out.push_back((fs::path(archive) / memberName(m.name)).string());
    }
    return out;
}

} // namespace ckpt
