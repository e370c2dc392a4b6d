// SPDX-License-Identifier: MIT
// Small helpers every rule family uses: reading numbers out of StateFields, writing evidence
// with provenance, and the recovery guide's diagnosis order (§10.1) for hints.
#pragma once

#include "ckpt/findings/finding.h"
#include "ckpt/state/state_values.h"
#include "ckpt/state/training_state.h"

#include <optional>
#include <string>
#include <vector>

namespace ckpt::rules {

/// "dir/optimizer.pt: optimizer/state/0/step" (the file alone when the key path is empty).
std::string where(const Provenance& from);
std::string where(const StateField& field);

Evidence evidence(std::string what, std::string value, const Provenance& from);
Evidence evidence(const StateField& field);

// numberText (shortest text that reads back as the same double) is the state model's:
// core/state/include/ckpt/state/state_values.h, found from ckpt::rules by ordinary lookup.
/// The number a field holds ("300", "1.6", "True" -> 1); nullopt when it is not a number.
std::optional<double> toNumber(const std::string& text);

/// "[64, 16]"
std::string shapeText(const std::vector<int64_t>& shape);

/// The first field of that name, or nullptr.
const StateField* findField(const std::vector<StateField>& fields, const std::string& name);
/// Every field of that name (one per file that records it).
std::vector<const StateField*> findFields(const std::vector<StateField>& fields, const std::string& name);
std::optional<double> fieldNumber(const std::vector<StateField>& fields, const std::string& name);

/// The world size a checkpoint records (environment world_size / dp_world_size), if any.
std::optional<int64_t> worldSize(const TrainingState& state);
/// Gradient accumulation steps recorded (progress or environment), 1 when none is.
int64_t gradientAccumulation(const TrainingState& state);

/// How often the writer's training loop steps the LR scheduler, as far as its save code lets the files
/// tell. What each framework's loop does is named here, once, for the rules to ask (issue 36 moves
/// it into the framework's adapter).
struct SchedulerCadence {
    /// Scheduler steps one optimizer update may make: 1, the gradient accumulation when the scheduler
    /// is stepped per micro-batch, the processes when the writer steps it once per process.
    std::vector<int64_t> perUpdate;
    /// The writer steps the scheduler every N updates or batches and does not save N (Lightning's
    /// lr_scheduler config `frequency`): a position short of the step is not proof of a fault.
    std::string frequencyUnrecorded;
};
SchedulerCadence schedulerCadence(const TrainingState& state);

/// The framework and version the checkpoint's files say wrote them ("Lightning 2.1.4", "transformers
/// 4.34.0"), as evidence for a finding that rests on that framework's save or resume code; nullopt
/// when the files do not say (accelerate records no version).
std::optional<Evidence> writerEvidence(const TrainingState& state);

/// The optimizer `step` most parameters share (nullopt without an optimizer or steps) and where
/// the first such step was read.
struct OptimizerStep {
    int64_t step = 0;
    Provenance from;
    bool allEqual = true;
};
std::optional<OptimizerStep> optimizerStep(const TrainingState& state);

/// Optimizer updates the training loop itself counts as skipped (DeepSpeed `skipped_steps`).
const StateField* skippedStepsField(const TrainingState& state);

/// The global step's evidence: value and where it was read (falls back to the directory name).
Evidence globalStepEvidence(const TrainingState& state);

/// The next check in the recovery guide's diagnosis order (§10.1): next batch -> parameter
/// summary -> optimizer step and LR -> scaler -> RNG -> distributed reduction and hardware.
/// Hints end with it so a user walks the same order whatever rule fired first.
std::string nextInDiagnosisOrder(Component component);

/// A hint: the usual cause, then what to check next in §10.1's order.
std::string hintWithNext(const std::string& cause, Component component);

} // namespace ckpt::rules
