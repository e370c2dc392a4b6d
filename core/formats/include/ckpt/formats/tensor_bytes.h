// SPDX-License-Identifier: MIT
// The elements of one saved tensor as a contiguous little-endian buffer: what `tensor.contiguous()`
// holds in memory, gathered from the file's storage through the tensor's shape, strides and offset
// without running any pickle code. The validator hands these bytes to LibTorch.
#pragma once

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/formats/key_path.h"

#include <cstddef>
#include <vector>

namespace ckpt {

/// The tensor stored under `key` in `file` (the first entry with that key path); nullptr when none.
const TensorInfo* tensorAt(const CheckpointFile& file, const KeyPath& key);

/// numel * element-size bytes in row-major order, little-endian. Throws FormatError naming the reason
/// when the tensor has no readable strided data (sparse, quantized, missing storage, a view that does
/// not fit its storage).
std::vector<std::byte> contiguousTensorBytes(const CheckpointFile& file, const TensorInfo& tensor);

} // namespace ckpt
