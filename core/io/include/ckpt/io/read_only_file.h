// SPDX-License-Identifier: MIT
// Opening a user's file the only way this project does: read-only, never locked, without
// updating its access time where the kernel allows, and refusing what is not a regular file.
#pragma once

#include <cstddef>
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

/// Reads a whole small regular file (a sidecar: manifest, trainer state, metrics log, pointer)
/// through openRegularFileReadOnly, so a FIFO, a device or a huge file cannot hang or exhaust
/// memory. Throws FormatError naming the reason when it is not readable or exceeds `limit`.
std::string readBoundedFile(const std::string& path, std::size_t limit);

/// Sidecar limits: JSON written by a trainer next to its checkpoints, and metrics logs, which
/// grow with the run (a million logged steps of a dozen metrics is ~200 MB).
inline constexpr std::size_t kSidecarJsonLimit = std::size_t{64} << 20;
inline constexpr std::size_t kMetricsLogLimit = std::size_t{512} << 20;

} // namespace ckpt
