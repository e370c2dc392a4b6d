// SPDX-License-Identifier: MIT
#include "ckpt/io/process_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

// Read by jemalloc as it starts, where an executable links it (process_memory.h); an unused global
// anywhere else. The executable exports it (libjemalloc defines a weak default), so jemalloc sees it.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always";
}

namespace ckpt {

void tuneAllocatorForTables()
{
#if defined(__GLIBC__)
    // 32 MiB is glibc's own ceiling for its dynamic threshold (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit);
    // under jemalloc this sets glibc's unused allocator and changes nothing.
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
#endif
}

} // namespace ckpt
