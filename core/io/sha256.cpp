// SPDX-License-Identifier: MIT
#include "ckpt/io/sha256.h"

#include "ckpt/io/read_only_file.h"

#include "ckpt/io/errors.h"

#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ckpt {

struct Sha256::State {
    EVP_MD_CTX* ctx = nullptr;
    ~State()
    {
        if (ctx)
            EVP_MD_CTX_free(ctx);
    }
};

namespace {

const EVP_MD* sha256Md()
{
    // Fetched once: EVP_sha256() would make every EVP_DigestInit_ex look the algorithm up
    // again in OpenSSL 3's provider tables.
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return md ? md : EVP_sha256();
#else
    return EVP_sha256();
#endif
}


} // namespace

Sha256::Sha256() : m_state(std::make_unique<State>())
{
    m_state->ctx = EVP_MD_CTX_new();
    if (!m_state->ctx)
        throw std::bad_alloc();
    reset();
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::reset()
{
    if (EVP_DigestInit_ex(m_state->ctx, sha256Md(), nullptr) != 1)
        throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
}

void Sha256::update(const void* data, std::size_t size)
{
    if (size && EVP_DigestUpdate(m_state->ctx, data, size) != 1)
        throw std::runtime_error("OpenSSL: SHA-256 update failed");
}

void Sha256::update(std::span<const std::byte> data) { update(data.data(), data.size()); }

Sha256Digest Sha256::finish()
{
    Sha256Digest out{};
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(m_state->ctx, out.data(), &len) != 1 || len != out.size())
        throw std::runtime_error("OpenSSL: SHA-256 final failed");
    reset();
    return out;
}

std::string toHex(const Sha256Digest& digest)
{
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(digest.size() * 2);
    for (uint8_t b : digest) {
        out += digits[b >> 4];
        out += digits[b & 15];
    }
    return out;
}

std::string sha256Hex(std::span<const std::byte> data)
{
    Sha256 h;
    h.update(data);
    return toHex(h.finish());
}

Sha256FileResult sha256File(const std::string& path, const std::function<bool(uint64_t)>& onChunk, Sha256* hasher)
{
    FileDescriptor fd = openRegularFileReadOnly(path);
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL); // a hint only; failure is harmless

    Sha256 local;
    Sha256& h = hasher ? *hasher : local;
    if (hasher)
        h.reset();
    // 256 KiB: small enough that the bytes pread() copies are still in the core's L2 cache when
    // they are hashed, large enough that syscalls cost nothing (64 KiB to 1 MiB measured alike).
    std::vector<std::byte> buffer(kSha256FileChunk);
    Sha256FileResult result;
    for (;;) {
        const ssize_t n = ::pread(fd.get(), buffer.data(), buffer.size(), static_cast<off_t>(result.bytes));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw FormatError("read error at byte " + std::to_string(result.bytes) + ": " + std::strerror(errno));
        }
        if (n == 0)
            break;
        h.update(buffer.data(), static_cast<std::size_t>(n));
        result.bytes += static_cast<uint64_t>(n);
        if (onChunk && !onChunk(static_cast<uint64_t>(n)))
            throw CancelledError();
    }
    result.digest = h.finish();
    return result;
}

} // namespace ckpt
