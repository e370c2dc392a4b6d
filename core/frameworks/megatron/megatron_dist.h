// SPDX-License-Identifier: MIT
// Megatron-core's distributed checkpoint (torch_dist), which Megatron-LM and NeMo both write.
#pragma once

#include "ckpt/frameworks/checkpoint_layout.h"

namespace ckpt::frameworks {

/// metadata.json is written after every rank's data and the .metadata (NVIDIA/Megatron-LM
/// megatron/core/dist_checkpointing/serialization.py save, metadata_finalize_fn): without it the
/// save did not finish.
void markMegatronDistCompleteness(CheckpointLayout& out, bool metadataJson);

/// The checkpoint's state is Megatron-core's distributed checkpoint in `folder`.
void markMegatronDistributed(CheckpointLayout& out, std::string folder);

/// `listed` as `layout`'s checkpoint of Megatron-core's torch_dist files in its own folder (Megatron-LM's
/// iter_N/, NeMo 1.x's callback-named folders), complete when metadata.json is there.
CheckpointLayout megatronDistFolderLayout(CheckpointLayout listed, Layout layout, const FolderListing& folder);

/// A folder of Megatron-core's torch_dist files: DCP files with metadata.json (written last) and the
/// state that is not sharded in common.pt (core <= 0.18) or a DCP item (docs/layouts.md §6).
bool isMegatronDistFolder(const FolderListing& folder);

/// Megatron-LM's iteration folder name: iter_NNNNNNN or release.
bool isMegatronIterationName(const std::string& base);

} // namespace ckpt::frameworks
