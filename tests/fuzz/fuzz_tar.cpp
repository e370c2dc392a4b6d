// SPDX-License-Identifier: MIT
// Tar archives (NeMo's .nemo files): tarIndex over the bytes (ustar, GNU base-256 sizes and long
// names, pax records), then the same bytes as a file on disk browsed into the way the layouts
// read them (io/archive_path.h): the member list, each member opened by its path through
// MappedFile (mapped in place, or decompressed from a gzip/bzip2/xz tar by libarchive) and
// readBoundedFile, and every byte of it read. A mutated header almost never keeps its checksum,
// where tarIndex rightly stops, so past the checksum check the input is read with every header's
// checksum recomputed. It is also browsed gzip-compressed (NeMo before 1.7 wrote "w:gz"), so
// mutations of the tar headers reach libarchive's reader through a valid gzip stream.
#include "fuzz_support.h"

#include "ckpt/io/archive_path.h"
#include "ckpt/io/mapped_file.h"
#include "ckpt/io/read_only_file.h"
#include "ckpt/io/tar_index.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <zlib.h>

namespace {

// A member's data must lie inside the archive: MappedFile trusts these offsets.
void checkMembers(const std::vector<ckpt::TarMember>& members, std::size_t size)
{
    for (const ckpt::TarMember& m : members) {
        if (m.offset > size || m.size > size - m.offset) {
            std::fprintf(stderr, "tar member %s at %llu + %llu lies outside the %zu-byte archive\n", m.name.c_str(),
                         static_cast<unsigned long long>(m.offset), static_cast<unsigned long long>(m.size), size);
            std::abort();
        }
    }
}

unsigned sumOf(ckpt::Bytes bytes)
{
    unsigned sum = 0;
    for (const std::byte b : bytes)
        sum += static_cast<unsigned>(b);
    return sum;
}

// `data` with the checksum of each header recomputed, the headers followed by their size fields
// as tarIndex does (pax size overrides aside): "%06o\0 " as Python's tarfile writes it.
std::vector<uint8_t> withChecksumsFixed(const uint8_t* data, std::size_t size)
{
    std::vector<uint8_t> out(data, data + size);
    std::size_t at = 0;
    while (at + 512 <= out.size()) {
        uint8_t* h = out.data() + at;
        if (std::all_of(h, h + 512, [](uint8_t b) { return b == 0; }))
            break;
        unsigned sum = 0;
        for (std::size_t i = 0; i < 512; ++i)
            sum += (i >= 148 && i < 156) ? ' ' : h[i];
        std::snprintf(reinterpret_cast<char*>(h + 148), 7, "%06o", sum);
        h[155] = ' ';
        uint64_t length = 0;
        if (h[124] & 0x80) {
            for (std::size_t i = 125; i < 136; ++i)
                length = (length << 8) | h[i];
        } else {
            std::size_t i = 124;
            while (i < 136 && h[i] == ' ')
                ++i;
            for (; i < 136 && h[i] >= '0' && h[i] <= '7'; ++i)
                length = length * 8 + (h[i] - '0');
        }
        if (length > out.size())
            break;
        at += 512 + (length + 511) / 512 * 512;
    }
    return out;
}

std::vector<uint8_t> gzipped(const uint8_t* data, std::size_t size)
{
    z_stream z{};
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        std::abort();
    std::vector<uint8_t> out(deflateBound(&z, size) + 64);
    z.next_in = const_cast<Bytef*>(data);
    z.avail_in = static_cast<uInt>(size);
    z.next_out = out.data();
    z.avail_out = static_cast<uInt>(out.size());
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        std::abort();
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

// The archive at `path` browsed as the layouts do: its members listed, a few opened by path.
void browse(const std::string& path)
{
    volatile unsigned sink = 0;
    ckpt::fuzz::refusalsAreFine([&] {
        (void)ckpt::isTarFile(path);
        const std::vector<std::string> members = ckpt::archiveMemberPaths(path);
        // The layouts read these paths as the archive's members: each must name one, below it.
        for (const std::string& member : members) {
            const bool below = member.starts_with(path + "/");
            const std::string relative = below ? member.substr(path.size() + 1) : std::string();
            if (!below || relative.starts_with("/") || relative == ".." || relative.starts_with("../")
                || relative.find("/../") != std::string::npos || relative.ends_with("/..")) {
                std::fprintf(stderr, "archiveMemberPaths gave %s, not a path below %s\n", member.c_str(), path.c_str());
                std::abort();
            }
        }
        // Every member re-indexes the archive: a few are enough to reach each path.
        for (std::size_t i = 0; i < members.size() && i < 4; ++i) {
            ckpt::fuzz::refusalsAreFine([&] {
                const ckpt::MappedFile file = ckpt::MappedFile::open(members[i]);
                sink = sink + sumOf(file.bytes());
            });
            ckpt::fuzz::refusalsAreFine([&] { sink = sink + ckpt::readBoundedFile(members[i], 1 << 20).size(); });
        }
    });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    // The bytes as they are: the checksums are checked.
    const ckpt::Bytes archive{reinterpret_cast<const std::byte*>(data), size};
    (void)ckpt::looksLikeTar(archive);
    ckpt::fuzz::refusalsAreFine([&] { checkMembers(ckpt::tarIndex(archive), size); });

    const std::vector<uint8_t> fixed = withChecksumsFixed(data, size);
    ckpt::fuzz::refusalsAreFine([&] { checkMembers(ckpt::tarIndex(ckpt::Bytes(reinterpret_cast<const std::byte*>(fixed.data()), size)), size); });
    browse(ckpt::fuzz::writeScratch("run/a.nemo", fixed.data(), size));
    const std::vector<uint8_t> gz = gzipped(fixed.data(), size);
    browse(ckpt::fuzz::writeScratch("run/gz.nemo", gz.data(), gz.size()));
    return 0;
}
