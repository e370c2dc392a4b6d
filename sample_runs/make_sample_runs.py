#!/usr/bin/python3
"""Writes the bundled sample run: a small MLP really trained with Debian's PyTorch.

Usage: /usr/bin/python3 sample_runs/make_sample_runs.py [OUTDIR]   (default: sample_runs/)

tiny-mlp/ follows the recovery guide's directory layout (§6.2): one folder per save,
checkpoint-NNNNNNN/ with model.pt, optimizer.pt (optimizer, scheduler, scaler and counters),
rng-rank-0.pt, manifest.json (sizes and SHA-256 of every file) and COMPLETE written last,
plus a `latest` pointer at the run root and metrics.jsonl beside the checkpoints.
hf-trainer/ has the Hugging Face Trainer's checkpoint-N/ folders (pytorch_model.bin,
optimizer.pt, scheduler.pt, rng_state.pth, trainer_state.json with log_history and
best_model_checkpoint). lightning/ has PyTorch Lightning .ckpt files (state_dict,
optimizer_states, lr_schedulers, loops, callbacks with ModelCheckpoint's best path).
Deterministic: the same torch build writes the same tensors.
"""
import collections
import hashlib
import io
import json
import os
import random
import shutil
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

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


def main():
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
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
    for step in range(1, STEPS + 1):
        epoch, pos = divmod(step - 1, batches_per_epoch)
        xb, yb = x[pos * BATCH:(pos + 1) * BATCH], y[pos * BATCH:(pos + 1) * BATCH]
        loss = nn.functional.mse_loss(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        metrics.write(json.dumps({"step": step, "loss": loss.item(), "learning_rate": scheduler.get_last_lr()[0]}) + "\n")
        scheduler.step()
        if step % SAVE_EVERY == 0:
            save_checkpoint(run_dir, step, epoch, pos + 1, model, optimizer, scheduler, data_seed)
    metrics.close()
    print("wrote", run_dir)


if __name__ == "__main__":
    main()
