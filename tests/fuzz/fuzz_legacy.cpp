// SPDX-License-Identifier: MIT
// A whole file through CheckpointFile::open, seeded with legacy torch.save files (< 1.6: five
// pickles, then raw storage records): the sniffing, the five pickles, the storage table and
// every tensor's bytes. Any other format the mutations reach is fair game too.
#include "fuzz_support.h"

#include "ckpt/formats/checkpoint_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    const std::string path = ckpt::fuzz::writeScratch("legacy.pt", data, size);
    ckpt::fuzz::refusalsAreFine([&] {
        const auto file = ckpt::CheckpointFile::open(path);
        std::vector<std::byte> scratch;
        for (std::size_t s = 0; s < file->storages().size(); ++s)
            ckpt::fuzz::refusalsAreFine([&] { (void)file->storageBytes(s, scratch); });
        for (const ckpt::TensorInfo& tensor : file->tensors())
            ckpt::fuzz::refusalsAreFine([&] { (void)file->tensorRegion(tensor, scratch); });
        (void)file->tensorEntries().size();
    });
    return 0;
}
