// SPDX-License-Identifier: MIT
// A torch.distributed.checkpoint folder whose .metadata is the input: the pickle of dataclasses
// is read through the safe machine, then storage_data, planner_data and the chunk tiling.
#include "fuzz_support.h"

#include "ckpt/formats/dcp_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    ckpt::fuzz::writeScratch("dcp/.metadata", data, size);
    ckpt::fuzz::refusalsAreFine([&] {
        const ckpt::DcpCheckpoint dcp = ckpt::readDcpCheckpoint(ckpt::fuzz::scratchDir() + "/dcp");
        for (const ckpt::DcpEntry& entry : dcp.entries) {
            (void)entry.problem.size();
            for (const ckpt::DcpChunk& chunk : entry.chunks)
                (void)chunk.rank;
        }
    });
    return 0;
}
