// SPDX-License-Identifier: MIT
// The hints of the manifest audit's findings: what a problem usually means and what to do,
// each citing the recovery guide or formats.md section it rests on.
#pragma once

namespace ckpt::audit {

// ---- hints (recovery guide §4.4, §6.2, §6.3, §7.2, §7.3, §8.3; formats.md §5, §6) ----------

inline constexpr const char* kHintHash =
    "The bytes differ from what the manifest recorded at save time: damage in a copy, upload or on the storage, "
    "or the file was rewritten after its manifest. The hash detects corruption, not semantic correctness "
    "(recovery guide §6.3 on what a manifest records). Do not resume from this checkpoint: re-copy the file from its source, or roll back to the previous "
    "checkpoint whose manifest verifies (recovery guide §8.3 on retention and rollback).";
inline constexpr const char* kHintSize =
    "A shorter file usually means a truncated write or an interrupted copy/upload; a longer one a file rewritten "
    "or appended to after the manifest was written. Re-copy it from the source, or roll back to the previous "
    "checkpoint whose manifest verifies (recovery guide §8.3 on retention and rollback).";
inline constexpr const char* kHintMissing =
    "Listed in the manifest but absent: a partial copy or sync, a retention job that deleted part of the "
    "checkpoint, or a rank that never finished writing. Without it the directory is not a complete training "
    "state (recovery guide §7.2 on writing and reading sharded checkpoints); restore the file or roll back to the previous complete checkpoint.";
inline constexpr const char* kHintUnreadable =
    "The file exists but could not be read, so it cannot be verified: check its permissions and the storage "
    "(I/O errors often precede data loss).";
inline constexpr const char* kHintUnexpected =
    "Not covered by the manifest, so it cannot be verified: left over from an earlier save into the same "
    "directory, or added afterwards. If the training code reads it on resume, the saver should list it in "
    "manifest.json (recovery guide §6.3 on what a manifest records); otherwise remove it or keep it outside the checkpoint directory.";
inline constexpr const char* kHintComplete =
    "COMPLETE is written last, after every shard and the manifest (recovery guide §6.2 on atomic writes and commit markers): without it the save may have "
    "died midway. A recovery should only accept directories that have COMPLETE and a manifest that verifies; "
    "resume from the previous complete checkpoint.";
inline constexpr const char* kHintHfTrainer =
    "Hugging Face Trainer checkpoints carry no manifest (docs/formats.md on Hugging Face Trainer folders): trainer_state.json, written last, is the "
    "only completeness signal, and nothing records the files' sizes or hashes. To make copies verifiable, write a "
    "manifest.json with the size and SHA-256 of every file at save time (recovery guide §6.3 on what a manifest records).";
inline constexpr const char* kHintDcpNoManifest =
    "torch.distributed.checkpoint writes .metadata last as its commit marker (docs/formats.md on the torch.distributed.checkpoint folder layout) and records no "
    "hashes: truncation inside a chunk or bit rot cannot be detected. To make copies verifiable, write a "
    "manifest.json with the size and SHA-256 of every file and a COMPLETE marker after the save (recovery guide §6.2-6.3 on commit markers and manifests).";
inline constexpr const char* kHintManifest =
    "manifest.json records the size and SHA-256 of every file and the world size (recovery guide §6.3 on what a manifest records); it is written "
    "just before COMPLETE. Without a readable manifest nothing in this directory can be verified: treat it as "
    "incomplete and resume from the previous checkpoint whose manifest verifies.";
inline constexpr const char* kHintRngMissing =
    "Every rank keeps its own RNG state (recovery guide §4.4 on per-rank RNG state) and each rank must save it (recovery guide §7.1 on DDP and FSDP state). Resuming without one "
    "rank's file changes that rank's dropout, augmentation and sampling streams, so the run no longer continues "
    "the same trajectory. Check that all ranks finished writing before COMPLETE was written (recovery guide §7.2 on writing and reading sharded checkpoints), and that "
    "world_size in the manifest is the one the job ran with.";
inline constexpr const char* kHintRngExtra =
    "An RNG file for a rank the manifest's world_size does not have: left over from a save with more ranks, or "
    "a wrong world_size in the manifest. Changing the world size is not a plain reload (recovery guide §7.3 on changing the world size).";
inline constexpr const char* kHintLatest =
    "`latest` is only a pointer, registered after COMPLETE (recovery guide §6.2 on atomic writes and commit markers, recovery guide §8.3 on retention and rollback). A broken pointer makes a resume "
    "start from scratch or fail; point it at the newest checkpoint whose manifest verifies.";
inline constexpr const char* kHintLatestBad =
    "`latest` must only name a checkpoint that has COMPLETE and a manifest that verifies (recovery guide §6.2 on atomic writes and commit markers): a resume "
    "from this one would load damaged or partial state. Point `latest` back at the newest checkpoint that "
    "verifies (recovery guide §8.3 on retention and rollback) and keep the damaged one for inspection.";
inline constexpr const char* kHintNoLatest =
    "The guide's layout registers each committed checkpoint as `latest` (recovery guide §6.2 on atomic writes and commit markers). Without it a resume script has to "
    "guess which directory to use; write the newest verified checkpoint's name into `latest`.";
inline constexpr const char* kHintStale =
    "The save may have died between writing COMPLETE and updating `latest` (recovery guide §8 on failure paths and recovery): resuming from `latest` "
    "repeats work already done. Check the newer checkpoint and, if it verifies, point `latest` at it.";
inline constexpr const char* kHintIndex =
    "The sharded index and the shard headers disagree (docs/formats.md on sharded safetensors and Trainer folders): shards from different saves mixed "
    "together, a shard rewritten after the index, or a partial copy. Loading maps tensors to the wrong file or "
    "fails with missing keys; re-copy the shards and the index from one save.";
inline constexpr const char* kHintDcp =
    "A torch.distributed.checkpoint directory (docs/formats.md on the torch.distributed.checkpoint format): the .distcp files are verified like any other file "
    "through the manifest, but whether their chunks cover every tensor in .metadata is not checked yet.";
inline constexpr const char* kHintDcpCoverage =
    "In a torch.distributed.checkpoint folder .metadata is the only index (docs/formats.md on torch.distributed.checkpoint .metadata and .distcp files): every tensor's "
    "chunks must tile its global shape and each chunk must lie inside its __<rank>_<n>.distcp file. A gap means "
    "a rank's data is missing or from another save (recovery guide §7.2 on writing and reading sharded checkpoints, writing and reading sharded checkpoints: a partial set of shards is not a recoverable "
    "checkpoint); do not load it, use the previous checkpoint.";
inline constexpr const char* kHintDcpUnreadable =
    "The DCP .metadata could not be read by the safe pickle reader, so chunk coverage was not checked; the files "
    "are still verified through manifest.json. Inspect it with `ckpt tree` or torch.distributed.checkpoint.";
inline constexpr const char* kHintDcpUncommitted =
    "DCP writes .metadata last, as its commit marker (docs/formats.md on the torch.distributed.checkpoint folder layout): data files without it mean the save did "
    "not finish on the coordinator. Do not load this directory; use the previous checkpoint.";
inline constexpr const char* kHintDeepSpeedNoManifest =
    "DeepSpeed's save_checkpoint writes no manifest (docs/formats.md on DeepSpeed checkpoints): only `latest`, written by rank 0 after the save, "
    "tells a finished save from a partial one, and nothing records the files' sizes or hashes. To make copies "
    "verifiable, write a manifest.json with the size and SHA-256 of every file and a COMPLETE marker (recovery guide §6.2-6.3 on commit markers and manifests).";
inline constexpr const char* kHintAccelerateNoManifest =
    "accelerate's save_state writes no manifest and no commit marker (docs/formats.md on accelerate checkpoints): random_states_<i>.pkl, written "
    "last, is the best sign the save finished, and nothing records sizes or hashes. To make copies verifiable, write a "
    "manifest.json with the size and SHA-256 of every file and a COMPLETE marker (recovery guide §6.2-6.3 on commit markers and manifests).";
inline constexpr const char* kHintMegatronNoManifest =
    "Megatron-LM's legacy save writes one model_optim_rng.pt per tensor x pipeline (x expert) position and then the "
    "tracker latest_checkpointed_iteration.txt beside the iteration folders (docs/layouts.md §1): the tracker is the "
    "commit marker, and nothing records sizes or hashes. To make copies verifiable, write a manifest.json with the size "
    "and SHA-256 of every file (recovery guide §6.3 on manifest contents).";
inline constexpr const char* kHintMegatronDistNoManifest =
    "Megatron-core's distributed checkpoint (torch_dist) writes metadata.json after every rank's data and .metadata "
    "(docs/layouts.md on torch_dist): its presence marks a finished save, but nothing records sizes or hashes. NeMo 2.0 "
    "keeps it in weights/. To make copies verifiable, write a manifest.json with the size and SHA-256 of every file "
    "(recovery guide §6.2-6.3 on commit markers and manifests).";
inline constexpr const char* kHintModelExportNoManifest =
    "A model-only export (torchtitan's last step with last_save_model_only, or save_pretrained) holds the weights and "
    "no training state: it is the end product of a run, not a point to resume training from, and has no commit marker "
    "(docs/conventions.md on torchtitan's last-step export). A sharded export's index is checked against its shards; "
    "to make copies verifiable, write a manifest.json with the size and SHA-256 of every file (recovery guide §6.3 on manifest contents).";
inline constexpr const char* kHintZeroRanks =
    "ZeRO partitions the optimizer state over the data-parallel ranks (docs/formats.md on DeepSpeed checkpoints): every rank's "
    "zero_pp_rank_<r>_mp_rank_XX_optim_states.pt is needed to rebuild it, for dp_world_size ranks. A missing one means a "
    "rank did not finish writing or the copy is partial (recovery guide §7.2 on writing and reading sharded checkpoints); resume from the previous complete checkpoint.";

} // namespace ckpt::audit
