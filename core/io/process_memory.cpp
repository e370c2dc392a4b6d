// SPDX-License-Identifier: MIT
#include "ckpt/io/process_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ckpt {

void tuneAllocatorForTables()
{
#if defined(__GLIBC__)
    // 32 MiB is glibc's own ceiling for its dynamic threshold (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit).
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
#endif
}

} // namespace ckpt
