// SPDX-License-Identifier: MIT
// Opening a user's file the only way this project does: read-only, never locked, without
// updating its access time where the kernel allows, and refusing what is not a regular file.
#pragma once

#include <cstdint>
#include <string>

namespace ckpt {

/// Owns a file descriptor.
class FileDescriptor {
public:
    explicit FileDescriptor(int fd = -1) : m_fd(fd) {}
    ~FileDescriptor();
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    FileDescriptor(FileDescriptor&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }
    FileDescriptor& operator=(FileDescriptor&& other) noexcept;
    int get() const { return m_fd; }

private:
    int m_fd;
};

/// Opens `path` read-only (O_NOATIME when permitted, O_NONBLOCK so a FIFO cannot hang us) and
/// checks that it is a regular file. Throws FormatError naming the reason; returns the size.
FileDescriptor openRegularFileReadOnly(const std::string& path, uint64_t* size = nullptr);

} // namespace ckpt
