// SPDX-License-Identifier: MIT
// What the tool knows of one framework (or one layout of a framework), behind one interface: how
// its checkpoints are recognised, and the conventions the general readers, the audit and the rules
// ask about instead of testing a layout themselves. One adapter per folder of core/frameworks/;
// the registry (framework_registry.h) is the only list of them. docs/contributing-a-layout.md
// walks through adding one.
#pragma once

#include "ckpt/frameworks/checkpoint_layout.h"
#include "ckpt/pickle/value_graph.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt {

/// A convention a framework follows that changes what the files mean, with the code it was read
/// from ("transformers@000945a9 src/transformers/trainer.py _inner_training_loop"), so that a
/// finding resting on it can say which.
struct Convention {
    bool holds = false;
    const char* source = "";
    explicit operator bool() const { return holds; }
};

/// A convention that names something (a file prefix, a counter's name), with its source.
struct NamedConvention {
    const char* value = nullptr;
    const char* source = "";
    explicit operator bool() const { return value != nullptr; }
};

/// The conventions the rest of core asks about. Each false by default: a framework states only what
/// its own code does.
struct FrameworkConventions {
    /// Whether the layout is a framework's at all (the generic fallback and a bare state_dict are not):
    /// a recognised checkpoint whose files cannot be read is still checked and audited.
    bool namesAFramework = true;
    /// A model for use rather than a point to resume training from: never `latest` beside training
    /// checkpoints, never compared with them as a resume.
    bool finalArtefact = false;
    /// The optimizer's tensors of one name in every rank's file are pieces of one flat partition,
    /// not copies (DeepSpeed ZeRO).
    Convention optimizerPartitionedAcrossRanks;
    /// An epoch counter without a batch position is the framework's normal save: it resumes the
    /// epoch's position from another counter (the Trainer's global_step, Lightning's loop progress).
    Convention epochPositionFromOtherCounters;
    /// The scheduler's _step_count is not torch's last_epoch + 1 by design (accelerate steps it on
    /// accumulation steps and once per process).
    Convention schedulerStepCountOwnCadence;
    /// The prefix of files holding the user's own registered objects: their fields are shown under
    /// the file's name and never taken for the run's counters (accelerate's custom_checkpoint_<i>.pkl).
    NamedConvention userObjectFilePrefix;
    /// What the top-level `step` of an RNG file counts when it is not the global step: its name in
    /// the state (accelerate's random_states_<i>.pkl: "accelerator.step").
    NamedConvention rngFileStepName;
    /// The files record no global step at all (accelerate): none is read from a counter that means
    /// something else.
    Convention noGlobalStepInFiles;
    /// A LambdaLR scheduler's formula is named by the run's arguments saved beside it (the Trainer's
    /// lr_scheduler_type and warmup in training_args.bin, max_steps in trainer_state.json), so the
    /// schedule can be recomputed.
    Convention lambdaScheduleFromTrainingArgs;
    /// The names the framework logs its training loss under, most specific first, with where they
    /// are written; the timeline's and the schedule's main curve is picked by them, never by the
    /// order of a log's columns.
    std::vector<const char*> lossMetricNames;
    const char* lossMetricSource = "";
};

/// What recognition sees of a folder, read once for every adapter: its regular files and its
/// sub-folders, each sorted by name.
struct FolderListing {
    std::string path;
    std::string base; // the folder's own name
    std::vector<std::string> files;
    std::vector<std::string> folders;

    bool has(std::string_view name) const;
    template <class Pred> bool any(Pred pred) const
    {
        for (const std::string& n : files) {
            if (pred(n))
                return true;
        }
        return false;
    }
};

/// The top level of a single pickled file, for recognising a framework by its keys.
struct ContentProbe {
    const ValueGraph& graph;
    NodeId root;
    /// How much the top level looks like a model state_dict (state/state_structure.h stateDictScore).
    int stateDictScore = 0;

    bool has(const char* key) const { return graph.get(root, key) != kNoNode; }
};

/// An adapter's claim on a single file's contents: how sure it is and why.
struct ContentClaim {
    double confidence = 0;
    const char* reason = "";
};

/// An adapter's claim on a path: how sure it is (0..1, the most specific evidence highest), why, and
/// the checkpoint as it lays it out.
struct Recognition {
    double confidence = 0;
    std::string reason;
    CheckpointLayout layout;
    /// A claim by name alone, which the file's contents may overrule (recogniseContent).
    bool provisional = false;
};

class FrameworkAdapter {
public:
    virtual ~FrameworkAdapter() = default;

    virtual Layout layout() const = 0;
    /// The layout's stable name in JSON and the CLI ("hf_trainer").
    virtual const char* name() const = 0;
    virtual const FrameworkConventions& conventions() const = 0;

    /// A checkpoint folder. `listed` has every file of the folder with its generic role; an adapter
    /// that lays its files out differently (Megatron's rank folders) replaces them.
    virtual std::optional<Recognition> recogniseFolder(const FolderListing&, const CheckpointLayout& listed) const;
    /// A single file (or archive) named by the path; `listed` holds it with its generic role.
    virtual std::optional<Recognition> recogniseFile(const CheckpointLayout& listed) const;
    /// A file met while listing a run, by its name and folder alone (nothing is read): cheap enough
    /// for thousands of checkpoints.
    virtual std::optional<double> claimFileName(const std::string& path) const;
    /// The save counter in a checkpoint's name when the name counts saves, not steps
    /// (accelerate's checkpoint_<i>).
    virtual std::optional<int64_t> saveIndexFromName(const std::string& base) const;
    /// A single pickled file by its top-level keys, once it has been opened.
    virtual std::optional<ContentClaim> recogniseContent(const ContentProbe&) const;
    /// A folder met while listing a run whose checkpoints another folder already stands for (NeMo
    /// 1.x's mp_rank_01/ beside mp_rank_00/): not listed on its own.
    virtual bool listedThroughAnother(const std::string& folder) const;
    /// Counters and facts the framework keeps only in the checkpoint's file names.
    virtual std::vector<NamedFact> factsFromNames(const CheckpointLayout&) const;
    /// Why the save of `checkpoint` did not finish, from a marker the framework leaves beside it
    /// while saving; empty when there is none.
    virtual std::string unfinishedSaveBeside(const std::string& checkpoint) const;
};

} // namespace ckpt
