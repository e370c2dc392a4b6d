// SPDX-License-Identifier: MIT
#include "ckpt/io/mapped_file.h"

#include "ckpt/io/archive_path.h"
#include "ckpt/io/read_only_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace ckpt {
namespace {

void advise(void* base, std::size_t size, std::size_t offset, std::size_t length, int how)
{
    if (!base || offset >= size)
        return;
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t start = offset / page * page;
    const std::size_t end = std::min(size, offset + length);
    ::madvise(static_cast<char*>(base) + start, end - start, how);
}

} // namespace

MappedFile MappedFile::open(const std::string& path)
{
    std::optional<ArchiveMemberRef> member = archiveMember(path);
    uint64_t size = 0;
    FileDescriptor fd;
    if (member && member->compressed) { // its bytes exist only decompressed: an in-memory file of them
        fd = decompressMember(*member);
        size = member->member.size;
        member.reset();
    } else {
        fd = openRegularFileReadOnly(member ? member->archive : path, &size);
    }
    MappedFile file;
    file.m_path = path;
    file.m_size = static_cast<std::size_t>(size);
    file.m_mapSize = file.m_size;
    file.m_fd = ::dup(fd.get()); // kept for readAt(); read-only, never locked
    // readAt() fetches zip local headers, 30-odd bytes in front of each record: without this the
    // kernel reads ahead into every record's data (a run of 100 archives: 6.2 MiB instead of 1).
    if (file.m_fd >= 0)
        ::posix_fadvise(file.m_fd, 0, 0, POSIX_FADV_RANDOM); // a hint only; failure is harmless
    if (file.m_size == 0)
        return file;
    void* p = ::mmap(nullptr, file.m_size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p == MAP_FAILED)
        throw FormatError(std::string("cannot map the file: ") + std::strerror(errno));
    file.m_map = p;
    file.m_data = p;
    // Readers touch small scattered structures (zip headers, the pickle); without this the
    // kernel maps ~64 KiB around every touched page and resident memory grows with file size.
    ::madvise(p, file.m_size, MADV_RANDOM);
    if (member) {
        if (member->member.offset > size || member->member.size > size - member->member.offset)
            throw FormatError("the archive member lies outside " + member->archive);
        file.m_offset = member->member.offset;
        file.m_data = static_cast<char*>(p) + member->member.offset;
        file.m_size = static_cast<std::size_t>(member->member.size);
    }
    return file;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : m_path(std::move(other.m_path))
    , m_fd(std::exchange(other.m_fd, -1))
    , m_data(std::exchange(other.m_data, nullptr))
    , m_size(std::exchange(other.m_size, 0))
    , m_map(std::exchange(other.m_map, nullptr))
    , m_mapSize(std::exchange(other.m_mapSize, 0))
    , m_offset(std::exchange(other.m_offset, 0))
{
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept
{
    if (this != &other) {
        reset();
        m_path = std::move(other.m_path);
        m_fd = std::exchange(other.m_fd, -1);
        m_data = std::exchange(other.m_data, nullptr);
        m_size = std::exchange(other.m_size, 0);
        m_map = std::exchange(other.m_map, nullptr);
        m_mapSize = std::exchange(other.m_mapSize, 0);
        m_offset = std::exchange(other.m_offset, 0);
    }
    return *this;
}

MappedFile::~MappedFile() { reset(); }

void MappedFile::reset()
{
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
    if (m_map)
        ::munmap(m_map, m_mapSize);
    m_map = nullptr;
    m_mapSize = 0;
    m_offset = 0;
    m_data = nullptr;
    m_size = 0;
}

void MappedFile::readAt(uint64_t offset, std::span<std::byte> out) const
{
    if (offset > m_size || out.size() > m_size - offset)
        throw FormatError("read of " + std::to_string(out.size()) + " bytes at offset " + std::to_string(offset)
                          + " lies beyond the end of the file");
    std::size_t done = 0;
    while (done < out.size()) {
        const ssize_t n = m_fd >= 0 ? ::pread(m_fd, out.data() + done, out.size() - done, static_cast<off_t>(m_offset + offset + done)) : -1;
        if (n <= 0) { // no descriptor (or an error): fall back to the mapping
            std::memcpy(out.data() + done, static_cast<const std::byte*>(m_data) + offset + done, out.size() - done);
            return;
        }
        done += static_cast<std::size_t>(n);
    }
}

void MappedFile::adviseSequential(std::size_t offset, std::size_t length) const
{
    advise(m_map, m_mapSize, static_cast<std::size_t>(m_offset) + offset, std::min(length, m_size - std::min(offset, m_size)), MADV_SEQUENTIAL);
}

void MappedFile::adviseDone(std::size_t offset, std::size_t length) const
{
    advise(m_map, m_mapSize, static_cast<std::size_t>(m_offset) + offset, std::min(length, m_size - std::min(offset, m_size)), MADV_DONTNEED);
}

} // namespace ckpt
