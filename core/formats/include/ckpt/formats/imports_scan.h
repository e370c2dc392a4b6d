// SPDX-License-Identifier: MIT
// The imports report for anything that carries pickles: checkpoints, plain pickles, zips of
// pickles, numpy object arrays, 7z/tar archives, the 0.1.x tar format's records.
#pragma once

#include "ckpt/pickle/imports_report.h"

#include <string>

namespace ckpt {

/// Scans every pickle in `data` from the start, including ones appended after STOP (a trick
/// to hide a payload from scanners that stop at the first). Never throws.
void scanPickleSequence(ImportsReport& report, const std::string& record, Bytes data, bool trailingIsSuspicious = true);

/// The imports report for any file that carries pickles, including ones the loader refuses.
/// Throws OpenError when the file holds no pickle at all or cannot be read.
ImportsReport scanImports(const std::string& path);

} // namespace ckpt
