// SPDX-License-Identifier: MIT
#include "ckpt/io/read_only_file.h"

#include "ckpt/io/archive_path.h"
#include "ckpt/io/errors.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ckpt {

FileDescriptor::~FileDescriptor()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = other.m_fd;
        other.m_fd = -1;
    }
    return *this;
}

FileDescriptor openRegularFileReadOnly(const std::string& path, uint64_t* size)
{
    // O_NONBLOCK: opening a FIFO someone left in a checkpoint directory must not hang; it has
    // no effect on reads from regular files. O_NOATIME keeps even the access time as it was;
    // the kernel only allows it to the file's owner (EPERM otherwise), so fall back without it.
    const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
    int fd = ::open(path.c_str(), flags | O_NOATIME);
    if (fd < 0 && errno == EPERM)
        fd = ::open(path.c_str(), flags);
    if (fd < 0)
        throw FormatError(std::string("cannot open: ") + std::strerror(errno));
    FileDescriptor guard(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw FormatError(std::string("cannot stat: ") + std::strerror(errno));
    if (S_ISDIR(st.st_mode))
        throw FormatError("is a directory, not a file");
    if (!S_ISREG(st.st_mode))
        throw FormatError("is not a regular file");
    if (size)
        *size = static_cast<uint64_t>(st.st_size);
    return guard;
}

std::string readBoundedFile(const std::string& path, std::size_t limit)
{
    if (const std::optional<ArchiveMemberRef> member = archiveMember(path)) {
        if (member->member.size > limit)
            throw FormatError("is " + std::to_string(member->member.size) + " bytes, more than the " + std::to_string(limit) + " read");
        const FileDescriptor fd = member->compressed ? decompressMember(*member) : openRegularFileReadOnly(member->archive);
        const uint64_t offset = member->compressed ? 0 : member->member.offset;
        std::string out(static_cast<std::size_t>(member->member.size), '\0');
        std::size_t done = 0;
        while (done < out.size()) {
            const ssize_t n = ::pread(fd.get(), out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                throw FormatError(std::string("read error in the archive: ") + (n < 0 ? std::strerror(errno) : "it ended early"));
            done += static_cast<std::size_t>(n);
        }
        return out;
    }
    uint64_t size = 0;
    const FileDescriptor fd = openRegularFileReadOnly(path, &size);
    if (size > limit)
        throw FormatError("is " + std::to_string(size) + " bytes, more than the " + std::to_string(limit) + " read");
    std::string out;
    out.reserve(static_cast<std::size_t>(size));
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw FormatError(std::string("read error: ") + std::strerror(errno));
        }
        if (n == 0)
            break;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > limit) // the file grew while we read it
            throw FormatError("is larger than the " + std::to_string(limit) + " bytes read");
    }
    return out;
}

} // namespace ckpt
