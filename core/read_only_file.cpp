// SPDX-License-Identifier: MIT
#include "core/read_only_file.h"

#include "core/errors.h"

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

} // namespace ckpt
