// SPDX-License-Identifier: MIT
// A model-only export: a folder of safetensors weights and JSON configs, no training state. torchtitan
// writes one as its last step (torchtitan@970fbddb components/checkpoint.py _save_last_step:
// last_save_model_only defaults to True, last_save_in_hf converts to Hugging Face names), and
// save_pretrained folders look the same. It has no commit marker and is not a resume point.
#pragma once

#include <string>
#include <vector>

namespace ckpt {

/// Whether a folder's file names are those of a model-only export: at least one .safetensors and
/// otherwise only JSON configs (not manifest.json or trainer_state.json) and tokenizer files.
bool isModelExportListing(const std::vector<std::string>& names);

} // namespace ckpt
