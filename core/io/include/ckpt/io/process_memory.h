// SPDX-License-Identifier: MIT
// How the process's allocator is set up for the readers' working set: tables of 100k records that
// are built, freed and built again while a frontier checkpoint opens.
#pragma once

namespace ckpt {

/// Called once at the start of main (the CLI, the desktop app, the benchmarks that stand in for
/// them). glibc hands allocations above its mmap threshold (128 KiB, raised as such blocks are freed)
/// to fresh mappings and returns them to the kernel when freed; each page of the next such block is
/// faulted in again. Opening a 163-shard, 90k-tensor model frees 8-35 MiB buffers (the index's
/// parse, a header's tables) just before the records are built, and the records then faulted in
/// 5-6k pages anew: ~0.1 s of a 1 s listing on the 2-core machine, whose page faults cost ~11 us
/// each. With the threshold fixed at 32 MiB those blocks come from the heap and their pages are
/// reused; blocks above it (tensor data, whole-file buffers) are still mapped and returned.
/// Does nothing outside glibc.
void tuneAllocatorForTables();

} // namespace ckpt
