// SPDX-License-Identifier: MIT
// Which files make up one checkpoint and what each holds. detectLayout asks every framework
// adapter (framework_registry.h) and keeps the most confident claim; the adapters' folders under
// core/frameworks/ say how each layout is recognised and where that knowledge was read.
#pragma once

#include "ckpt/formats/rank_names.h" // stepFromName

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckpt {

enum class Layout : uint8_t {
    RecoveryGuideDir,  // checkpoint-NNNNNNN/ with manifest.json, model/optimizer files, rng-rank-N.pt, COMPLETE
    RecoveryGuideFile, // one file with model, optimizer, scheduler, scaler, rng, epoch, batch_pos, global_step...
    HfTrainer,         // checkpoint-N/ with trainer_state.json, optimizer.pt, scheduler.pt, rng_state*.pth...
    Lightning,         // a .ckpt with state_dict, optimizer_states, loops, callbacks...
    DeepSpeed,         // global_stepN/ with *_model_states.pt and *_optim_states.pt
    Accelerate,        // save_state folder: random_states_N.pkl, optimizer.bin, scheduler.bin...
    Dcp,               // torch.distributed.checkpoint: .metadata + __r_n.distcp
    StateDict,         // a file holding only a model state_dict
    Megatron,          // Megatron-LM legacy: iter_NNNNNNN/mp_rank_TT[_PPP]/model_optim_rng.pt per tensor x pipeline rank
    ModelExport,       // a folder of model weights only (safetensors and JSON configs): torchtitan's last-step
                       // export, save_pretrained; a final artefact, not a point to resume training from
    Nemo,              // NeMo training checkpoints: 1.x Lightning .ckpt (its tensor-parallel ranks' files in
                       // mp_rank_TT/ or tp_rank_TT_pp_rank_PPP/ read as one), Megatron-core folders, 2.0 folders
    NemoArchive,       // a .nemo file (a tar of model_config.yaml and the weights): the final model, like ModelExport
    Generic,           // anything else: parts are found by structure
};

const char* layoutName(Layout layout); // "recovery_guide_dir", "hf_trainer", ...

/// A model for use rather than a point to resume training from (ModelExport, NemoArchive): never
/// `latest` beside training checkpoints, never compared with them as a resume.
bool isFinalArtefact(Layout layout);

/// The role a file plays; `rank` for per-rank files.
struct LayoutFile {
    std::string path;
    std::string role; // model, optimizer, scheduler, scaler, rng, state, training_args, trainer_state,
                      // manifest, complete, metadata, data, config (config.json, tokenizer files, YAML:
                      // E), model_shard (a shard read through its safetensors index), model_index (a
                      // .bin index, which only maps names to its shards), adapter (a LoRA adapter's weights:
                      // adapter_model.*), other
    int rank = -1;
    // Megatron's tensor-, pipeline- and expert-parallel position from mp_rank_TT[_PPP][_EEE]. A name
    // with two numbers is read as TT_PPP; the reader swaps them when the args say PP = 1 and EP > 1.
    int tp = -1, pp = -1, ep = -1;
};

/// How a checkpoint's state is stored, which decides how it is read; the adapter that recognises
/// the checkpoint says it.
enum class StateStorage : uint8_t {
    Files,               // each file on its own: torch.save pickles, safetensors
    Dcp,                 // a torch.distributed.checkpoint folder: the layout's own path
    MegatronDistributed, // Megatron-core's torch_dist files in distributedDir
    ModelParallelFiles,  // one file per tensor x pipeline rank (each LayoutFile's tp, pp, ep)
};

struct CheckpointLayout {
    Layout layout = Layout::Generic;
    std::string path;                 // the file or directory given
    std::vector<LayoutFile> files;
    std::optional<int64_t> stepFromName; // checkpoint-1200, global_step1200, epoch=3-step=1200.ckpt
    bool complete = true;             // commit marker present where the layout has one
    /// Megatron-core's distributed checkpoint (torch_dist) this checkpoint's state is in: the folder
    /// itself (Megatron-LM's iter_N/, NeMo 1.x), NeMo 2.0's weights/, or a .nemo's model_weights/.
    /// Empty for every other layout.
    std::string distributedDir;
    std::string incompleteReason;
    /// Why the layout was recognised as it was (the adapter's reason: "trainer_state.json, which
    /// the Trainer writes into every checkpoint-N/"); empty for the generic fallback.
    std::string recognisedBy;
    StateStorage storage = StateStorage::Files;
    /// Whether a single pickled file's top-level keys may still decide the layout once it is opened:
    /// for what no adapter claimed, and for a claim by name alone (a .ckpt file).
    bool refineByContent = false;
    /// What recognition could not do and the reader should say (a .nemo whose members cannot be listed).
    std::vector<std::string> warnings;
};

/// A counter or fact a framework keeps only in file names (NeMo's consumed_samples=M in the name,
/// accelerate's process count as its random_states_<i>.pkl files): which part of S_t it belongs to
/// (progress, data or environment), its name, value, and where it was read.
struct NamedFact {
    std::string part;
    std::string name;
    std::string value;
    std::string where;
};

/// Throws std::runtime_error naming the path when it does not exist.
CheckpointLayout detectLayout(const std::string& path);

/// The torch.distributed.checkpoint folder the checkpoint's tensors are in: its own folder for a DCP
/// checkpoint, distributedDir for Megatron-core's; empty for the layouts of ordinary files.
std::string dcpFolder(const CheckpointLayout& layout);

/// Whether the file is opened with CheckpointFile::open to read the state and its tensors: every
/// tensor of a checkpoint lies in exactly one such file (a safetensors index stands for its
/// shards; a .bin index and JSON, markers and configs hold none; DCP chunks are read through
/// .metadata). The state reader, statistics, the diff and the GUI's tensor list all use it.
bool opensAsCheckpointFile(const LayoutFile& file);


} // namespace ckpt
