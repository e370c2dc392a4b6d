// SPDX-License-Identifier: MIT
#include "ckpt/pickle/tensor_info.h"

#include <algorithm>
#include <limits>

namespace ckpt {

const char* layoutName(TensorLayout layout)
{
    switch (layout) {
    case TensorLayout::Strided: return "strided";
    case TensorLayout::SparseCoo: return "sparse_coo";
    case TensorLayout::SparseCsr: return "sparse_csr";
    case TensorLayout::SparseCsc: return "sparse_csc";
    case TensorLayout::SparseBsr: return "sparse_bsr";
    case TensorLayout::SparseBsc: return "sparse_bsc";
    case TensorLayout::Quantized: return "quantized";
    case TensorLayout::Meta: return "meta";
    case TensorLayout::NoStorage: return "no_storage";
    }
    return "?";
}

void swapElementBytes(std::span<std::byte> data, DType dtype)
{
    std::size_t width = dtypeSize(dtype);
    if (isComplex(dtype))
        width /= 2;
    if (width <= 1)
        return;
    for (std::size_t i = 0; i + width <= data.size(); i += width)
        std::reverse(data.begin() + static_cast<std::ptrdiff_t>(i), data.begin() + static_cast<std::ptrdiff_t>(i + width));
}

int64_t TensorInfo::numel() const
{
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d <= 0)
            return 0;
        if (n > std::numeric_limits<int64_t>::max() / d)
            return std::numeric_limits<int64_t>::max();
        n *= d;
    }
    return n;
}

uint64_t TensorInfo::nbytes() const
{
    const auto n = static_cast<uint64_t>(numel());
    const uint64_t elem = dtypeSize(dtype);
    if (elem != 0 && n > std::numeric_limits<uint64_t>::max() / elem)
        return std::numeric_limits<uint64_t>::max();
    return n * elem;
}

} // namespace ckpt
