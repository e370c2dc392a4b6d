// SPDX-License-Identifier: MIT
// Members of general archives (7z, tar, gzip/xz/bzip2-compressed tar) read with libarchive,
// so the imports scan can look inside the archives malicious pickles are shipped in.
#pragma once

#include "ckpt/io/byte_reader.h"

#include <functional>
#include <string>

namespace ckpt {

/// Calls `visit` for every regular member up to `maxMemberBytes` (larger ones are skipped
/// and named in `skipped`). Throws FormatError when the archive cannot be read.
void forEachArchiveMember(Bytes archive, uint64_t maxMemberBytes,
                          const std::function<void(const std::string& name, Bytes content)>& visit,
                          std::vector<std::string>* skipped = nullptr);

} // namespace ckpt
