// SPDX-License-Identifier: MIT
// Bounds-checked little-endian reads over untrusted bytes. Every read checks the remaining
// length first, so a lying length field becomes a FormatError, never an out-of-bounds read.
#pragma once

#include "ckpt/io/errors.h"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace ckpt {

using Bytes = std::span<const std::byte>;

inline std::string_view asText(Bytes bytes)
{
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

class ByteReader {
public:
    explicit ByteReader(Bytes data, std::size_t pos = 0) : m_data(data), m_pos(pos) {}

    std::size_t pos() const { return m_pos; }
    std::size_t size() const { return m_data.size(); }
    std::size_t remaining() const { return m_pos <= m_data.size() ? m_data.size() - m_pos : 0; }
    bool atEnd() const { return remaining() == 0; }
    void seek(std::size_t pos)
    {
        if (pos > m_data.size())
            throw FormatError("offset " + std::to_string(pos) + " lies beyond the end of the data ("
                              + std::to_string(m_data.size()) + " bytes)");
        m_pos = pos;
    }

    void require(uint64_t n) const
    {
        if (n > remaining())
            throw FormatError("truncated: needs " + std::to_string(n) + " bytes at offset "
                              + std::to_string(m_pos) + " but only " + std::to_string(remaining())
                              + " remain");
    }

    Bytes take(uint64_t n)
    {
        require(n);
        Bytes out = m_data.subspan(m_pos, static_cast<std::size_t>(n));
        m_pos += static_cast<std::size_t>(n);
        return out;
    }
    void skip(uint64_t n) { take(n); }

    uint8_t u8() { return static_cast<uint8_t>(take(1)[0]); }
    uint16_t u16() { return load<uint16_t>(); }
    uint32_t u32() { return load<uint32_t>(); }
    uint64_t u64() { return load<uint64_t>(); }
    int32_t i32() { return static_cast<int32_t>(load<uint32_t>()); }
    int64_t i64() { return static_cast<int64_t>(load<uint64_t>()); }

    /// Pickle's BINFLOAT is the one big-endian field we read.
    double f64be()
    {
        uint64_t raw = 0;
        const Bytes b = take(8);
        for (std::byte x : b)
            raw = (raw << 8) | static_cast<uint8_t>(x);
        return std::bit_cast<double>(raw);
    }

    /// Reads up to and excluding '\n' (consumes the newline); used by protocol-0 opcodes.
    std::string_view line()
    {
        const std::string_view rest = asText(m_data.subspan(m_pos));
        const auto nl = rest.find('\n');
        if (nl == std::string_view::npos)
            throw FormatError("truncated: a text field at offset " + std::to_string(m_pos)
                              + " has no terminating newline");
        m_pos += nl + 1;
        return rest.substr(0, nl);
    }

private:
    template<typename T>
    T load()
    {
        const Bytes b = take(sizeof(T));
        T v;
        std::memcpy(&v, b.data(), sizeof(T));
        if constexpr (std::endian::native == std::endian::big) {
            if constexpr (sizeof(T) == 2)
                v = __builtin_bswap16(v);
            else if constexpr (sizeof(T) == 4)
                v = __builtin_bswap32(v);
            else
                v = __builtin_bswap64(v);
        }
        return v;
    }

    Bytes m_data;
    std::size_t m_pos = 0;
};

/// Reads a little-endian integer at an absolute offset of a span that is known to be large enough.
template<typename T>
T loadLE(Bytes data, std::size_t offset)
{
    ByteReader r(data, offset);
    if constexpr (sizeof(T) == 2)
        return static_cast<T>(r.u16());
    else if constexpr (sizeof(T) == 4)
        return static_cast<T>(r.u32());
    else
        return static_cast<T>(r.u64());
}

} // namespace ckpt
