// SPDX-License-Identifier: MIT
// The training state at one update boundary, S_t = (W, O, L, A, R, D, C, E): model parameters,
// optimizer, LR scheduler, AMP grad scaler, RNG states, data cursor, control counters and
// environment metadata, each read from whichever file of the checkpoint holds it and each
// value keeping its provenance (file and key path) so a user can see where it came from.
#pragma once

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/frameworks/checkpoint_layout.h"
#include "ckpt/state/lr_schedule.h"
#include "ckpt/state/rng_state.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ckpt {

/// A run of elements of a flat (1-D) tensor: where one parameter's fragment lies in a DeepSpeed
/// ZeRO partition or a Megatron distributed-optimizer buffer, which hold many parameters end to end.
struct ElementRange {
    int64_t start = 0;
    int64_t numel = 0;
    /// The elements viewed as this (row-major) shape: a whole tensor flattened into the buffer, as
    /// Megatron's distributed optimizer keeps each parameter. Empty: a 1-D run (a ZeRO fragment may
    /// be part of a parameter only).
    std::vector<int64_t> shape;
};

struct Provenance {
    std::string file;                     // path of the file
    KeyPath key;                          // path inside it
    std::optional<ElementRange> elements; // only these elements of the 1-D tensor at `key`
};

/// A scalar fact (a counter, a version, a seed) with where it was read.
struct StateField {
    std::string name;
    std::string value; // as text (numbers in their shortest round-trip form)
    Provenance from;
};

struct ParameterEntry {
    std::string name;
    std::string dtype;
    std::vector<int64_t> shape; // the whole parameter's (tensor-parallel shards joined)
    int64_t numel = 0;
    Provenance from;            // where it is stored; with pieces, the first of them
    /// Tensor-parallel shards (Megatron-LM): each rank's piece in rank order, joined along
    /// splitDim (-1: replicated copies). Empty when the parameter is stored whole.
    std::vector<Provenance> pieces;
    int splitDim = -1;
    /// The earlier name this entry shares its tensor with (tied embeddings: fairseq's
    /// output_projection, lm_head tied to embed_tokens); named_parameters() lists it once.
    std::string tiedTo;
};

/// Whether the optimizer would hold this entry of W: floating point, not a known buffer (BatchNorm
/// statistics, fairseq's `version`), not the second name of a tied parameter. The state model's
/// name mapping and the optimizer rules count parameters with it.
bool isOptimizedParameter(const ParameterEntry& p);

struct ModelPart {
    std::vector<ParameterEntry> parameters; // parameters and buffers, in the file's order
    Provenance from;                        // the state_dict itself
    /// The file keeps names sorted, not in the module's order: safetensors (its header is sorted)
    /// and a sharded set's index (huggingface_hub serialization/_torch.py writes it with
    /// json.dumps(index, indent=2, sort_keys=True); stored copy, commit not recorded). The optimizer's
    /// positional keys then cannot be matched to names by order.
    bool sortedNames = false;
};

struct MomentInfo {
    std::string name; // exp_avg, exp_avg_sq, max_exp_avg_sq, momentum_buffer, sum, square_avg...
    std::string dtype;
    std::vector<int64_t> shape;
    Provenance from;
};

struct ParamState {
    std::string index;                  // the optimizer's key: "0", "1"... or an FQN
    std::string name;                   // the parameter it belongs to ("" when it cannot be told)
    std::optional<double> step;
    std::vector<MomentInfo> moments;
    int group = -1;
    /// A fragment of a flat partition (DeepSpeed ZeRO): the rank holding it and where the
    /// parameter's elements lie in that rank's partition of the group. Moments then have the
    /// fragment's shape [numel].
    int rank = -1;
    std::optional<int64_t> fragmentStart, fragmentNumel;
    /// The shape of the parameter's shard this entry updates, when it is one rank's piece of a
    /// tensor-parallel parameter (Megatron-LM): its moments have that shape, not the whole one.
    std::optional<std::vector<int64_t>> shardShape;
    /// The optimizer's own fp32 copy of the parameter's values, when it keeps one apart from the
    /// module's (ZeRO's single_partition_of_fp32_groups next to the fp16/bf16 module).
    std::optional<Provenance> master;
};

struct ParamGroup {
    std::vector<StateField> hyperparameters; // lr, betas, eps, weight_decay, momentum...
    std::vector<std::string> params;         // the optimizer's keys of its parameters
    /// The group's `param_names`, parallel to params, when the optimizer was built from
    /// named_parameters() (torch >= 2.6, pytorch/pytorch#134107) or the names were recorded otherwise.
    std::vector<std::string> paramNames;
};

struct OptimizerPart {
    std::string type;          // "Adam/AdamW", "SGD", "RMSprop", "Adagrad"... inferred from the state keys
    std::string nameMapping;   // how indices were mapped to names: "by name", "by order", "by order, buffers skipped", "within N param groups, ...", "by shape ...", "none (...)"
    /// The format keeps the state in flat buffers without saying which elements are which parameter
    /// (Megatron's dp_reshardable distributed checkpoint): unnamed by design, not by a mismatch.
    bool namesNotRecorded = false;
    std::vector<ParamGroup> groups;
    std::vector<ParamState> paramState;
    Provenance from;
};

struct SchedulerPart {
    LrSchedule schedule;
    Provenance from;
};

struct ScalerPart {
    bool enabled = true;
    std::optional<double> scale, growthFactor, backoffFactor;
    std::optional<int64_t> growthInterval, growthTracker;
    Provenance from;
};

struct RngPart {
    struct Generator {
        RngState state;
        int rank = -1;
        std::string file;
    };
    std::vector<Generator> generators;
};

struct TrainingState {
    std::string path;
    CheckpointLayout layout;
    std::optional<ModelPart> model;
    std::optional<OptimizerPart> optimizer;
    std::optional<SchedulerPart> scheduler;
    std::optional<ScalerPart> scaler;
    std::optional<RngPart> rng;
    std::vector<StateField> data;        // D: epoch position, batch cursor, sampler seed...
    std::vector<StateField> progress;    // C: global_step, epoch, micro_step...
    std::vector<StateField> environment; // E: versions, config hashes, world size...
    std::optional<int64_t> globalStep;   // the agreed global step (progress field, manifest, or directory name)
    /// globalStep comes from the checkpoint's name alone (step_N, checkpoint-N): no file records it, so it
    /// is the user's or the writer's naming convention, which may count batches, not updates
    /// (accelerate's examples/by_feature/checkpointing.py names step_{batches}).
    bool globalStepFromName = false;
    std::vector<std::string> warnings;   // files that could not be read, ambiguities
    /// The files the reader opened and parsed, kept only when ReadOptions::keepFiles asks: a caller
    /// that needs them again (the rules' imports, the Tensors tab) shares them instead of parsing a
    /// 163-shard index or an 80k-tensor pickle a second time. Empty otherwise, so a run's states
    /// hold no value graphs.
    std::vector<std::shared_ptr<const CheckpointFile>> files;

    /// The kept file opened from `path`, or null.
    std::shared_ptr<const CheckpointFile> keptFile(const std::string& path) const;
    const StateField* progressField(const std::string& name) const;
};

/// Reads one checkpoint: a file, or a checkpoint directory of any recognised layout. Files that
/// cannot be read become warnings; the rest still opens. Reads headers and pickles only, never
/// tensor data. Throws std::runtime_error when the path does not exist.
struct ReadOptions {
    bool keepFiles = false; // fill TrainingState::files
};
TrainingState readTrainingState(const std::string& path, const ReadOptions& options = {});

} // namespace ckpt
