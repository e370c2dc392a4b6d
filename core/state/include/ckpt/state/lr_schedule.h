// SPDX-License-Identifier: MIT
// Learning-rate schedulers from their saved state. A `lr_scheduler.state_dict()` is a plain dict of
// the scheduler's attributes (no class name), so the scheduler is recognised by its keys; for the
// schedulers whose formula depends only on saved values the LR of every parameter group can then be
// recomputed at any position, past or future, the way torch itself would produce it.
#pragma once

#include "ckpt/pickle/value_graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckpt {

struct LrScheduleBuilder; // lr_schedule.cpp

struct LrSchedule {
    /// "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
    /// "LinearLR", "ConstantLR", "PolynomialLR", "OneCycleLR", "CyclicLR", "SequentialLR",
    /// "ChainedScheduler", "LambdaLR" (also MultiplicativeLR: both save the same keys),
    /// "ReduceLROnPlateau", NeMo's "NeMo CosineAnnealing" and "NeMo WarmupPolicy" (its other
    /// schedulers, which save the same keys), Megatron-LM's "Megatron OptimizerParamScheduler" (its
    /// position num_steps counts samples), or "unknown" (looks like a scheduler, keys not recognised).
    std::string kind = "unknown";
    /// The formula is known: lrAt() reproduces torch. Otherwise only the recorded _last_lr is known.
    bool recomputable = false;
    std::string why;     // when not recomputable: why (lambda functions are not saved...)
    std::string warning; // when recomputable but the recorded _last_lr disagrees with the formula
    std::vector<double> baseLrs; // base_lrs (initial_lr of each group); SequentialLR: its first child's
    std::vector<double> lastLr;  // recorded _last_lr (empty if absent)
    int64_t lastEpoch = -1;      // position: last_epoch (ChainedScheduler: its first child's)
    int64_t stepCount = -1;      // _step_count when present
    /// The hyperparameters as text, for display ("gamma" -> "0.5", "milestones" -> "[5, 12, 12, 40]").
    std::vector<std::pair<std::string, std::string>> fields;
    /// SequentialLR / ChainedScheduler: the schedulers they hold, in order.
    std::vector<LrSchedule> children;

    /// LR of every param group at scheduler position `step` (what get_last_lr() returns once
    /// last_epoch == step, stepping from a fresh scheduler with step()). Throws std::logic_error when
    /// !recomputable, std::out_of_range for a negative step or one torch refuses (OneCycleLR past
    /// total_steps).
    std::vector<double> lrAt(int64_t step) const;
    /// lrAt(step) for every step from `first` to `last` (inclusive), in one pass: CosineAnnealingLR
    /// replays torch's recursion from 0 for each lrAt() call, so draw curves with this. Throws as lrAt.
    std::vector<std::vector<double>> lrSeries(int64_t first, int64_t last) const;

private:
    friend struct LrScheduleBuilder;

    struct Phase { // OneCycleLR
        double endStep = 0;
        std::string startKey, endKey; // param-group keys: "initial_lr", "max_lr", "min_lr"
    };

    // Formula parameters; which ones are used depends on `kind`.
    double m_gamma = 1, m_factor = 1, m_startFactor = 1, m_endFactor = 1, m_etaMin = 0, m_power = 1;
    double m_tMax = 1, m_totalSize = 1, m_stepRatio = 0.5;
    int64_t m_stepSize = 1, m_totalIters = 0, m_t0 = 1, m_tMult = 1, m_totalSteps = 0;
    std::vector<int64_t> m_milestones;       // MultiStepLR (sorted, with multiplicity); SequentialLR
    std::vector<Phase> m_phases;             // OneCycleLR
    std::vector<std::vector<std::pair<std::string, double>>> m_groupValues; // OneCycleLR: per group
    bool m_annealCos = true;                 // OneCycleLR
    std::vector<double> m_maxLrs;            // CyclicLR
    std::string m_mode, m_scaleMode;         // CyclicLR
    bool m_cosineStartsClosedForm = false;   // CosineAnnealingLR started by SequentialLR's step(0)
    struct WarmupDecay {                     // NeMo's CosineAnnealing, Megatron's OptimizerParamScheduler
        double initLr = 0, minLr = 0;
        int64_t warmup = 0, decay = 0, total = 0, constant = 0;
        std::string style;                   // Megatron's lr_decay_style
    } m_warmupDecay;

    std::vector<double> formulaAt(int64_t step) const; // the kinds computed one position at a time
    double nemoCosineAnnealing(double base, int64_t step) const;
    double megatronLr(double maxLr, int64_t samples) const;
    void cosineAnnealing(int64_t first, int64_t last, std::vector<std::vector<double>>& out) const;
    std::pair<int64_t, int64_t> warmRestartPosition(int64_t step) const;
};

/// Recognises a scheduler state_dict by its keys and reads it; nullopt when `stateDict` is not one.
/// `optimizerState` (an optimizer.state_dict(), optional) supplies what only the optimizer keeps:
/// OneCycleLR's max_lr/min_lr once torch (>= 2.4) stopped pickling them through the bound method.
std::optional<LrSchedule> readLrSchedule(const ValueGraph& graph, NodeId stateDict, NodeId optimizerState = kNoNode);

} // namespace ckpt
