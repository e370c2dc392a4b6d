// SPDX-License-Identifier: MIT
// Background jobs (reading states, auditing, statistics, diffs) yield the CPU to the GUI thread.
// On a machine with two cores, workers at the GUI thread's priority delayed its events by tens of
// milliseconds whenever they ran; QThread priorities do nothing for ordinary Linux threads, so the
// worker lowers its own nice value instead.
#pragma once

/// Lowers the calling (worker) thread's scheduling priority a few nice levels; once per thread.
void lowerThreadPriority();
