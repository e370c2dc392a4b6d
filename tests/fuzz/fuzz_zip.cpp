// SPDX-License-Identifier: MIT
// The zip container: end records, ZIP64 records, the central directory, local headers, and
// every entry's bytes (stored views, DEFLATE inflation) under the loader's own limit.
#include "fuzz_support.h"

#include "ckpt/io/zip_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    const ckpt::Bytes file{reinterpret_cast<const std::byte*>(data), size};
    ckpt::fuzz::refusalsAreFine([&] {
        const ckpt::ZipArchive zip = ckpt::ZipArchive::parse(file);
        std::vector<std::byte> scratch;
        for (const ckpt::ZipEntry& entry : zip.entries) {
            ckpt::fuzz::refusalsAreFine([&] {
                const ckpt::Bytes bytes = ckpt::entryBytes(file, entry, scratch);
                (void)ckpt::crc32Of(bytes);
            });
        }
        (void)zip.find("archive/data.pkl");
    });
    return 0;
}
