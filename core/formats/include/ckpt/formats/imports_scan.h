// SPDX-License-Identifier: MIT
// The imports report for anything that carries pickles: checkpoints, plain pickles, zips of
// pickles, numpy object arrays, 7z/tar archives, the 0.1.x tar format's records.
#pragma once

#include "ckpt/pickle/imports_report.h"

#include <string>

namespace ckpt {

/// Scans every pickle in `data` from the start, including ones appended after STOP (a trick
/// to hide a payload from scanners that stop at the first). Never throws.
/// `depth` counts the nested pickles (torch.storage._load_from_bytes) around this one.
void scanPickleSequence(ImportsReport& report, const std::string& record, Bytes data, bool trailingIsSuspicious = true,
                        int depth = 0);

/// Reads the bytes each nested loader of `flow` would unpickle (a legacy torch.save stream, a zip,
/// a plain pickle), adds their globals under "<record> > nested #N" and judges the loader by them:
/// a benign pickle.dump of tensors is not a payload, an inner os.system is. Three levels at most.
void judgeNestedPickles(ImportsReport& report, const std::string& record, const CallFlow& flow, int depth);

/// The imports report for any file that carries pickles, including ones the loader refuses.
/// `strict`: every called global outside the allowlist is dangerous. Throws OpenError when the
/// file holds no pickle at all or cannot be read.
ImportsReport scanImports(const std::string& path, bool strict = false);

} // namespace ckpt
