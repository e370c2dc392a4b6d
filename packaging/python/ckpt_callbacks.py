"""Manifests, COMPLETE and update probes from the frameworks' own save points: one line in a user's code.

    # transformers: a TrainerCallback (manifest + COMPLETE in checkpoint-N/, probe of the next update)
    trainer = Trainer(..., callbacks=[CkptTrainerCallback()])

    # Lightning: a Callback (each save in its own folder <dirpath>/checkpoint-N/ with manifest + COMPLETE)
    trainer = pl.Trainer(..., callbacks=[ModelCheckpoint(...), CkptLightningCallback(loss_fn=F.mse_loss)])

    # accelerate: instead of accelerator.save_state(dir) (and, on resume, of accelerator.load_state(dir))
    save_state_with_manifest(accelerator, dir)
    load_state_with_probe(accelerator, dir)

Each save gets the recovery guide's commit (§6.2, §6.3): manifest.json with the size and SHA-256 of every file
the framework wrote in the checkpoint folder, then COMPLETE, written last (ckpt_writer.manifest_dict /
commit_manifest: the same manifest as CheckpointWriter's). `ckpt audit <folder>` verifies it. The update that
follows the save is recorded as a probe (ckpt_writer.UpdateProbe) in <parent>/probes/after-<checkpoint>/, the
place `ckpt validate <checkpoint>` looks; after a resume from one of these checkpoints, the resumed run's first
update replaces it (recorded_by "resume"), so `ckpt validate` says whether the resume restored everything.

What the probe needs and how it gets it without a line in the loop:
- the micro-batches and their losses: the model's forward is wrapped for the one recorded update (transformers,
  accelerate: the model's forward must return the loss, or a dict/tuple whose "loss"/first item is it; Lightning:
  the batch from on_train_batch_start, the loss as loss_fn(pl_module(*batch[:-1]), batch[-1]), or as the
  module's forward(*batch) when loss_fn is None);
- the loss module ckpt-validate replays: that forward traced with torch.jit.trace on the first micro-batch (the
  trace runs under torch.random.fork_rng, so the run's generators do not move);
- the state before and after: UpdateProbe's digests of the parameters and optimizer moments, the LR, the
  scheduler position, the RNG states (taken when the update's first forward starts).
The frameworks' optimizer and scheduler wrappers (accelerate's AcceleratedOptimizer/AcceleratedScheduler, which
the Trainer uses too) are unwrapped. The gradient norm is not recorded (none of the three hands it to a callback
in these versions); the clipping threshold is (the Trainer's max_grad_norm, Lightning's gradient_clip_val).

Limits: one process (rank 0 writes the manifest; a probe needs every rank's batches, which these hooks do not
gather); a save at an epoch's end is followed by the next epoch's DataLoader iterator, which draws a seed from
the global torch generator when the loader has no generator of its own, before the next update: that probe's
rng check then differs, truly (a resume restores the generators before the iterator is made). Importing this
module imports none of the frameworks; each class imports its own on first use.
"""
import os
import re
import shutil

import torch

from ckpt_writer import (COMPLETE, MANIFEST, UpdateProbe, capture_rng, commit_manifest, file_table,
                         manifest_dict, probe_dir_for)

__all__ = ["CkptTrainerCallback", "CkptLightningCallback", "save_state_with_manifest", "write_framework_manifest",
           "ProbeRecorder", "load_state_with_probe", "register_latest"]


def write_framework_manifest(checkpoint_dir, global_step, *, epoch=None, world_size=None, extra=None):
    """manifest.json (every file below checkpoint_dir, sizes and SHA-256) and then COMPLETE, in a folder a
    framework has just written. Returns the manifest dict."""
    for name in (MANIFEST, COMPLETE):  # a folder saved again (a resume that re-saves the same step)
        p = os.path.join(checkpoint_dir, name)
        if os.path.exists(p):
            os.remove(p)
    manifest = manifest_dict(int(global_step), epoch=epoch, world_size=world_size, extra=extra,
                             files=file_table(checkpoint_dir))
    commit_manifest(checkpoint_dir, manifest)
    return manifest


def register_latest(checkpoint_dir):
    """<parent>/latest := the folder's name, replaced atomically (guide §6.2 登记 latest, §8.3): what
    `ckpt audit` of the parent expects once the folders carry manifests."""
    parent, name = os.path.split(os.path.abspath(checkpoint_dir))
    tmp = os.path.join(parent, ".latest.tmp")
    with open(tmp, "w") as f:
        f.write(name + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(parent, "latest"))


def _unwrap_optimizer(opt):
    """The torch optimizer inside a framework's wrapper (accelerate's AcceleratedOptimizer subclasses
    torch.optim.Optimizer and holds the real one in .optimizer; Lightning's LightningOptimizer likewise)."""
    while opt is not None and isinstance(getattr(opt, "optimizer", None), torch.optim.Optimizer):
        opt = opt.optimizer
    return opt


def _unwrap_scheduler(sched):
    while sched is not None and not hasattr(sched, "last_epoch") and hasattr(sched, "scheduler"):
        sched = sched.scheduler
    return sched


def _loss_of(out):
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, dict):
        return out["loss"]
    return out[0]


class _TracedLoss(torch.nn.Module):
    """forward(*tensors) -> the micro-batch's loss, for torch.jit.trace: keys (a dict batch given to
    model(**batch)), or loss_fn(model(*tensors[:-1]), tensors[-1]), or model(*tensors)."""

    def __init__(self, model, keys=None, loss_fn=None):
        super().__init__()
        self.model = model
        self.keys = keys
        self.loss_fn = loss_fn

    def forward(self, *tensors):
        if self.keys is not None:
            return _loss_of(self.model(**dict(zip(self.keys, tensors))))
        if self.loss_fn is not None:
            return self.loss_fn(self.model(*tensors[:-1]), tensors[-1])
        return _loss_of(self.model(*tensors))


class ProbeRecorder:
    """Records the one update after a save (or a resume) as an UpdateProbe, from hooks: arm() at the save,
    start() when the update begins, micro_batch() per micro-batch (or the forward wrapper does it), finish()
    when the optimizer, scheduler and zero_grad are done. Every other update costs nothing."""

    def __init__(self, loss_fn=None):
        self.loss_fn = loss_fn
        self._armed = None    # (checkpoint_dir, step, recorded_by)
        self._live = None     # dict while an update is recorded
        self._probe = None

    def arm(self, checkpoint_dir, step, recorded_by="save"):
        self.abandon()
        self._armed = (os.path.abspath(checkpoint_dir), int(step), recorded_by)

    @property
    def recording(self):
        return self._live is not None

    def start(self, model, optimizer, scheduler=None, *, max_grad_norm=None, wrap_forward=True):
        """The update begins (before its first forward). With wrap_forward, model.forward is wrapped until
        finish(): each call is a micro-batch (its tensors, and the loss the forward returns)."""
        if self._armed is None or self._live is not None:
            return False
        checkpoint_dir, step, recorded_by = self._armed
        self._armed = None
        self._live = {"dir": checkpoint_dir, "step": step, "by": recorded_by, "model": model,
                      "optimizer": _unwrap_optimizer(optimizer), "scheduler": _unwrap_scheduler(scheduler),
                      "max_grad_norm": max_grad_norm, "rng_before": capture_rng(), "wrapped": None}
        if wrap_forward:
            original = model.forward

            def forward(*args, **kwargs):
                if self._live is None:
                    return original(*args, **kwargs)
                if kwargs and not args:
                    keys = sorted(k for k, v in kwargs.items() if isinstance(v, torch.Tensor))
                    tensors = [kwargs[k] for k in keys]
                else:
                    keys, tensors = None, list(args)
                self.prepare(tensors, keys=keys, traced=model, loss_fn=None)
                out = original(*args, **kwargs)
                self.micro_batch(tensors, _loss_of(out))
                return out

            model.forward = forward
            self._live["wrapped"] = model
        return True

    def prepare(self, tensors, *, keys=None, traced=None, loss_fn=None):
        """Before the update's first forward: traces the loss module from this micro-batch (keys: a dict
        batch given as model(**batch); loss_fn: the loss of model(*tensors[:-1]) and tensors[-1]) and takes
        the state the update starts from (UpdateProbe.__enter__)."""
        live = self._live
        if live is None or self._probe is not None:
            return
        module = self._trace(traced if traced is not None else live["model"], tensors, keys, loss_fn)
        self._probe = UpdateProbe(live["dir"], step=live["step"], module=module, model=live["model"],
                                  optimizer=live["optimizer"], scheduler=live["scheduler"],
                                  max_grad_norm=live["max_grad_norm"], recorded_by=live["by"])
        self._probe.__enter__()

    def micro_batch(self, tensors, loss):
        """One micro-batch: the tensors the loss module takes (in order) and its loss before any division."""
        if self._live is None or self._probe is None:
            return
        self._probe.batch(*tensors, loss=float(loss), rng_before=self._live["rng_before"])

    def _trace(self, model, tensors, keys, loss_fn):
        wrapper = _TracedLoss(model, keys=keys, loss_fn=loss_fn)
        live = self._live
        restore = live.get("wrapped")
        saved = None
        if restore is not None:  # trace the model's own forward, not our wrapper
            saved = restore.__dict__.pop("forward", None)
        # Non-persistent buffers (GPT-2's causal mask) are not in the checkpoint's W, and a traced module would
        # list them in its state_dict, which ckpt-validate loads strictly: trace them as constants instead.
        hidden = []
        for m in model.modules():
            for name in list(getattr(m, "_non_persistent_buffers_set", ())):
                if m._buffers.get(name) is not None:
                    t = m._buffers.pop(name)
                    m.__dict__[name] = t
                    hidden.append((m, name, t))
        try:
            with torch.random.fork_rng(devices=[]):
                return torch.jit.trace(wrapper, tuple(t.detach() for t in tensors), check_trace=False)
        finally:
            for m, name, t in hidden:
                m.__dict__.pop(name, None)
                m._buffers[name] = t
            if saved is not None:
                restore.forward = saved

    def finish(self):
        """The update is done (optimizer, scheduler stepped): writes probes/after-<checkpoint>/."""
        live, probe = self._live, self._probe
        self._unwrap()
        self._live, self._probe = None, None
        if probe is not None:
            probe.__exit__(None, None, None)

    def abandon(self):
        self._unwrap()
        self._live, self._probe = None, None

    def _unwrap(self):
        if self._live is not None and self._live.get("wrapped") is not None:
            self._live["wrapped"].__dict__.pop("forward", None)
            self._live["wrapped"] = None


# -- transformers ------------------------------------------------------------------------------------------

def _trainer_callback_base():
    from transformers import TrainerCallback
    return TrainerCallback


def CkptTrainerCallback(probe=True):
    """transformers: Trainer(..., callbacks=[CkptTrainerCallback()]). on_save: manifest.json + COMPLETE in
    <output_dir>/checkpoint-<global_step>/ (after the Trainer's own files, trainer_state.json last, and after
    its rotation); the next update is probed. After resume_from_checkpoint, the first update is probed as
    "resume" against the checkpoint the Trainer loaded."""
    base = _trainer_callback_base()

    class _Cb(base):
        def __init__(self):
            self.recorder = ProbeRecorder()

        def on_train_begin(self, args, state, control, **kw):
            if probe and state.global_step > 0:
                ckpt = os.path.join(args.output_dir, "checkpoint-%d" % state.global_step)
                if os.path.isdir(ckpt):
                    self.recorder.arm(ckpt, state.global_step, "resume")

        def on_step_begin(self, args, state, control, model=None, optimizer=None, lr_scheduler=None, **kw):
            if probe:
                self.recorder.start(model, optimizer, lr_scheduler,
                                    max_grad_norm=args.max_grad_norm if args.max_grad_norm else None)

        def on_step_end(self, args, state, control, **kw):
            if self.recorder.recording:
                self.recorder.finish()

        def on_save(self, args, state, control, **kw):
            ckpt = os.path.join(args.output_dir, "checkpoint-%d" % state.global_step)
            if state.is_world_process_zero and os.path.isdir(ckpt):
                write_framework_manifest(ckpt, state.global_step, epoch=state.epoch, world_size=args.world_size,
                                         extra={"framework": "transformers"})
                register_latest(ckpt)
            if probe and args.world_size == 1:
                self.recorder.arm(ckpt, state.global_step, "save")

        def on_train_end(self, args, state, control, **kw):
            self.recorder.abandon()

    _Cb.__name__ = _Cb.__qualname__ = "CkptTrainerCallback"
    return _Cb()


# -- Lightning ---------------------------------------------------------------------------------------------

def CkptLightningCallback(loss_fn=None, probe=True, per_save_folder=True):
    """Lightning (lightning.pytorch): pl.Trainer(callbacks=[..., CkptLightningCallback(loss_fn=...)]).

    Lightning saves one .ckpt file, and `ckpt audit` verifies a folder against the manifest.json in it; a
    manifest beside several .ckpt files would make the folder read as one checkpoint. So, with
    per_save_folder (default), setup() puts each ModelCheckpoint's saves in a folder of their own,
    <dirpath>/checkpoint-{step}/<the callback's file name>.ckpt (last.ckpt stays in <dirpath>, as Lightning links or
    copies it), and after every save (Trainer.save_checkpoint, wrapped) that folder gets manifest.json and
    COMPLETE, and <dirpath>/latest names it. A removed top-k save takes its folder with it. The .ckpt also
    carries this callback's state: the RNG states at the save (Lightning 2.1 saves none), restored on resume.
    loss_fn: the probe's loss, loss_fn(pl_module(*batch[:-1]), batch[-1]); None: pl_module(*batch) is the loss."""
    import lightning.pytorch as pl

    class _Cb(pl.Callback):
        def __init__(self):
            self.recorder = ProbeRecorder(loss_fn=loss_fn)
            self._pending = None

        @property
        def state_key(self):
            return "CkptLightningCallback"

        def setup(self, trainer, pl_module, stage):
            if per_save_folder:
                for cb in trainer.checkpoint_callbacks:
                    name = cb.filename or "{epoch}-{step}"
                    if name.startswith("checkpoint-{step}/"):
                        continue
                    if cb.auto_insert_metric_name:  # "{epoch}" -> "epoch={epoch}", as Lightning would
                        name = re.sub(r"\{([^{}:]+)(:[^{}]*)?\}",
                                      lambda m: "%s={%s%s}" % (m.group(1), m.group(1), m.group(2) or ""), name)
                        cb.auto_insert_metric_name = False
                    cb.filename = "checkpoint-{step}/" + name
            if getattr(trainer, "_ckpt_wrapped", False):
                return
            trainer._ckpt_wrapped = True
            original_save = trainer.save_checkpoint
            original_remove = trainer.strategy.remove_checkpoint

            def save_checkpoint(filepath, *args, **kwargs):
                original_save(filepath, *args, **kwargs)
                self._after_save(trainer, str(filepath))

            def remove_checkpoint(filepath):
                original_remove(filepath)
                folder = os.path.dirname(str(filepath))
                if per_save_folder and os.path.basename(folder).startswith("checkpoint-") and \
                        os.path.exists(os.path.join(folder, MANIFEST)):
                    shutil.rmtree(folder, ignore_errors=True)
                    shutil.rmtree(probe_dir_for(folder), ignore_errors=True)

            trainer.save_checkpoint = save_checkpoint
            trainer.strategy.remove_checkpoint = remove_checkpoint

        def _after_save(self, trainer, filepath):
            folder = os.path.dirname(os.path.abspath(filepath))
            if not trainer.is_global_zero or not per_save_folder or os.path.basename(filepath) == "last.ckpt":
                return
            write_framework_manifest(folder, trainer.global_step, epoch=trainer.current_epoch,
                                     extra={"framework": "lightning", "checkpoint_file": os.path.basename(filepath)})
            register_latest(folder)
            if probe and trainer.world_size == 1:
                self.recorder.arm(folder, trainer.global_step, "save")

        def state_dict(self):
            return {"rng": capture_rng()}

        def load_state_dict(self, state):
            self._pending = state

        def on_train_start(self, trainer, pl_module):
            if self._pending is not None:
                from ckpt_writer import restore_rng
                if "rng" in self._pending:
                    restore_rng(self._pending["rng"])
                self._pending = None
                path = trainer.ckpt_path
                if probe and path and os.path.basename(os.path.dirname(os.path.abspath(path))).startswith("checkpoint-"):
                    self.recorder.arm(os.path.dirname(os.path.abspath(path)), trainer.global_step, "resume")

        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
            if not probe or not self.recorder.start(pl_module, trainer.optimizers[0] if trainer.optimizers else None,
                                                    trainer.lr_scheduler_configs[0].scheduler
                                                    if trainer.lr_scheduler_configs else None,
                                                    max_grad_norm=trainer.gradient_clip_val or None,
                                                    wrap_forward=False):
                return
            self._batch = list(batch) if isinstance(batch, (list, tuple)) else [batch]
            self.recorder.prepare(self._batch, traced=pl_module, loss_fn=loss_fn)

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            if not self.recorder.recording:
                return
            loss = outputs["loss"] if isinstance(outputs, dict) else outputs
            self.recorder.micro_batch(self._batch, loss)
            self.recorder.finish()

    _Cb.__name__ = _Cb.__qualname__ = "CkptLightningCallback"
    return _Cb()


# -- accelerate --------------------------------------------------------------------------------------------

def save_state_with_manifest(accelerator, output_dir=None, probe=True, global_step=None, **save_kwargs):
    """accelerate: the line that replaces accelerator.save_state(output_dir). accelerate 0.24 has a pre-save
    hook (register_save_state_pre_hook, called before the files are written) but no post-save point, so this
    calls save_state, then writes manifest.json and COMPLETE into the folder it returns (on the main process),
    and arms a probe of the next update of the prepared model (its forward must return the loss), optimizer
    and scheduler. global_step: the updates done, for the manifest (default: the number in the folder's
    name, as accelerate's checkpoint_<i> and the examples' step_<n> name them). Returns the folder."""
    folder = accelerator.save_state(output_dir, **save_kwargs)
    if folder is None:  # older releases return nothing
        folder = output_dir
    folder = os.path.abspath(folder)
    if global_step is None:
        digits = "".join(c for c in os.path.basename(folder).split("_")[-1] if c.isdigit())
        global_step = int(digits) if digits else 0
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        write_framework_manifest(folder, global_step, extra={"framework": "accelerate"})
        register_latest(folder)
    accelerator.wait_for_everyone()
    if probe and accelerator.num_processes == 1 and accelerator._models and accelerator._optimizers:
        rec = _accelerate_recorder(accelerator)
        rec.arm(folder, global_step, "save")
    return folder


def load_state_with_probe(accelerator, input_dir, probe=True, global_step=None, **load_kwargs):
    """accelerate: the line that replaces accelerator.load_state(input_dir): loads, then probes the resumed
    run's first update against input_dir (recorded_by "resume"; it replaces the save's probe of input_dir), so
    `ckpt validate input_dir` says whether the resume restored everything."""
    out = accelerator.load_state(input_dir, **load_kwargs)
    folder = os.path.abspath(input_dir)
    if global_step is None:
        digits = "".join(c for c in os.path.basename(folder).split("_")[-1] if c.isdigit())
        global_step = int(digits) if digits else 0
    if probe and accelerator.num_processes == 1 and accelerator._models and accelerator._optimizers:
        _accelerate_recorder(accelerator).arm(folder, global_step, "resume")
    return out


def _accelerate_recorder(accelerator):
    """One recorder per Accelerator. It starts at the next call of the first prepared model (the optimizer and
    scheduler prepared last are the update's) and ends at the first zero_grad of that optimizer after it
    stepped (accelerate steps and zeroes the inner optimizer only on a gradient-sync step, so the micro-batches
    of gradient accumulation are one update)."""
    rec = getattr(accelerator, "_ckpt_recorder", None)
    if rec is not None:
        return rec
    rec = ProbeRecorder()
    accelerator._ckpt_recorder = rec
    model = accelerator._models[0]
    state = {"stepped": False}
    original_call = type(model).__call__

    def hook(inner):
        if getattr(inner, "_ckpt_hooked", False):
            return
        inner._ckpt_hooked = True
        step, zero_grad = inner.step, inner.zero_grad

        def inner_step(*a, **k):
            out = step(*a, **k)
            state["stepped"] = True
            return out

        def inner_zero_grad(*a, **k):
            out = zero_grad(*a, **k)
            if rec.recording and state["stepped"]:
                rec.finish()
            return out

        inner.step, inner.zero_grad = inner_step, inner_zero_grad

    class _Starter(type(model)):
        def __call__(self, *args, **kwargs):
            if rec._armed is not None and not rec.recording:
                opt = accelerator._optimizers[-1]
                hook(_unwrap_optimizer(opt))
                state["stepped"] = False
                rec.start(self, opt, accelerator._schedulers[-1] if accelerator._schedulers else None,
                          max_grad_norm=getattr(accelerator, "ckpt_max_grad_norm", None))
            return original_call(self, *args, **kwargs)

    _Starter.__name__ = type(model).__name__
    _Starter.__qualname__ = type(model).__qualname__
    model.__class__ = _Starter
    return rec
