// SPDX-License-Identifier: MIT
// How the process's allocator is set up for the readers' working set: tables of 100k records that
// are built, freed and built again while a frontier checkpoint opens.
//
// The executables (ckpt, checkpoint-inspector, the GUI probe) link jemalloc (CMake option
// CKPT_JEMALLOC, Debian's libjemalloc-dev); process_memory.cpp holds the `malloc_conf` it reads as
// it starts: its memory in transparent huge pages ("thp:always"; the kernel's setting is
// "madvise" on Debian, which lets a process ask). With glibc's malloc, opening a 163-shard,
// 90k-tensor model faulted in 37k 4 KiB pages, at ~11 us each on the 2-core VM: half of a 0.9 s
// listing. In huge pages it faults ~1k times: 0.38 s (ckpt tensors INDEX --json), with ~10 MiB
// more resident.
#pragma once

namespace ckpt {

/// Called once at the start of main. Under glibc's malloc (the sanitizer builds, or
/// CKPT_JEMALLOC=OFF) it fixes the mmap threshold at 32 MiB: glibc hands blocks above its
/// threshold (128 KiB, raised as such blocks are freed) to fresh mappings and returns them to the
/// kernel when freed, so the 8-35 MiB buffers freed just before a frontier model's records are
/// built (the index's parse, a header's tables) were faulted in anew (5-6k faults, ~0.1 s); fixed,
/// they come from the heap and their pages are reused. Does nothing outside glibc.
void tuneAllocatorForTables();

} // namespace ckpt
