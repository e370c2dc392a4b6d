// SPDX-License-Identifier: MIT
// What CheckpointFile's loaders share, internal to core: checkpoint_file.cpp (sniffing, safetensors,
// plain pickles), torch_zip_loader.cpp (zip archives) and legacy_loader.cpp (pre-1.6 torch.save).
#pragma once

#include "ckpt/formats/checkpoint_file.h"

#include <cstdint>
#include <string>

namespace ckpt::detail {

/// "N bytes", as the loaders' messages count bytes.
inline std::string formatBytes(uint64_t n) { return std::to_string(n) + " bytes"; }

} // namespace ckpt::detail
