// SPDX-License-Identifier: MIT
// A minimal TensorContentSource: opens the files a TrainingState names (cached), finds a tensor
// by key path and summarises its floating-point elements in one pass. Stands in until the
// statistics of issue 4 (core/tensor_stats.h) are wired in behind the same interface.
#pragma once

#include "core/checkpoint_file.h"
#include "core/rules/tensor_content.h"

#include <map>
#include <memory>
#include <mutex>

namespace ckpt {

class MinimalTensorContent : public TensorContentSource {
public:
    std::optional<TensorSummary> summary(const Provenance& where) override;

private:
    struct Opened {
        std::unique_ptr<CheckpointFile> file;       // null when the file cannot be opened
        std::map<std::string, uint32_t> byKey;      // formatKeyPath -> tensor index
    };
    const Opened& open(const std::string& path);

    std::mutex m_mutex;
    std::map<std::string, Opened> m_files;
};

/// The summary of one tensor of an opened file; nullopt when it is not float16/bfloat16/float32/
/// float64, has no bytes, or is not laid out contiguously.
std::optional<TensorSummary> summarizeTensor(const CheckpointFile& file, const TensorInfo& tensor);

} // namespace ckpt
