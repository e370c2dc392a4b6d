#!/usr/bin/python3
"""Writes the bundled sample run: a small MLP really trained with Debian's PyTorch.

Usage: /usr/bin/python3 sample_runs/make_sample_runs.py [OUTDIR] [--only RUN,RUN...]   (default: sample_runs/, all runs)
       RUN: deepspeed, dcp (also writes dcp-no-collectives/), accelerate, or any of tiny-mlp, hf-trainer,
       lightning, ddp4-mlp, broken (these five are always written together).

tiny-mlp/ follows the recovery guide's directory layout (§6.2): one folder per save,
checkpoint-NNNNNNN/ with model.pt, optimizer.pt (optimizer, scheduler, scaler and counters),
rng-rank-0.pt, manifest.json (sizes and SHA-256 of every file) and COMPLETE written last,
plus a `latest` pointer at the run root and metrics.jsonl beside the checkpoints.
hf-trainer/ has the Hugging Face Trainer's checkpoint-N/ folders (pytorch_model.bin,
optimizer.pt, scheduler.pt, rng_state.pth, trainer_state.json with log_history and
best_model_checkpoint). lightning/ has PyTorch Lightning .ckpt files (state_dict,
optimizer_states, lr_schedulers, loops, callbacks with ModelCheckpoint's best path).
ddp4-mlp/ is a simulated 4-rank DDP run written with packaging/python/ckpt_writer.py (the module a
training loop would import): AdamW, CosineAnnealingLR, a CUDA-GradScaler-shaped scaler that backs off on
two simulated overflow steps, dropout and input noise drawn from each rank's own generators (seeded
seed + rank), a DistributedSampler-style cursor per rank, checkpoints at 100/200/300 and metrics.jsonl.
broken/ holds one run per fault (see broken/README.md): a good checkpoint-0000200 copied from ddp4-mlp and a
checkpoint-0000300 with exactly one fault, either made by really resuming from 200 with one step of the
resume missing, or by damaging a copy of ddp4-mlp's checkpoint-0000300 after it was committed.
Deterministic: the same torch build writes the same tensors.
"""
import collections
import dataclasses
import enum
import hashlib
import io
import json
import os
import pickle
import random
import shutil
import sys
import tempfile
import types

import numpy as np
import torch
import torch.nn as nn

sys.dont_write_bytecode = True  # no __pycache__ left in packaging/python by a generator run
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "packaging", "python"))
import ckpt_writer  # noqa: E402  (packaging/python/ckpt_writer.py)

STEPS = 150
SAVE_EVERY = 50
BATCH = 16


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def capture_rng():
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def save_checkpoint(run_dir, step, epoch, batch_pos, model, optimizer, scheduler, data_seed):
    final = os.path.join(run_dir, "checkpoint-%07d" % step)
    tmp = tempfile.mkdtemp(prefix=".tmp-checkpoint-", dir=run_dir)
    torch.save(model.state_dict(), os.path.join(tmp, "model.pt"))
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "scaler": {"scale": 65536.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                           "growth_interval": 2000, "_growth_tracker": 0},
                "epoch": epoch, "batch_pos": batch_pos, "global_step": step, "data_seed": data_seed,
                "format_version": 1, "torch_version": torch.__version__},
               os.path.join(tmp, "optimizer.pt"))
    torch.save({"rank": 0, "rng": capture_rng(), "sampler": {"epoch": epoch, "position": batch_pos, "seed": data_seed}},
               os.path.join(tmp, "rng-rank-0.pt"))
    files = {}
    for name in sorted(os.listdir(tmp)):
        p = os.path.join(tmp, name)
        files[name] = {"bytes": os.path.getsize(p), "sha256": sha256(p)}
    manifest = {"format_version": 3, "global_step": step, "epoch": epoch, "world_size": 1,
                "model_arch": "mlp-8-32-1", "torch_version": torch.__version__, "files": files}
    with open(os.path.join(tmp, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    open(os.path.join(tmp, "COMPLETE"), "w").close()
    if os.path.exists(final):
        shutil.rmtree(final)
    os.rename(tmp, final)
    with open(os.path.join(run_dir, "latest.tmp"), "w") as f:
        f.write(os.path.basename(final) + "\n")
    os.replace(os.path.join(run_dir, "latest.tmp"), os.path.join(run_dir, "latest"))


def make_data(data_seed):
    gen = torch.Generator().manual_seed(data_seed)
    x = torch.randn(BATCH * 25, 8, generator=gen)
    y = (x[:, :1] * 0.5 - x[:, 1:2] + 0.1 * torch.randn(BATCH * 25, 1, generator=gen))
    return x, y


def hf_trainer_run(out):
    """The Trainer's files for a small model trained for real (no transformers needed)."""
    run_dir = os.path.join(out, "hf-trainer")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    random.seed(1)
    np.random.seed(1)
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1.0, end_factor=0.1, total_iters=60)
    x, y = make_data(99)
    log_history, best = [], (None, None)
    for step in range(1, 61):
        pos = (step - 1) % 25
        loss = nn.functional.mse_loss(model(x[pos * BATCH:(pos + 1) * BATCH]), y[pos * BATCH:(pos + 1) * BATCH])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step % 10 == 0:
            log_history.append({"loss": round(loss.item(), 4), "learning_rate": scheduler.get_last_lr()[0],
                                "epoch": round(step / 25, 2), "step": step})
        if step % 20 == 0:
            with torch.no_grad():
                eval_loss = nn.functional.mse_loss(model(x[:64]), y[:64]).item()
            log_history.append({"eval_loss": eval_loss, "epoch": round(step / 25, 2), "step": step})
            ckpt = os.path.join(run_dir, "checkpoint-%d" % step)
            if best[0] is None or eval_loss < best[0]:
                best = (eval_loss, os.path.relpath(ckpt, out))  # as written: relative to the cwd
            os.makedirs(ckpt)
            torch.save(model.state_dict(), os.path.join(ckpt, "pytorch_model.bin"))
            torch.save(optimizer.state_dict(), os.path.join(ckpt, "optimizer.pt"))
            torch.save(scheduler.state_dict(), os.path.join(ckpt, "scheduler.pt"))
            torch.save({"python": random.getstate(), "numpy": np.random.get_state(), "cpu": torch.get_rng_state()},
                       os.path.join(ckpt, "rng_state.pth"))
            state = {"best_metric": best[0], "best_model_checkpoint": best[1], "epoch": step / 25,
                     "global_step": step, "is_hyper_param_search": False, "is_local_process_zero": True,
                     "is_world_process_zero": True, "log_history": list(log_history), "logging_steps": 10,
                     "max_steps": 60, "num_train_epochs": 3, "save_steps": 20, "total_flos": 0.0,
                     "train_batch_size": BATCH, "trial_name": None, "trial_params": None}
            with open(os.path.join(ckpt, "trainer_state.json"), "w") as f:
                f.write(json.dumps(state, indent=2, sort_keys=True) + "\n")


def lightning_run(out):
    """Lightning-shaped .ckpt files written the way Lightning does (to a file object: archive/)."""
    run_dir = os.path.join(out, "lightning")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(os.path.join(run_dir, "checkpoints"))
    torch.manual_seed(2)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
    x, y = make_data(7)
    metrics = ["step,epoch,train_loss"]
    best_path, best_score = None, None
    for step in range(1, 51):
        pos = (step - 1) % 25
        loss = nn.functional.mse_loss(model(x[pos * BATCH:(pos + 1) * BATCH]), y[pos * BATCH:(pos + 1) * BATCH])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        metrics.append("%d,%d,%r" % (step, (step - 1) // 25, loss.item()))
        if step % 25 == 0:
            scheduler.step()
            epoch = step // 25 - 1
            path = os.path.join(run_dir, "checkpoints", "epoch=%d-step=%d.ckpt" % (epoch, step))
            if best_score is None or loss.item() < best_score:
                best_path, best_score = os.path.relpath(path, out), loss.item()
            progress = {"total": {"ready": step, "completed": step}, "current": {"ready": step, "completed": step}}
            ckpt = {
                "epoch": epoch, "global_step": step, "pytorch-lightning_version": "2.1.0",
                "state_dict": collections.OrderedDict(("model." + k, v) for k, v in model.state_dict().items()),
                "loops": {"fit_loop": {"state_dict": {}, "epoch_loop.state_dict": {"_batches_that_stepped": step},
                                       "epoch_loop.automatic_optimization.optim_progress": {"optimizer": {"step": progress}},
                                       "epoch_progress": {"total": {"ready": epoch + 1, "completed": epoch + 1},
                                                          "current": {"ready": epoch + 1, "completed": epoch + 1}}}},
                "callbacks": {"ModelCheckpoint{'monitor': 'train_loss', 'mode': 'min'}": {
                    "monitor": "train_loss", "best_model_score": torch.tensor(best_score),
                    "best_model_path": best_path, "current_score": torch.tensor(loss.item()),
                    "dirpath": "lightning/checkpoints"}},
                "optimizer_states": [optimizer.state_dict()], "lr_schedulers": [scheduler.state_dict()],
                "hparams_name": "kwargs", "hyper_parameters": {"lr": 0.05, "hidden": 16},
            }
            buf = io.BytesIO()
            torch.save(ckpt, buf)
            with open(path, "wb") as f:
                f.write(buf.getvalue())
    with open(os.path.join(run_dir, "metrics.csv"), "w") as f:
        f.write("\n".join(metrics) + "\n")


# ---- ddp4-mlp: a simulated 4-rank DDP run written with ckpt_writer ------------------------------------

D_WORLD = 4
D_SEED = 1234              # rank r seeds its generators with D_SEED + r
D_DATA_SEED = 4321         # the sampler's permutation seed (the same on every rank, as DistributedSampler)
D_STEPS = 300
D_SAVE_EVERY = 100
D_BATCH = 8                # per rank
D_BPE = 64                 # batches per epoch per rank
D_SAMPLES = D_WORLD * D_BATCH * D_BPE
D_IN = 16
D_LR = 3e-3
D_OVERFLOW_STEPS = (37, 141)   # steps whose (simulated) fp16 gradients overflow: update skipped, scale halved
D_ARCH = "mlp-16-64-64-1-dropout0.1"
D_CONFIG = {"model": D_ARCH, "optimizer": {"name": "AdamW", "lr": D_LR, "weight_decay": 0.01},
            "scheduler": {"name": "CosineAnnealingLR", "T_max": D_STEPS}, "max_grad_norm": 1.0,
            "amp": {"init_scale": 65536.0, "growth_interval": 2000}, "world_size": D_WORLD,
            "per_rank_batch_size": D_BATCH, "seed": D_SEED, "data_seed": D_DATA_SEED, "steps": D_STEPS}
D_FAULT_STEP = 200         # broken runs resume from (or keep) this checkpoint
D_LAST = D_STEPS


class SimulatedGradScaler:
    """The bookkeeping of torch.cuda.amp.GradScaler(init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000) on a machine without CUDA (a CPU GradScaler(enabled=False) has state_dict() == {}).
    update(found_inf) follows torch's _amp_update_scale_: an overflow halves the scale and zeroes the growth
    tracker (and the caller skips optimizer.step()); growth_interval clean steps in a row double it."""

    def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._scale = float(init_scale)
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._growth_tracker = 0

    def get_scale(self):
        return self._scale

    def update(self, found_inf):
        if found_inf:
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0

    def state_dict(self):  # the keys and order of GradScaler.state_dict() (formats.md §4.6)
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, sd):
        self._scale = float(sd["scale"])
        self._growth_factor = sd["growth_factor"]
        self._backoff_factor = sd["backoff_factor"]
        self._growth_interval = sd["growth_interval"]
        self._growth_tracker = sd["_growth_tracker"]


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def ddp4_data():
    gen = torch.Generator().manual_seed(D_DATA_SEED)
    x = torch.randn(D_SAMPLES, D_IN, generator=gen)
    y = (torch.sin(x[:, :1]) + 0.5 * x[:, 1:2] * x[:, 2:3] - x[:, 3:4]
         + 0.05 * torch.randn(D_SAMPLES, 1, generator=gen))
    return x, y


def ddp4_model():
    return nn.Sequential(nn.Linear(D_IN, 64), nn.ReLU(), nn.Dropout(0.1),
                         nn.Linear(64, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 1))


def ddp4_dataset_version(x, y):
    h = hashlib.sha256()
    h.update(x.numpy().tobytes())
    h.update(y.numpy().tobytes())
    return "sha256:" + h.hexdigest()


class Ddp4Job:
    """One simulated DDP job: 4 ranks in one process. Rank r's generators live in rank_rng[r] and are switched
    in around its forward pass (input noise from numpy, its scale from Python's random, dropout from torch),
    so each rank's RNG advances on its own as in a real multi-process job. Gradients are the mean over ranks
    (what DDP's all-reduce computes); every rank holds rank 0's initial weights (DDP broadcasts them).

    rank_seed(r) is the seed each rank's start-up code uses: D_SEED + r (a bug would use the same for all)."""

    def __init__(self, rank_seed=lambda r: D_SEED + r):
        self.x, self.y = ddp4_data()
        self.rank_rng = []
        for r in range(D_WORLD):  # each rank process: seed, build the model; rank 0's weights win
            seed_everything(rank_seed(r))
            model = ddp4_model()
            if r == 0:
                self.model = model
            self.rank_rng.append(ckpt_writer.capture_rng())
        self.model.train()
        self.loss_module = ckpt_writer.SupervisedLoss(self.model, nn.MSELoss())
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=D_LR, weight_decay=0.01)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=D_STEPS)
        self.scaler = SimulatedGradScaler()
        self.step, self.epoch, self.batch_pos = 0, 0, 0
        self._perm = {}

    def rank_indices(self, epoch, pos, rank):
        if epoch not in self._perm:  # DistributedSampler: one permutation per epoch from seed + epoch
            self._perm[epoch] = torch.randperm(D_SAMPLES, generator=torch.Generator().manual_seed(D_DATA_SEED + epoch))
        shard = self._perm[epoch][rank::D_WORLD]
        return shard[pos * D_BATCH:(pos + 1) * D_BATCH]

    def train_step(self, fault=None, writer=None):
        """One update. `writer` (a CheckpointWriter) records it as a probe when a save or a resume armed one."""
        probe = writer.probe(module=self.loss_module, model=self.model, optimizer=self.optimizer,
                             scheduler=self.scheduler, scaler=self.scaler,
                             cursor={"epoch": self.epoch, "batch_pos": self.batch_pos},
                             rank_cursors={r: {"sampler.epoch": self.epoch, "sampler.position": self.batch_pos}
                                           for r in range(D_WORLD)},
                             max_grad_norm=1.0) if writer is not None else ckpt_writer._NoProbe()
        with probe:
            return self._train_step(fault, probe)

    def _train_step(self, fault, probe):
        if self.batch_pos >= D_BPE:
            self.epoch, self.batch_pos = self.epoch + 1, 0
        pos = self.batch_pos
        lr = self.optimizer.param_groups[0]["lr"]
        self.optimizer.zero_grad(set_to_none=True)
        losses = []
        for r in range(D_WORLD):
            rng_before = self.rank_rng[r]
            ckpt_writer.restore_rng(rng_before)
            idx = self.rank_indices(self.epoch, pos, r)
            jitter = random.uniform(0.0, 0.05)
            noise = torch.from_numpy(np.random.standard_normal((D_BATCH, D_IN)).astype(np.float32))
            xb = self.x[idx] + jitter * noise
            loss = nn.functional.mse_loss(self.model(xb), self.y[idx])
            (loss / D_WORLD).backward()  # the all-reduced mean gradient
            losses.append(loss.item())
            self.rank_rng[r] = ckpt_writer.capture_rng()
            probe.batch(xb, self.y[idx], loss=loss, rank=r, rng_before=rng_before, rng_after=self.rank_rng[r])
        step = self.step + 1
        found_inf = step in D_OVERFLOW_STEPS
        grad_norm = None  # inf on an overflow step: logged as null
        if not found_inf:  # GradScaler.step skips optimizer.step() when the gradients overflowed
            grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0).item()
            self.optimizer.step()
        probe.update(grad_norm=grad_norm, found_inf=found_inf)
        self.scaler.update(found_inf)
        self.scheduler.step()
        if fault == "scheduler-stepped-twice":
            self.scheduler.step()  # e.g. a callback that also steps it, or a step per micro-batch
        self.step, self.batch_pos = step, pos + 1
        return {"step": step, "loss": sum(losses) / D_WORLD, "learning_rate": lr, "grad_norm": grad_norm,
                "scale": self.scaler.get_scale()}

    def save(self, writer):
        for r in range(D_WORLD):
            writer.save_rank_state(r, self.rank_rng[r],
                                   {"epoch": self.epoch, "position": self.batch_pos, "seed": D_DATA_SEED})
        return writer.save(self.step, model=self.model, optimizer=self.optimizer, scheduler=self.scheduler,
                           scaler=self.scaler, epoch=self.epoch, batch_pos=self.batch_pos, data_seed=D_DATA_SEED,
                           extra_manifest={"data": {"samples": D_SAMPLES, "per_rank_batch_size": D_BATCH,
                                                    "batches_per_epoch": D_BPE, "sampler_seed": D_DATA_SEED},
                                           "seed": D_SEED, "rank_seed": "seed + rank"})

    def resume(self, path, fault=None):
        """The guide's §9.2 order: model, optimizer, scheduler, scaler, progress, RNG, data cursor. `fault`
        leaves out (or gets wrong) exactly one of them."""
        self.model.load_state_dict(torch.load(os.path.join(path, "model.pt")))
        state = torch.load(os.path.join(path, "optimizer.pt"))
        if fault != "optimizer-not-restored":
            self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if fault == "optimizer-not-restored":
            # Keep the schedule on track (torch 1.13's chainable CosineAnnealingLR would otherwise continue
            # from the fresh optimizer's lr): the only thing lost is Adam's state.
            for group, group_lr in zip(self.optimizer.param_groups, self.scheduler.get_last_lr()):
                group["lr"] = group_lr
        if fault != "scaler-reset":
            self.scaler.load_state_dict(state["scaler"])
        self.step, self.epoch, self.batch_pos = state["global_step"], state["epoch"], state["batch_pos"]
        if fault == "data-cursor-wrong":
            self.batch_pos = 0  # the epoch restarts from its first batch: batches 0..batch_pos-1 again
        for r in range(D_WORLD):
            rank_state = torch.load(os.path.join(path, "rng-rank-%d.pt" % r))
            assert rank_state["rank"] == r and rank_state["world_size"] == D_WORLD
            if fault != "rng-not-restored":
                self.rank_rng[r] = rank_state["rng"]


def ddp4_writer(run_dir):
    x, y = ddp4_data()
    return ckpt_writer.CheckpointWriter(run_dir, rank=0, world_size=D_WORLD, model_arch=D_ARCH, config=D_CONFIG,
                                        dataset_version=ddp4_dataset_version(x, y))


def write_jsonl(path, records):
    with open(path, "w") as f:
        for rec in records:
            f.write(json.dumps(rec) + "\n")


def manifest_hashes(checkpoint_dir):
    return {k: v["sha256"] for k, v in ckpt_writer.read_manifest(checkpoint_dir)["files"].items()}


def ddp4_run(out):
    run_dir = os.path.join(out, "ddp4-mlp")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    job, writer, records = Ddp4Job(), ddp4_writer(run_dir), []
    for step in range(1, D_STEPS + 1):
        records.append(job.train_step(writer=writer))  # the update after each save is recorded as a probe
        if step % D_SAVE_EVERY == 0:
            job.save(writer)
    write_jsonl(os.path.join(run_dir, "metrics.jsonl"), records)
    last = ckpt_writer.load_latest(run_dir, fallback=False)
    assert os.path.basename(last) == ckpt_writer.checkpoint_name(D_STEPS), last
    return run_dir, records


def resumed_run(run_dir, good_run, good_records, fault=None):
    """good_run's checkpoint-0000200 and metrics up to 200 copied into run_dir, then a resume from it (found
    with load_latest) that trains to 300 and saves; `fault` is the one thing the resume gets wrong."""
    name = ckpt_writer.checkpoint_name(D_FAULT_STEP)
    shutil.copytree(os.path.join(good_run, name), os.path.join(run_dir, name))
    with open(os.path.join(run_dir, "latest"), "w") as f:
        f.write(name + "\n")
    # The bug in rng-not-restored: the resume path reseeds every rank with the base seed instead of
    # restoring each rank's saved generators.
    job = Ddp4Job(rank_seed=(lambda r: D_SEED) if fault == "rng-not-restored" else (lambda r: D_SEED + r))
    resumed_from = ckpt_writer.load_latest(run_dir, fallback=False)
    job.resume(resumed_from, fault)
    # The resumed run's first update is recorded as a probe of the checkpoint it resumed from:
    # ckpt validate replays that update from the checkpoint and names what this resume got wrong.
    writer = ddp4_writer(run_dir)
    writer.arm_probe(resumed_from, D_FAULT_STEP, recorded_by="resume")
    records = [job.train_step(fault, writer if i == 0 else None) for i in range(D_LAST - D_FAULT_STEP)]
    job.save(writer)
    write_jsonl(os.path.join(run_dir, "metrics.jsonl"), good_records[:D_FAULT_STEP] + records)
    return os.path.join(run_dir, ckpt_writer.checkpoint_name(D_LAST))


def flip_tensor_byte(path):
    """XOR 0xff into the low-order byte of a float in the middle of the largest tensor record of a
    torch.save zip (stored uncompressed): the file still loads, one value changes slightly, the hash breaks."""
    import struct
    import zipfile
    with zipfile.ZipFile(path) as z:
        info = max((i for i in z.infolist() if "/data/" in i.filename), key=lambda i: i.file_size)
    with open(path, "r+b") as f:
        f.seek(info.header_offset)
        header = f.read(30)
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        offset = info.header_offset + 30 + name_len + extra_len + (info.file_size // 2 // 4) * 4
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0xFF]))
    return info.filename, offset


BROKEN = ["optimizer-not-restored", "scheduler-stepped-twice", "scaler-reset", "rng-not-restored",
          "data-cursor-wrong", "missing-rank-rng", "hash-mismatch", "no-complete-marker"]


def broken_runs(out, good_run, good_records):
    base = os.path.join(out, "broken")
    for fault in BROKEN:
        shutil.rmtree(os.path.join(base, fault), ignore_errors=True)
    os.makedirs(base, exist_ok=True)
    last = ckpt_writer.checkpoint_name(D_LAST)
    for fault in BROKEN:
        run_dir = os.path.join(base, fault)
        os.makedirs(run_dir)
        if fault in ("optimizer-not-restored", "scheduler-stepped-twice", "scaler-reset", "rng-not-restored",
                     "data-cursor-wrong"):
            resumed_run(run_dir, good_run, good_records, fault)
            continue
        # Damage done to a committed copy of ddp4-mlp's last checkpoint.
        for name in (ckpt_writer.checkpoint_name(D_FAULT_STEP), last):
            shutil.copytree(os.path.join(good_run, name), os.path.join(run_dir, name))
        shutil.copy(os.path.join(good_run, "metrics.jsonl"), run_dir)
        with open(os.path.join(run_dir, "latest"), "w") as f:
            f.write(last + "\n")
        ckpt = os.path.join(run_dir, last)
        if fault == "missing-rank-rng":
            os.remove(os.path.join(ckpt, "rng-rank-2.pt"))
        elif fault == "hash-mismatch":
            flip_tensor_byte(os.path.join(ckpt, "optimizer.pt"))
        elif fault == "no-complete-marker":
            os.remove(os.path.join(ckpt, "COMPLETE"))
    check_broken(base, good_run)


def check_broken(base, good_run):
    """Each broken run shows its fault and nothing else that differs from what the good run would have."""
    last = ckpt_writer.checkpoint_name(D_LAST)
    good = os.path.join(good_run, last)
    good_hashes = manifest_hashes(good)

    def state(fault):
        return torch.load(os.path.join(base, fault, last, "optimizer.pt"))

    def rng(fault, rank):
        return torch.load(os.path.join(base, fault, last, "rng-rank-%d.pt" % rank))

    for fault in BROKEN:
        problems = ckpt_writer.verify_checkpoint(os.path.join(base, fault, last))
        integrity = fault in ("missing-rank-rng", "hash-mismatch", "no-complete-marker")
        assert bool(problems) == integrity, (fault, problems)
        assert not ckpt_writer.verify_checkpoint(os.path.join(base, fault, ckpt_writer.checkpoint_name(D_FAULT_STEP)))
        picked = ckpt_writer.load_latest(os.path.join(base, fault))
        assert os.path.basename(picked) == (ckpt_writer.checkpoint_name(D_FAULT_STEP) if integrity else last), fault
    g = torch.load(os.path.join(good, "optimizer.pt"))
    adam_step = lambda s: {float(v["step"]) for v in s["optimizer"]["state"].values()}  # noqa: E731
    assert adam_step(g) == {float(D_LAST - len(D_OVERFLOW_STEPS))}
    assert adam_step(state("optimizer-not-restored")) == {float(D_LAST - D_FAULT_STEP)}
    assert state("scheduler-stepped-twice")["scheduler"]["last_epoch"] == 2 * D_LAST - D_FAULT_STEP
    assert state("scaler-reset")["scaler"]["scale"] == 65536.0 and g["scaler"]["scale"] == 16384.0
    c = state("data-cursor-wrong")
    assert (c["epoch"], c["batch_pos"]) != (g["epoch"], g["batch_pos"])
    # Reseeded with D_SEED: every rank replays what rank 0 drew in the first 100 steps of the good run.
    first = torch.load(os.path.join(good_run, ckpt_writer.checkpoint_name(D_SAVE_EVERY), "rng-rank-0.pt"))["rng"]
    for r in range(D_WORLD):
        got = rng("rng-not-restored", r)["rng"]
        assert torch.equal(got["torch"], first["torch"]) and got["python"] == first["python"]
        assert all(np.array_equal(a, b) for a, b in zip(got["numpy"], first["numpy"]))
    # The simulated scaler does not change the arithmetic: a reset scaler leaves weights and RNG as they were.
    for name in ["model.pt"] + ["rng-rank-%d.pt" % r for r in range(D_WORLD)]:
        assert sha256(os.path.join(base, "scaler-reset", last, name)) == good_hashes[name], name
    # Only the faulty state differs from the good checkpoint where a fault cannot touch the others.
    for fault, same in (("missing-rank-rng", ["model.pt", "optimizer.pt", "rng-rank-0.pt", "rng-rank-1.pt",
                                              "rng-rank-3.pt"]),
                        ("hash-mismatch", ["model.pt", "rng-rank-0.pt", "rng-rank-1.pt", "rng-rank-2.pt",
                                           "rng-rank-3.pt"])):
        for name in same:
            assert sha256(os.path.join(base, fault, last, name)) == good_hashes[name], (fault, name)


def check_correct_resume(good_run, good_records, scratch):
    """A resume that restores everything reproduces the uninterrupted run's checkpoint-0000300 byte for byte:
    the writer saves, and the job restores, the complete training state."""
    run_dir = os.path.join(scratch, "resume-check")
    os.makedirs(run_dir)
    resumed = resumed_run(run_dir, good_run, good_records)
    good = os.path.join(good_run, ckpt_writer.checkpoint_name(D_LAST))
    assert manifest_hashes(resumed) == manifest_hashes(good), "a correct resume does not reproduce the run"
    with open(os.path.join(run_dir, "metrics.jsonl")) as a, open(os.path.join(good_run, "metrics.jsonl")) as b:
        assert a.read() == b.read()
    # The correct resume's first update is the original run's update 201, digest for digest.
    name = ckpt_writer.checkpoint_name(D_FAULT_STEP)

    def probe(run):
        with open(os.path.join(ckpt_writer.probe_dir_for(os.path.join(run, name)), "probe.json")) as f:
            p = json.load(f)
        assert p["recorded_by"] in ("save", "resume")
        del p["recorded_by"]
        return p
    assert probe(run_dir) == probe(good_run), "a correct resume's first update differs from the original run's"


# ---- deepspeed/, dcp/, dcp-no-collectives/, accelerate/: other frameworks' layouts -----------------
#
# DeepSpeed, accelerate and torch.distributed.checkpoint are not installed (the last is missing from Debian's
# torch 1.13), so their files are written the way those libraries write them (formats.md §5, §9): the same
# torch.save calls, dict keys and pickled classes. Their classes are stood in for by look-alikes registered
# under the real module paths, so each pickle names the GLOBAL the real library writes. Every model below
# is really trained; only the number of processes is simulated.

def stand_in(module_name, cls):
    """Registers `cls` as `module_name.<its name>` so pickle writes that GLOBAL (formats.md §3.4: the
    inspector shows such objects without importing anything)."""
    parts = module_name.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        if name not in sys.modules:
            sys.modules[name] = types.ModuleType(name)
    cls.__module__ = module_name
    setattr(sys.modules[module_name], cls.__qualname__, cls)
    return cls


class ClassicEnumPickle:
    """Enum members pickled as `Class(value)` (GLOBAL + (value,) + REDUCE), as Python <= 3.10 and the real
    DeepSpeed/DCP files do; Python 3.11 would write builtins.getattr(Class, name) instead."""

    def __reduce_ex__(self, proto):
        return self.__class__, (self._value_,)


class ZeroStageEnum(ClassicEnumPickle, int, enum.Enum):  # deepspeed.runtime.zero.config
    disabled = 0
    optimizer_states = 1
    gradients = 2
    weights = 3


class DynamicLossScaler:
    """deepspeed.runtime.fp16.loss_scaler.DynamicLossScaler: the attributes DeepSpeed 0.14 sets, and its
    update_scale(): with hysteresis (delayed_shift) 2 the first overflow only uses up one unit of hysteresis,
    the second halves the scale."""

    def __init__(self, init_scale=2.0 ** 16, scale_factor=2.0, scale_window=1000, min_scale=1, delayed_shift=2,
                 consecutive_hysteresis=False, raise_error_at_min_scale=True, dtype=torch.half):
        self.cur_scale = init_scale
        self.dynamic = False
        self.cur_iter = 0
        self.last_overflow_iter = -1
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        self.min_scale = min_scale
        self.delayed_shift = delayed_shift
        self.cur_hysteresis = delayed_shift
        self.consecutive_hysteresis = consecutive_hysteresis
        self.raise_error_at_min_scale = raise_error_at_min_scale
        self.dynamic = True
        self.dtype = dtype

    def update_scale(self, overflow):
        if overflow:
            if self.delayed_shift == 1 or self.cur_hysteresis == 1:
                self.cur_scale = max(self.cur_scale / self.scale_factor, self.min_scale)
            else:
                self.cur_hysteresis -= 1
            self.last_overflow_iter = self.cur_iter
        else:
            if self.consecutive_hysteresis:
                self.cur_hysteresis = self.delayed_shift
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                if not self.consecutive_hysteresis:
                    self.cur_hysteresis = self.delayed_shift
                self.cur_scale *= self.scale_factor
        self.cur_iter += 1


@dataclasses.dataclass
class fragment_address:  # noqa: N801 (deepspeed.utils.tensor_fragment's name)
    numel: int
    start: int


DS_WORLD = 2               # data-parallel ranks (ZeRO-2 partitions the optimizer state over them)
DS_MICRO_BATCH = 8
DS_STEPS = 40
DS_SAVE_EVERY = 20
DS_OVERFLOW_STEPS = (13, 27)
DS_CONFIG = {"train_batch_size": DS_WORLD * DS_MICRO_BATCH, "train_micro_batch_size_per_gpu": DS_MICRO_BATCH,
             "gradient_accumulation_steps": 1, "gradient_clipping": 1.0,
             "optimizer": {"type": "AdamW", "params": {"lr": 2e-3, "betas": [0.9, 0.999], "eps": 1e-8,
                                                       "weight_decay": 0.01}},
             "fp16": {"enabled": True, "initial_scale_power": 16, "loss_scale_window": 1000, "hysteresis": 2,
                      "min_loss_scale": 1},
             "zero_optimization": {"stage": 2, "contiguous_gradients": True, "overlap_comm": True}}


def deepspeed_run(out):
    """A DeepSpeed ZeRO-2 fp16 job on 2 data-parallel ranks (engine.save_checkpoint, formats.md §9.1): per save,
    global_stepN/mp_rank_00_model_states.pt (rank 0: fp16 module, param_shapes, LambdaLR state, counters, config)
    and zero_pp_rank_{0,1}_mp_rank_00_optim_states.pt (each rank's slice of the flat fp32 master weights and
    AdamW moments, param_slice_mappings naming the parameter fragments in it); `latest` names the tag.
    Adam is elementwise, so the per-parameter AdamW trained here has exactly the moments DeepSpeed's flat
    partitions hold. Two simulated fp16 overflows skip the optimizer and scheduler (skipped_steps)."""
    run_dir = os.path.join(out, "deepspeed")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    zero_stage = stand_in("deepspeed.runtime.zero.config", ZeroStageEnum)
    stand_in("deepspeed.runtime.fp16.loss_scaler", DynamicLossScaler)
    stand_in("deepspeed.utils.tensor_fragment", fragment_address)
    seed_everything(42)
    model = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 24), nn.ReLU(), nn.Linear(24, 3))
    opt_cfg = DS_CONFIG["optimizer"]["params"]
    optimizer = torch.optim.AdamW(model.parameters(), lr=opt_cfg["lr"], betas=tuple(opt_cfg["betas"]),
                                  eps=opt_cfg["eps"], weight_decay=opt_cfg["weight_decay"])
    warmup = 10
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup))
    scaler = DynamicLossScaler()
    gen = torch.Generator().manual_seed(4242)
    x = torch.randn(DS_STEPS * DS_WORLD * DS_MICRO_BATCH, 12, generator=gen)
    y = torch.stack([x[:, 0] - x[:, 1], x[:, 2] * x[:, 3], torch.tanh(x[:, 4])], dim=1)
    skipped, records = 0, []
    names = [n for n, _ in model.named_parameters()]
    for step in range(1, DS_STEPS + 1):
        batch = slice((step - 1) * DS_WORLD * DS_MICRO_BATCH, step * DS_WORLD * DS_MICRO_BATCH)
        loss = nn.functional.mse_loss(model(x[batch]), y[batch])  # the mean over both ranks' micro-batches
        optimizer.zero_grad()
        loss.backward()
        overflow = step in DS_OVERFLOW_STEPS
        scaler.update_scale(overflow)
        if overflow:
            skipped += 1
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), DS_CONFIG["gradient_clipping"])
            optimizer.step()
            scheduler.step()
        records.append({"step": step, "loss": loss.item(), "learning_rate": scheduler.get_last_lr()[0],
                        "loss_scale": scaler.cur_scale})
        if step % DS_SAVE_EVERY == 0:
            tag = "global_step%d" % step
            ckpt = os.path.join(run_dir, tag)
            os.makedirs(ckpt)
            module = collections.OrderedDict((k, v.detach().half()) for k, v in model.state_dict().items())
            torch.save({
                "module": module, "buffer_names": [], "optimizer": None,
                "param_shapes": [collections.OrderedDict((n, p.shape) for n, p in model.named_parameters())],
                "frozen_param_shapes": collections.OrderedDict(), "shared_params": {},
                "frozen_param_fragments": collections.OrderedDict(), "lr_scheduler": scheduler.state_dict(),
                "data_sampler": None, "random_ltd": None, "sparse_tensor_module_names": set(),
                "skipped_steps": skipped, "global_steps": step, "global_samples": step * DS_CONFIG["train_batch_size"],
                "dp_world_size": DS_WORLD, "mp_world_size": 1, "ds_config": DS_CONFIG, "ds_version": "0.14.1",
            }, os.path.join(ckpt, "mp_rank_00_model_states.pt"))
            deepspeed_optim_files(ckpt, model, optimizer, scaler, names, zero_stage)
            with open(os.path.join(run_dir, "latest"), "w") as f:
                f.write(tag)  # no newline, as DeepSpeed writes it
    write_jsonl(os.path.join(run_dir, "metrics.jsonl"), records)
    return run_dir


def deepspeed_optim_files(ckpt, model, optimizer, scaler, names, zero_stage):
    """ZeRO-1/2 partitions (stage_1_and_2.py state_dict): one flat fp32 group of every parameter in order,
    padded so it splits evenly over the ranks; rank r owns [r*P, (r+1)*P). The inner optimizer's state covers
    the padded partition; single_partition_of_fp32_groups has the padding removed."""
    params = list(model.parameters())
    flat = torch.cat([p.detach().reshape(-1) for p in params])
    moments = {k: torch.cat([optimizer.state[p][k].reshape(-1) for p in params]) for k in ("exp_avg", "exp_avg_sq")}
    padding = (-flat.numel()) % DS_WORLD
    part = (flat.numel() + padding) // DS_WORLD
    step = optimizer.state[params[0]]["step"]
    group = {k: v for k, v in optimizer.param_groups[0].items() if k != "params"}
    bounds, start = [], 0
    for p in params:
        bounds.append((start, start + p.numel()))
        start += p.numel()
    for rank in range(DS_WORLD):
        lo, hi = rank * part, (rank + 1) * part
        pad = lambda t: torch.cat([t, torch.zeros(padding, dtype=t.dtype)])
        rank_padding = padding if rank == DS_WORLD - 1 else 0
        mapping = collections.OrderedDict()
        for name, (b, e) in zip(names, bounds):
            if b < hi and e > lo:
                mapping[name] = fragment_address(numel=min(e, hi) - max(b, lo), start=max(b, lo) - lo)
        state = {
            "loss_scaler": scaler, "dynamic_loss_scale": True, "overflow": False, "clip_grad": 1.0,
            "base_optimizer_state": {"state": {0: {"step": step.clone(),
                                                   "exp_avg": pad(moments["exp_avg"])[lo:hi].clone(),
                                                   "exp_avg_sq": pad(moments["exp_avg_sq"])[lo:hi].clone()}},
                                     "param_groups": [dict(group, params=[0])]},
            "single_partition_of_fp32_groups": [pad(flat)[lo:hi - rank_padding].clone()],
            "zero_stage": zero_stage(2), "group_paddings": [rank_padding], "partition_count": [DS_WORLD],
            "ds_version": "0.14.1", "param_slice_mappings": [mapping],
        }
        torch.save({"optimizer_state_dict": state, "ds_config": DS_CONFIG, "ds_version": "0.14.1"},
                   os.path.join(ckpt, "zero_pp_rank_%d_mp_rank_00_optim_states.pt" % rank))


# torch.distributed.checkpoint's dataclasses (metadata.py, filesystem.py; formats.md §5.2), newest paths.
DCP_META = "torch.distributed.checkpoint.metadata"


@dataclasses.dataclass
class ChunkStorageMetadata:
    offsets: torch.Size
    sizes: torch.Size


class _MEM_FORMAT_ENCODING(ClassicEnumPickle, enum.Enum):  # noqa: N801
    TORCH_CONTIGUOUS_FORMAT = 0
    TORCH_CHANNELS_LAST = 1
    TORCH_PRESERVE_FORMAT = 2


@dataclasses.dataclass
class TensorProperties:
    dtype: torch.dtype
    layout: torch.layout = torch.strided
    requires_grad: bool = False
    memory_format: torch.memory_format = torch.contiguous_format
    pin_memory: bool = False

    def __getstate__(self):  # the 5-tuple DCP pickles, memory format as its enum
        return (self.dtype, self.layout, self.requires_grad, _MEM_FORMAT_ENCODING.TORCH_CONTIGUOUS_FORMAT,
                self.pin_memory)

    def __setstate__(self, state):
        self.dtype, self.layout, self.requires_grad, _, self.pin_memory = state
        self.memory_format = torch.contiguous_format


@dataclasses.dataclass
class TensorStorageMetadata:
    properties: TensorProperties
    size: torch.Size
    chunks: list


@dataclasses.dataclass
class BytesStorageMetadata:
    pass


@dataclasses.dataclass(frozen=True)
class MetadataIndex:
    fqn: str
    offset: object = None
    index: object = dataclasses.field(hash=False, compare=False, default=None)


@dataclasses.dataclass
class StorageMeta:
    checkpoint_id: object = None
    save_id: str = ""
    load_id: object = None
    modules: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Metadata:
    state_dict_metadata: dict
    planner_data: object = None
    storage_data: object = None
    storage_meta: object = None
    version: object = None


@dataclasses.dataclass
class _StorageInfo:
    relative_path: str
    offset: int
    length: int
    transform_descriptors: object = None

    def __getstate__(self):  # None fields are dropped (filesystem.py)
        return {k: v for k, v in self.__dict__.items() if v is not None}


def dcp_stand_ins():
    for cls in (ChunkStorageMetadata, _MEM_FORMAT_ENCODING, TensorProperties, TensorStorageMetadata,
                BytesStorageMetadata, MetadataIndex, StorageMeta, Metadata):
        stand_in(DCP_META, cls)
    stand_in("torch.distributed.checkpoint.filesystem", _StorageInfo)


def dcp_flatten(obj, path=()):
    """torch >= 2.4 traverse_state_dict: every mapping is descended; a list only when it holds tensors or
    non-terminal containers; anything else is a leaf. Yields (path, value)."""
    def terminal(v):
        if isinstance(v, dict):
            return False
        if isinstance(v, list):
            return all(not isinstance(e, torch.Tensor) and (not isinstance(e, (dict, list)) or terminal(e)) for e in v)
        return True
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from dcp_flatten(v, path + (str(k),))
    elif isinstance(obj, list) and not terminal(obj):
        for i, v in enumerate(obj):
            yield from dcp_flatten(v, path + (i,))
    else:
        yield path, obj


def torch_save_bytes(obj):
    buf = io.BytesIO()  # a stream: archive prefix "archive/", as DCP's writer gives
    torch.save(obj, buf)
    return buf.getvalue()


def dcp_save(ckpt_dir, state, world, shard, step, per_rank_metadata=False):
    """FileSystemWriter(single_file_per_rank=True) for `world` ranks (formats.md §5.1-5.3): tensors that
    shard(fqn, t) splits on dim 0 get one chunk per rank; replicated tensors and byte items are written
    once, by rank 0 (the coordinator's dedup), unless per_rank_metadata, where every rank saves alone
    (no collectives, so no dedup) and writes its own __<rank>.metadata."""
    os.makedirs(ckpt_dir)
    items = {r: [] for r in range(world)}  # rank -> [(fqn, chunk offsets or None, bytes)]
    sd_meta, planner = {}, {}
    for path, value in dcp_flatten(state):
        fqn = ".".join(map(str, path))
        planner[fqn] = path
        if isinstance(value, torch.Tensor):
            chunks = []
            if shard(fqn, value):
                rows = value.shape[0] // world
                for r in range(world):
                    off = (r * rows,) + (0,) * (value.dim() - 1)
                    chunks.append((r, off, value[r * rows:(r + 1) * rows]))
            else:
                for r in (range(world) if per_rank_metadata else [0]):
                    chunks.append((r, (0,) * value.dim(), value))
            sd_meta[fqn] = (value, chunks)
            for r, off, t in chunks:
                items[r].append((fqn, off, torch_save_bytes(t.detach().clone())))
        else:
            sd_meta[fqn] = (value, None)
            for r in (range(world) if per_rank_metadata else [0]):
                items[r].append((fqn, None, torch_save_bytes(value)))
    storage = {r: {} for r in range(world)}
    for r in range(world):
        name, offset = "__%d_0.distcp" % r, 0
        with open(os.path.join(ckpt_dir, name), "wb") as f:
            byte_items = [i for i in items[r] if i[1] is None] + [i for i in items[r] if i[1] is not None]
            for fqn, off, data in byte_items:  # BYTE_IO items first, then tensors (§5.3)
                f.write(data)
                storage[r][(fqn, off)] = _StorageInfo(name, offset, len(data))
                offset += len(data)

    def metadata(ranks):
        sdm, sdata = {}, {}
        for fqn, (value, chunks) in sd_meta.items():
            if chunks is None:
                sdm[fqn] = BytesStorageMetadata()
                for r in ranks:
                    if (fqn, None) in storage[r]:
                        sdata[MetadataIndex(fqn)] = storage[r][(fqn, None)]
                continue
            mine = [c for c in chunks if c[0] in ranks]
            sdm[fqn] = TensorStorageMetadata(TensorProperties(value.dtype), value.shape,
                                             [ChunkStorageMetadata(torch.Size(off), t.shape) for _, off, t in mine])
            for i, (r, off, _) in enumerate(mine):
                sdata[MetadataIndex(fqn, torch.Size(off), i)] = storage[r][(fqn, off)]
        meta = Metadata(sdm, planner_data=dict(planner), storage_data=sdata,
                        storage_meta=StorageMeta(checkpoint_id=os.path.relpath(ckpt_dir, os.path.dirname(os.path.dirname(ckpt_dir))),
                                                 save_id="%032x" % (step * 7919 + len(ranks)), modules=[]),
                        version="1.0.0")
        return pickle.dumps(meta, protocol=4)

    targets = [(".metadata", list(range(world)))] if not per_rank_metadata else \
        [("__%d.metadata" % r, [r]) for r in range(world)]
    for name, ranks in targets:  # written last, via a tmp file and a rename: the commit marker
        with open(os.path.join(ckpt_dir, name + ".tmp"), "wb") as f:
            f.write(metadata(ranks))
        os.rename(os.path.join(ckpt_dir, name + ".tmp"), os.path.join(ckpt_dir, name))


DCP_WORLD = 2
DCP_STEPS = 30
DCP_SAVE_EVERY = 15


def dcp_run(out):
    """An FSDP2-style job on 2 ranks saved with torch.distributed.checkpoint (torch >= 2.4 layout): the model
    and the FQN-keyed AdamW state (get_optimizer_state_dict) sharded row-wise, Adam's 0-d `step` replicated,
    param_groups, the scheduler and the train step as byte items. dcp/step-15, step-30 use the coordinator's
    .metadata; dcp-no-collectives/step-30 is the same save made without a process group: one __<rank>.metadata
    per rank, each listing only that rank's items."""
    dcp_stand_ins()
    seed_everything(7)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 4))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=DCP_STEPS, eta_min=1e-4)
    gen = torch.Generator().manual_seed(77)
    x = torch.randn(512, 8, generator=gen)
    y = torch.cat([x[:, :2].sum(1, keepdim=True), x[:, 2:4], torch.sin(x[:, 4:5])], dim=1)
    names = [n for n, _ in model.named_parameters()]
    records = []
    for d in ("dcp", "dcp-no-collectives"):
        shutil.rmtree(os.path.join(out, d), ignore_errors=True)
    for step in range(1, DCP_STEPS + 1):
        idx = torch.randint(0, 512, (32,), generator=gen)
        loss = nn.functional.mse_loss(model(x[idx]), y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        records.append({"step": step, "loss": loss.item(), "learning_rate": scheduler.get_last_lr()[0]})
        scheduler.step()
        if step % DCP_SAVE_EVERY == 0:
            osd = optimizer.state_dict()  # FQN-keyed, as get_optimizer_state_dict gives (formats.md §4.4)
            optim = {"state": {names[i]: dict(s) for i, s in osd["state"].items()},
                     "param_groups": [dict(g, params=[names[i] for i in g["params"]]) for g in osd["param_groups"]]}
            state = {"model": model.state_dict(), "optimizer": optim, "lr_scheduler": scheduler.state_dict(),
                     "step": step}
            shard = lambda fqn, t: t.dim() >= 1 and t.shape[0] % DCP_WORLD == 0
            dcp_save(os.path.join(out, "dcp", "step-%d" % step), state, DCP_WORLD, shard, step)
            if step == DCP_STEPS:
                dcp_save(os.path.join(out, "dcp-no-collectives", "step-%d" % step), state, DCP_WORLD, shard, step,
                         per_rank_metadata=True)
    write_jsonl(os.path.join(out, "dcp", "metrics.jsonl"), records)
    return os.path.join(out, "dcp")


class SeedableRandomSampler(torch.utils.data.RandomSampler):
    """accelerate.data_loader.SeedableRandomSampler: a RandomSampler whose permutation comes from
    initial_seed + epoch; torch.save writes the object itself into sampler.bin."""

    def __init__(self, data_source, data_seed):
        super().__init__(data_source)
        self.epoch = 0
        self.initial_seed = data_seed


def write_safetensors(path, tensors):
    """safetensors' format (formats.md §6) for float32 tensors, as accelerate's save_model writes it:
    names sorted (one dtype), header padded with spaces to 8 bytes, metadata {"format": "pt"}."""
    header, data, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        raw = tensors[name].detach().contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(raw)]}
        data.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((-len(text)) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(data))


ACC_WORLD = 2
ACC_STEPS = 24
ACC_SAVE_EVERY = 12
ACC_BATCH = 8               # per process


def cuda_rng_816(seed, offset):
    """torch <= 2.0's torch.cuda.get_rng_state(): 800 bytes of 0xFF, then u64 seed and i64 philox offset
    (formats.md §4.3). There is no GPU here; the per-process values follow CUDA's rule that the offset
    advances by a multiple of 4 with every random kernel."""
    raw = b"\xff" * 800 + seed.to_bytes(8, "little") + offset.to_bytes(8, "little", signed=True)
    return torch.frombuffer(bytearray(raw), dtype=torch.uint8).clone()


def accelerate_run(out):
    """Accelerator(project_config=ProjectConfiguration(automatic_checkpoint_naming=True), mixed_precision="fp16",
    use_stateful_dataloader=True) on 2 processes; save_state() every 12 steps (formats.md §9.2):
    checkpoints/checkpoint_0, checkpoint_1 with model.safetensors, optimizer.bin, scheduler.bin, scaler.pt,
    sampler.bin (the SeedableRandomSampler object), dl_state_dict.bin (StatefulDataLoader.state_dict()) and
    random_states_{0,1}.pkl (step, Python, NumPy, torch CPU and CUDA generators of each process)."""
    run_dir = os.path.join(out, "accelerate")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(os.path.join(run_dir, "checkpoints"))
    stand_in("accelerate.data_loader", SeedableRandomSampler)
    data_seed = 2024
    rank_rng = []
    for r in range(ACC_WORLD):  # accelerate.utils.set_seed(seed + process_index)
        seed_everything(500 + r)
        if r == 0:
            model = nn.Sequential(nn.Linear(6, 20), nn.Tanh(), nn.Dropout(0.1), nn.Linear(20, 1))
        rank_rng.append(ckpt_writer.capture_rng())
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=4e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=10, T_mult=2)
    scaler = SimulatedGradScaler(growth_interval=8)
    gen = torch.Generator().manual_seed(data_seed)
    x = torch.randn(ACC_WORLD * ACC_BATCH * 16, 6, generator=gen)
    y = x[:, :1] * x[:, 1:2] - x[:, 2:3]
    sampler = SeedableRandomSampler(range(x.shape[0] // ACC_WORLD), data_seed)
    batches_per_epoch = x.shape[0] // (ACC_WORLD * ACC_BATCH)
    records, epoch_order = [], None
    for step in range(1, ACC_STEPS + 1):
        epoch, pos = divmod(step - 1, batches_per_epoch)
        if pos == 0:
            sampler.epoch = epoch
            epoch_order = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(data_seed + epoch))
        optimizer.zero_grad()
        losses = []
        for r in range(ACC_WORLD):
            ckpt_writer.restore_rng(rank_rng[r])
            idx = epoch_order[r::ACC_WORLD][pos * ACC_BATCH:(pos + 1) * ACC_BATCH]
            loss = nn.functional.mse_loss(model(x[idx]), y[idx])
            (loss / ACC_WORLD).backward()
            losses.append(loss.item())
            rank_rng[r] = ckpt_writer.capture_rng()
        optimizer.step()
        scaler.update(False)
        scheduler.step()
        records.append({"step": step, "loss": sum(losses) / ACC_WORLD, "learning_rate": scheduler.get_last_lr()[0]})
        if step % ACC_SAVE_EVERY == 0:
            ckpt = os.path.join(run_dir, "checkpoints", "checkpoint_%d" % (step // ACC_SAVE_EVERY - 1))
            os.makedirs(ckpt)
            write_safetensors(os.path.join(ckpt, "model.safetensors"), model.state_dict())
            torch.save(optimizer.state_dict(), os.path.join(ckpt, "optimizer.bin"))
            torch.save(scheduler.state_dict(), os.path.join(ckpt, "scheduler.bin"))
            torch.save(sampler, os.path.join(ckpt, "sampler.bin"))
            done = pos + 1
            torch.save({"_index_sampler_state": None, "_sampler_iter_state": None,
                        "_sampler_iter_yielded": done * ACC_BATCH, "_num_yielded": done,
                        "_IterableDataset_len_called": None, "_shared_seed": None, "fetcher_state": None,
                        "dataset_state": None, "_iterator_finished": False},
                       os.path.join(ckpt, "dl_state_dict.bin"))
            torch.save(scaler.state_dict(), os.path.join(ckpt, "scaler.pt"))
            # "step" is Accelerator.step: the loop's `with accelerator.accumulate(model)` entries since the
            # last end_of_dataloader, which resets it to 0 on an epoch's last batch (accelerate@16cb6eb8
            # src/accelerate/accelerator.py _do_sync); not the global step.
            accelerator_step = (pos + 1) % batches_per_epoch
            for r in range(ACC_WORLD):
                rng = rank_rng[r]
                torch.save({"step": accelerator_step, "random_state": rng["python"], "numpy_random_seed": rng["numpy"],
                            "torch_manual_seed": rng["torch"],
                            "torch_cuda_manual_seed": [cuda_rng_816(500 + r, 4 * step * 3)]},
                           os.path.join(ckpt, "random_states_%d.pkl" % r))
    write_jsonl(os.path.join(run_dir, "metrics.jsonl"), records)
    return run_dir


def check_framework_runs(out, which):
    """PyTorch reads back what the writers above produced: DeepSpeed's partitions reassemble the master
    weights, every DCP tensor's chunks (torch.load of each .distcp slice) reassemble the saved tensor, and
    accelerate's files load; the safetensors header matches the tensors."""
    if "deepspeed" in which:
        ckpt = os.path.join(out, "deepspeed", "global_step%d" % DS_STEPS)
        model_states = torch.load(os.path.join(ckpt, "mp_rank_00_model_states.pt"))
        parts = [torch.load(os.path.join(ckpt, "zero_pp_rank_%d_mp_rank_00_optim_states.pt" % r))["optimizer_state_dict"]
                 for r in range(DS_WORLD)]
        flat = torch.cat([p["single_partition_of_fp32_groups"][0] for p in parts])
        start = 0
        for name, shape in model_states["param_shapes"][0].items():
            n = shape.numel()
            half = flat[start:start + n].reshape(shape).half()
            assert torch.equal(half, model_states["module"][name]), name
            start += n
        assert start == flat.numel() and model_states["skipped_steps"] == len(DS_OVERFLOW_STEPS)
        assert model_states["lr_scheduler"]["last_epoch"] == DS_STEPS - len(DS_OVERFLOW_STEPS)
    if "dcp" in which:
        for ckpt, meta_names in ((os.path.join(out, "dcp", "step-%d" % DCP_STEPS), [".metadata"]),
                                 (os.path.join(out, "dcp-no-collectives", "step-%d" % DCP_STEPS),
                                  ["__%d.metadata" % r for r in range(DCP_WORLD)])):
            assembled = {}
            for meta_name in meta_names:
                with open(os.path.join(ckpt, meta_name), "rb") as f:
                    meta = pickle.load(f)
                for index, info in meta.storage_data.items():
                    with open(os.path.join(ckpt, info.relative_path), "rb") as f:
                        f.seek(info.offset)
                        value = torch.load(io.BytesIO(f.read(info.length)))
                    entry = meta.state_dict_metadata[index.fqn]
                    if isinstance(entry, BytesStorageMetadata):
                        assembled[index.fqn] = value
                        continue
                    whole = assembled.setdefault(index.fqn, torch.full(tuple(entry.size), float("nan")))
                    box = tuple(slice(o, o + n) for o, n in zip(index.offset, value.shape))
                    whole[box] = value
            assert not any(torch.isnan(t).any() for t in assembled.values() if isinstance(t, torch.Tensor))
            assert assembled["step"] == DCP_STEPS and assembled["model.0.weight"].shape == (16, 8)
            assert assembled["optimizer.param_groups.0.params"][0] == "0.weight"
    if "accelerate" in which:
        ckpt = os.path.join(out, "accelerate", "checkpoints", "checkpoint_1")
        for r in range(ACC_WORLD):
            rs = torch.load(os.path.join(ckpt, "random_states_%d.pkl" % r))
            assert rs["step"] == 8 and rs["torch_cuda_manual_seed"][0].numel() == 816
        assert torch.load(os.path.join(ckpt, "sampler.bin")).initial_seed == 2024
        assert torch.load(os.path.join(ckpt, "dl_state_dict.bin"))["_num_yielded"] > 0
        with open(os.path.join(ckpt, "model.safetensors"), "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(n))
            data = f.read()
        opt = torch.load(os.path.join(ckpt, "optimizer.bin"))
        assert len(opt["state"]) == len([k for k in header if k != "__metadata__"])
        assert header["__metadata__"] == {"format": "pt"} and n % 8 == 0
        assert max(v["data_offsets"][1] for k, v in header.items() if k != "__metadata__") == len(data)


# ---- command line -------------------------------------------------------------------------------------

CLASSIC_RUNS = ("tiny-mlp", "hf-trainer", "lightning", "ddp4-mlp", "broken")  # made together (broken/ needs ddp4-mlp)
FRAMEWORK_RUNS = {"deepspeed": deepspeed_run, "dcp": dcp_run, "accelerate": accelerate_run}


def main():
    args = sys.argv[1:]
    only = None
    if "--only" in args:
        i = args.index("--only")
        if i + 1 >= len(args):
            sys.exit("--only needs a comma-separated list: " + ",".join(CLASSIC_RUNS + tuple(FRAMEWORK_RUNS)))
        only = set(args[i + 1].split(","))
        del args[i:i + 2]
        unknown = only - set(CLASSIC_RUNS) - set(FRAMEWORK_RUNS)
        if unknown:
            sys.exit("unknown run(s) %s; known: %s" % (", ".join(sorted(unknown)), ", ".join(CLASSIC_RUNS + tuple(FRAMEWORK_RUNS))))
    out = os.path.abspath(args[0] if args else os.path.dirname(os.path.abspath(__file__)))
    if only is None or only & set(CLASSIC_RUNS):
        classic_runs(out)
    which = [name for name in FRAMEWORK_RUNS if only is None or name in only]
    for name in which:
        print("wrote", FRAMEWORK_RUNS[name](out))
    check_framework_runs(out, which)


def classic_runs(out):
    hf_trainer_run(out)
    lightning_run(out)
    run_dir = os.path.join(out, "tiny-mlp")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    torch.set_num_threads(1)
    data_seed = 1234
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=STEPS)
    x, y = make_data(data_seed)
    batches_per_epoch = x.shape[0] // BATCH
    metrics = open(os.path.join(run_dir, "metrics.jsonl"), "w")
    loss_module = ckpt_writer.SupervisedLoss(model, nn.MSELoss())
    saved = None  # (checkpoint dir, step, epoch, batch_pos) of the last save: its next update gets a probe
    for step in range(1, STEPS + 1):
        epoch, pos = divmod(step - 1, batches_per_epoch)
        xb, yb = x[pos * BATCH:(pos + 1) * BATCH], y[pos * BATCH:(pos + 1) * BATCH]
        probe = ckpt_writer._NoProbe()
        if saved is not None:  # the update after a save, recorded for ckpt-validate
            probe = ckpt_writer.UpdateProbe(saved[0], step=saved[1], module=loss_module, model=model,
                                            optimizer=optimizer, scheduler=scheduler,
                                            cursor={"epoch": saved[2], "batch_pos": saved[3]},
                                            rank_cursors={0: {"sampler.epoch": saved[2], "sampler.position": saved[3]}})
            saved = None
        with probe:
            loss = nn.functional.mse_loss(model(xb), yb)
            probe.batch(xb, yb, loss=loss)
            optimizer.zero_grad()
            loss.backward()
            probe.update()
            optimizer.step()
            metrics.write(json.dumps({"step": step, "loss": loss.item(), "learning_rate": scheduler.get_last_lr()[0]}) + "\n")
            scheduler.step()
        if step % SAVE_EVERY == 0:
            save_checkpoint(run_dir, step, epoch, pos + 1, model, optimizer, scheduler, data_seed)
            saved = (os.path.join(run_dir, "checkpoint-%07d" % step), step, epoch, pos + 1)
    metrics.close()
    print("wrote", run_dir)

    ddp_dir, ddp_records = ddp4_run(out)
    print("wrote", ddp_dir)
    scratch = tempfile.mkdtemp(prefix="make-sample-runs-")
    try:
        check_correct_resume(ddp_dir, ddp_records, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    broken_runs(out, ddp_dir, ddp_records)
    print("wrote", os.path.join(out, "broken"))


if __name__ == "__main__":
    main()
