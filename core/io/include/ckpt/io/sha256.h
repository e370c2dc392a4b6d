// SPDX-License-Identifier: MIT
// SHA-256 through OpenSSL's libcrypto (EVP), which picks the fastest code path the CPU has
// (SHA-NI, AVX2, ...): several times faster than a portable C implementation such as
// coreutils' sha256sum. Files are streamed in fixed-size chunks, so memory stays bounded
// whatever their size; they are opened read-only and never locked or written.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace ckpt {

using Sha256Digest = std::array<uint8_t, 32>;

/// Incremental SHA-256: update() any number of times, then finish(). Reusable after reset().
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(Sha256&&) noexcept;
    Sha256& operator=(Sha256&&) noexcept;
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    void reset();
    void update(std::span<const std::byte> data);
    void update(const void* data, std::size_t size);
    Sha256Digest finish(); // resets the state for the next message

private:
    struct State;
    std::unique_ptr<State> m_state;
};

/// Lower-case hex of a digest (64 characters).
std::string toHex(const Sha256Digest& digest);

/// SHA-256 of bytes in memory, as lower-case hex.
std::string sha256Hex(std::span<const std::byte> data);

/// Chunk size sha256File reads at a time.
inline constexpr std::size_t kSha256FileChunk = std::size_t{256} << 10;

struct Sha256FileResult {
    Sha256Digest digest{};
    uint64_t bytes = 0; // bytes read and hashed
    std::string hex() const { return toHex(digest); }
};

/// Hashes a file by streaming it with pread() in kSha256FileChunk pieces (O_RDONLY, with
/// O_NOATIME where permitted, so not even the access time changes). After each chunk
/// `onChunk(bytesInChunk)` is called when set; returning false stops and throws
/// CancelledError (core/io/include/ckpt/io/errors.h). Throws FormatError ("cannot open: ...", "read error at
/// byte N: ...") when the file cannot be read. `hasher` may be passed to reuse its context.
Sha256FileResult sha256File(const std::string& path, const std::function<bool(uint64_t)>& onChunk = {},
                            Sha256* hasher = nullptr);

} // namespace ckpt
