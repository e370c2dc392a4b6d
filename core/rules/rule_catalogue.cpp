// SPDX-License-Identifier: MIT
#include "ckpt/rules/rule_catalogue.h"

#include <stdexcept>

namespace ckpt {
namespace {

using C = Component;
using S = Severity;
using R = RuleScope;

const std::vector<RuleInfo> kRules = {
    // model (W)
    {"model.missing", S::Info, C::Model, R::Checkpoint, "§2.1",
     "the checkpoint holds no model state_dict (optimizer or RNG only)"},
    {"model.config-disagrees", S::Error, C::Model, R::Checkpoint, "§2.1, §9.2",
     "the weights' block count, vocabulary rows or width disagree with the config.json saved beside them"},
    {"model.tokenizer-disagrees", S::Warning, C::Model, R::Checkpoint, "§9.1",
     "the tokenizer or generation_config.json beside the weights produces token ids past the token embedding's rows"},
    {"model.adapter-disagrees", S::Error, C::Model, R::Checkpoint, "§2.1, §9.2",
     "a LoRA adapter's weights disagree with its adapter_config.json's rank, with each other, or with the base weight beside them"},
    {"model.adapter-untargeted", S::Warning, C::Model, R::Checkpoint, "§9.2",
     "adapter weights of modules that adapter_config.json's target_modules does not select: peft drops them on load"},
    {"model.nonfinite", S::Error, C::Model, R::Checkpoint, "§10.1",
     "NaN or Inf in a model parameter or buffer"},
    {"model.keys-differ", S::Error, C::Model, R::Pair, "§10.3",
     "the two checkpoints' model keys differ beyond a wrapper prefix (module., _orig_mod.)"},
    {"model.prefix-differs", S::Warning, C::Model, R::Pair, "§10.3",
     "the same model keys under a different wrapper prefix (DDP module., torch.compile _orig_mod.)"},
    {"model.shape-changed", S::Error, C::Model, R::Pair, "§9.1, §10.3",
     "a parameter's shape changed between the checkpoints"},
    {"model.dtype-changed", S::Warning, C::Model, R::Pair, "§9.1",
     "a parameter's dtype changed between the checkpoints"},
    // optimizer (O)
    {"optimizer.state-missing", S::Error, C::Optimizer, R::Checkpoint, "§2.2, §9.2",
     "an optimizer that keeps per-parameter state has none although training has progressed"},
    {"optimizer.param-without-state", S::Warning, C::Optimizer, R::Checkpoint, "§2.2, §9.3",
     "trainable parameters without optimizer state while the others have it"},
    {"optimizer.unmatched-params", S::Warning, C::Optimizer, R::Checkpoint, "§9.2",
     "the optimizer's parameter count differs from the model's trainable parameters"},
    {"optimizer.moment-shape", S::Error, C::Optimizer, R::Checkpoint, "§9.3",
     "a moment (exp_avg, momentum_buffer...) whose shape differs from its parameter's"},
    {"optimizer.steps-differ", S::Warning, C::Optimizer, R::Checkpoint, "§2.2",
     "parameters of one optimizer at different `step` counts"},
    {"optimizer.step-vs-global-step", S::Error, C::Optimizer, R::Checkpoint, "§2.2, §3.2",
     "the optimizer's `step` equals the global step, less the AMP-skipped updates the scaler accounts for"},
    {"optimizer.nonfinite", S::Error, C::Optimizer, R::Checkpoint, "§10.1",
     "NaN or Inf in an optimizer moment"},
    {"optimizer.negative-second-moment", S::Error, C::Optimizer, R::Checkpoint, "§2.2",
     "exp_avg_sq (a running mean of squared gradients) holds negative values"},
    {"optimizer.reset", S::Error, C::Optimizer, R::Pair, "§2.2, §10.1",
     "the optimizer's `step` restarted or fell behind while the global step continued"},
    {"optimizer.step-delta", S::Warning, C::Optimizer, R::Pair, "§2.2, §6.1",
     "optimizer `step` advanced by a different amount than the global step (less AMP skips)"},
    {"optimizer.master-weights-differ", S::Error, C::Optimizer, R::Checkpoint, "§2.2, §10.1",
     "the module's weights are not the rounding of the optimizer's fp32 master copy (DeepSpeed ZeRO, Megatron-LM)"},
    {"optimizer.param-order-changed", S::Warning, C::Optimizer, R::Pair, "§2.2, §9.2",
     "the model lists the same parameters in another order in B while its optimizer continued A's state by position"},
    {"optimizer.moments-frozen", S::Error, C::Optimizer, R::Pair, "§2.2, §10.1",
     "moments zeroed or identical in both checkpoints while the parameters changed"},
    // scheduler (L)
    {"scheduler.lr-rose", S::Warning, C::Scheduler, R::Run, "§2.3, §10.1",
     "the optimizer's lr fell and then rose between checkpoints that saved no scheduler state (a schedule rebuilt at a resume)"},
    {"scheduler.missing", S::Info, C::Scheduler, R::Checkpoint, "§2.3",
     "a training checkpoint (optimizer present) without LR-scheduler state"},
    {"scheduler.position", S::Error, C::Scheduler, R::Checkpoint, "§2.3",
     "the scheduler's last_epoch equals the global step (per-step) or the epoch (per-epoch)"},
    {"scheduler.step-count", S::Warning, C::Scheduler, R::Checkpoint, "§2.3",
     "_step_count equals last_epoch + 1 (what torch keeps for a scheduler stepped normally)"},
    {"scheduler.lr-formula", S::Warning, C::Scheduler, R::Checkpoint, "§2.3",
     "the recorded _last_lr equals the scheduler formula at its own position"},
    {"scheduler.lr-past-minimum", S::Warning, C::Scheduler, R::Checkpoint, "§2.3, §10.1",
     "the schedule's own formula did not raise the LR again after bringing it to its minimum (cosine past T_max)"},
    {"scheduler.lr-optimizer", S::Error, C::Scheduler, R::Checkpoint, "§2.3",
     "the scheduler's _last_lr equals the optimizer param_groups' lr"},
    {"scheduler.initial-lr-missing", S::Error, C::Scheduler, R::Checkpoint, "§2.3, §9.2",
     "a scheduler past position 0 whose optimizer groups lack initial_lr (cannot be rebuilt on resume)"},
    {"scheduler.step-delta", S::Error, C::Scheduler, R::Pair, "§2.3, §10.1",
     "the scheduler moved as many positions as the global step (or epoch) between the checkpoints"},
    {"scheduler.lr-log-departs", S::Warning, C::Scheduler, R::Run, "§2.3, §9.3",
     "the logged learning rate after a checkpoint follows that checkpoint's schedule"},
    // scaler (A)
    {"scaler.state", S::Error, C::Scaler, R::Checkpoint, "§3.2",
     "a usable scaler state: a positive finite scale, a growth tracker from 0 to below growth_interval (warning past it)"},
    {"scaler.skipped-steps", S::Info, C::Scaler, R::Checkpoint, "§3.2",
     "optimizer updates skipped by AMP overflows, as the scale's backoffs account for them"},
    {"scaler.counters-missing", S::Warning, C::Scaler, R::Checkpoint, "§3.2",
     "a dynamic loss scaler saved without the counter of clean steps since its last overflow"},
    {"scaler.missing", S::Warning, C::Scaler, R::Checkpoint, "§3.2",
     "fp16 training recorded but no GradScaler state saved"},
    {"scaler.unreachable", S::Error, C::Scaler, R::Pair, "§3.2, §10.1",
     "B's scale cannot be reached from A's in the steps between them (reset to the initial value, or not restored)"},
    // rng (R)
    {"rng.missing", S::Info, C::Rng, R::Checkpoint, "§4.1",
     "a training checkpoint without any RNG state"},
    {"rng.invalid", S::Error, C::Rng, R::Checkpoint, "§4.1",
     "a generator state that set_state would reject or that is degenerate"},
    {"rng.rank-missing", S::Error, C::Rng, R::Checkpoint, "§4.4",
     "ranks of the recorded world size without RNG state"},
    {"rng.kinds-differ", S::Warning, C::Rng, R::Checkpoint, "§4.1, §4.4",
     "a rank lacks a generator (python, numpy, torch, cuda) that other ranks save"},
    {"rng.ranks-identical", S::Info, C::Rng, R::Checkpoint, "§4.4",
     "all ranks hold the same generator state (fine only when every rank is seeded alike)"},
    {"rng.unchanged", S::Info, C::Rng, R::Pair, "§4.1, §10.4",
     "a generator identical in both checkpoints although steps were taken"},
    {"rng.changed-same-step", S::Error, C::Rng, R::Pair, "§4.1, §9.3",
     "generator states differ between two checkpoints of the same step (a resume that did not restore RNG)"},
    {"rng.ranks-collapsed", S::Error, C::Rng, R::Pair, "§4.4, §10.4",
     "ranks with distinct generator states in A share one state in B (reseeded without the rank offset)"},
    {"rng.restarted", S::Warning, C::Rng, R::Run, "§4.1",
     "a generator back in a state it had at an earlier save, after moving in between: restarted from its seed on resume"},
    {"rng.repeated", S::Error, C::Rng, R::Pair, "§4.1, §10.4",
     "a generator in B is in a state A recorded for another rank or generator (reseeded, stream replayed)"},
    // data (D)
    {"data.cursor-missing", S::Info, C::Data, R::Checkpoint, "§4.2",
     "an epoch is recorded but no position within it, or a trained checkpoint records no data position at all"},
    {"data.cursor-vs-step", S::Error, C::Data, R::Checkpoint, "§4.2, §5",
     "epoch × batches per epoch + batch position equals global step × gradient accumulation"},
    {"data.ranks-disagree", S::Error, C::Data, R::Checkpoint, "§4.2, §4.4",
     "per-rank sampler epoch, position or seed disagree with each other or with the checkpoint's cursor"},
    {"data.cursor-delta", S::Error, C::Data, R::Pair, "§4.2, §10.1",
     "the data cursor advanced as many batches as the global step (repeated or skipped data)"},
    {"data.dp-ranks-changed", S::Warning, C::Data, R::Pair, "§4.2",
     "the data loader state covers another number of data-parallel ranks in B than in A: some ranks' positions were dropped"},
    {"data.sampler-changed", S::Error, C::Data, R::Pair, "§4.2",
     "the sampler or data seed changed, or the epoch went backwards, between the checkpoints"},
    {"data.accumulation-changed", S::Warning, C::Data, R::Run, "§5, §9.1",
     "the batches each optimizer step takes (Lightning's loop counters over the global step) are one number for the whole run"},
    // progress (C)
    {"progress.counters-disagree", S::Error, C::Progress, R::Checkpoint, "§6.1",
     "the global step or epoch recorded in different files (or the directory name) disagree"},
    {"progress.loop-counters", S::Warning, C::Progress, R::Checkpoint, "§6.1",
     "Lightning loop counters (ready/completed, batches stepped) disagree with the global step"},
    {"progress.step-order", S::Warning, C::Progress, R::Pair, "§8.3",
     "the second checkpoint of a pair is older than the first"},
    // environment (E)
    {"environment.not-recorded", S::Info, C::Environment, R::Checkpoint, "§9.1, §6.3",
     "torch version, world size or precision settings not recorded"},
    {"environment.mixed", S::Error, C::Environment, R::Checkpoint, "§9.1",
     "files of one checkpoint record different versions, world sizes or hashes"},
    {"environment.changed", S::Warning, C::Environment, R::Pair, "§9.1, §7.3",
     "versions, world size, config or dataset hash changed between the checkpoints"},
    // integrity (manifest audit rules are listed in core/audit/include/ckpt/audit/manifest_audit.h and reported as they are)
    {"integrity.file-unreadable", S::Error, C::Integrity, R::Checkpoint, "§6.3",
     "a file of the checkpoint cannot be opened, read or parsed"},
    {"integrity.shared-storage", S::Error, C::Integrity, R::Checkpoint, "§2.2, §6.1",
     "optimizer tensors sharing bytes with each other or with model parameters"},
    // ... and the manifest audit's rules (core/audit/include/ckpt/audit/manifest_audit.h), reported as the audit makes them
    {"integrity.manifest-unreadable", S::Error, C::Integrity, R::Checkpoint, "§6.3",
     "manifest.json absent, not JSON, without a `files` object, or with a bad entry"},
    {"integrity.no-manifest", S::Info, C::Integrity, R::Checkpoint, "§6.2",
     "another layout's commit marker but no manifest: sizes and hashes cannot be verified"},
    {"integrity.missing-file", S::Error, C::Integrity, R::Checkpoint, "§6.2, §7.2",
     "a file the manifest lists is absent"},
    {"integrity.size-mismatch", S::Error, C::Integrity, R::Checkpoint, "§6.3",
     "bytes on disk differ from the manifest"},
    {"integrity.hash-mismatch", S::Error, C::Integrity, R::Checkpoint, "§6.3, §8.3",
     "SHA-256 on disk differs from the manifest"},
    {"integrity.unexpected-file", S::Warning, C::Integrity, R::Checkpoint, "§6.3",
     "a file on disk the manifest does not list"},
    {"integrity.no-complete-marker", S::Error, C::Integrity, R::Checkpoint, "§6.2",
     "no commit marker (COMPLETE, or the layout's own: DCP's .metadata, Megatron-core's metadata.json; NeMo's -unfinished marker present): the save may have died midway"},
    {"integrity.rng-rank-missing", S::Error, C::Rng, R::Checkpoint, "§4.4, §7.2",
     "no per-rank RNG file for a rank below the manifest's world_size"},
    {"integrity.rng-rank-extra", S::Warning, C::Rng, R::Checkpoint, "§4.4",
     "a per-rank RNG file for a rank at or above world_size"},
    {"integrity.latest-invalid", S::Error, C::Integrity, R::Run, "§8.3",
     "`latest` unreadable, empty, pointing at nothing, or absent"},
    {"integrity.latest-incomplete", S::Error, C::Integrity, R::Run, "§6.2, §8.3",
     "`latest` names a checkpoint that is incomplete or fails verification"},
    {"integrity.latest-stale", S::Warning, C::Integrity, R::Run, "§8.3",
     "a newer complete checkpoint exists than the one `latest` names"},
    {"integrity.safetensors-index", S::Error, C::Integrity, R::Checkpoint, "§7.2",
     "a safetensors index whose weight_map disagrees with the shard headers"},
    {"integrity.dcp-coverage", S::Error, C::Integrity, R::Checkpoint, "§7.2",
     "DCP .metadata chunks that do not tile a tensor or point at missing data"},
    {"integrity.shard-missing", S::Error, C::Integrity, R::Checkpoint, "§7.2",
     "a DeepSpeed ZeRO checkpoint lacks the optimizer partition of a rank below dp_world_size"},
    {"integrity.content-unchecked", S::Warning, C::Integrity, R::Checkpoint, "§6.3",
     "model or optimizer tensors whose bytes could not be read, so the content rules did not check them"},
    // security
    {"security.dangerous-import", S::Error, C::Security, R::Checkpoint, "§11.2",
     "a pickle references globals that can run code (os.system, builtins.eval, subprocess...)"},
    {"security.unknown-import", S::Info, C::Security, R::Checkpoint, "§11.2",
     "a pickle references classes outside the known-safe list (torch.load(weights_only=True) would refuse)"},
    // run
    {"run.steps-order", S::Error, C::Progress, R::Run, "§8.3",
     "checkpoints ordered by name have increasing recorded global steps, none repeated"},
    {"run.save-interval", S::Info, C::Progress, R::Run, "§8.1",
     "the steps between consecutive saves are regular"},
    {"run.latest", S::Error, C::Integrity, R::Run, "§8.3",
     "the checkpoint `latest` designates exists and is complete"},
    {"run.lineage-diverges", S::Error, C::Progress, R::Run, "§8.3",
     "consecutive checkpoints' training logs (trainer_state.json log_history) agree on every step both logged"},
    {"run.best-missing", S::Warning, C::Integrity, R::Run, "§8.3",
     "the best checkpoint a run records is present in the run"},
};

} // namespace

const char* scopeName(RuleScope scope)
{
    switch (scope) {
    case RuleScope::Checkpoint: return "checkpoint";
    case RuleScope::Pair: return "pair";
    case RuleScope::Run: return "run";
    }
    return "?";
}

const std::vector<RuleInfo>& ruleCatalogue() { return kRules; }

const RuleInfo& ruleInfo(std::string_view id)
{
    for (const auto& r : kRules) {
        if (r.id == id)
            return r;
    }
    throw std::logic_error("rule not in the catalogue: " + std::string(id));
}

Finding makeFinding(std::string_view id, std::string message, std::string hint)
{
    const RuleInfo& info = ruleInfo(id);
    Finding f;
    f.rule = std::string(id);
    f.severity = info.severity;
    f.component = info.component;
    f.message = std::move(message);
    f.hint = std::move(hint);
    if (info.severity == Severity::Warning)
        f.assumes = std::string(ruleConvention(id));
    return f;
}

} // namespace ckpt
