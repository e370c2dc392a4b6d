// SPDX-License-Identifier: MIT
// The safetensors reader: header length, JSON header validation, offsets against the file;
// inputs that start with '{' also go through the sharded index parser.
#include "fuzz_support.h"

#include "ckpt/formats/safetensors_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    const std::span<const std::byte> file{reinterpret_cast<const std::byte*>(data), size};
    ckpt::fuzz::refusalsAreFine([&] { (void)ckpt::parseSafetensors(file); });
    if (size > 0 && data[0] == '{')
        ckpt::fuzz::refusalsAreFine([&] {
            (void)ckpt::parseSafetensorsIndex({reinterpret_cast<const char*>(data), size});
        });
    return 0;
}
