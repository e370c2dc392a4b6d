#!/usr/bin/python3
"""Writes the bundled sample run: a small MLP really trained with Debian's PyTorch.

Usage: /usr/bin/python3 sample_runs/make_sample_runs.py [OUTDIR]   (default: sample_runs/)

tiny-mlp/ follows the recovery guide's directory layout (§6.2): one folder per save,
checkpoint-NNNNNNN/ with model.pt, optimizer.pt (optimizer, scheduler, scaler and counters),
rng-rank-0.pt, manifest.json (sizes and SHA-256 of every file) and COMPLETE written last,
plus a `latest` pointer at the run root and metrics.jsonl beside the checkpoints.
Deterministic: the same torch build writes the same tensors.
"""
import hashlib
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


def main():
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
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
    gen = torch.Generator().manual_seed(data_seed)
    x = torch.randn(BATCH * 25, 8, generator=gen)
    y = (x[:, :1] * 0.5 - x[:, 1:2] + 0.1 * torch.randn(BATCH * 25, 1, generator=gen))
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
