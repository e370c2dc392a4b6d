// SPDX-License-Identifier: MIT
#include "ui/backgroundpriority.h"

#include <QtGlobal>

#include <cerrno>

#ifdef Q_OS_LINUX
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace {

// Enough for the GUI thread to win the CPU against our workers (weight 1024 against 110),
// not so much that the work stalls behind other programs.
constexpr int kNiceSteps = 10;

} // namespace

void lowerThreadPriority()
{
#ifdef Q_OS_LINUX
    thread_local bool lowered = false;
    if (lowered)
        return;
    lowered = true;
    // On Linux, nice is per thread: PRIO_PROCESS with a thread id changes that thread alone.
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    errno = 0;
    const int current = ::getpriority(PRIO_PROCESS, tid);
    if (errno == 0)
        ::setpriority(PRIO_PROCESS, tid, current + kNiceSteps); // failure leaves it as it was
#endif
}
