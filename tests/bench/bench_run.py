#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Benchmark: opening a run of 100 checkpoints with `ckpt run DIR --json` reads names, pointers,
logs and pickles, never tensor data.

    /usr/bin/python3 tests/bench/bench_run.py --ckpt build/bin/ckpt [--checkpoints 100] [--mb 3]
        [--repeat 3] [--workdir DIR] [--check]

Generates two runs of real torch.save files in a temporary directory (a child interpreter with
torch writes them), each `--checkpoints` checkpoints of about `--mb` MB:

* guide/: the recovery guide's layout: checkpoint-NNNNNNN/ with model.pt, optimizer.pt (AdamW state,
  scheduler, counters), rng-rank-0.pt, manifest.json, COMPLETE; `latest`; metrics.jsonl.
  Steps come from the folder names, so a reader needs no pickle at all.
* lightning/: Lightning .ckpt files named `epoch=E-val_loss=L.ckpt`, as ModelCheckpoint writes them
  with a metric in the file name: no step in the name, so the reader must open every file's pickle
  for its global_step (and the newest one's callbacks for the best checkpoint).

For each run it evicts every file from the page cache (posix_fadvise DONTNEED), runs
`ckpt run DIR --json` once cold and measures:
  * bytes read from storage by the ckpt process (getrusage ru_inblock of the child, via wait4);
  * bytes of the run's files resident in the page cache afterwards (mincore), and how many of those
    lie inside tensor records (`data/N` entries of the zip archives): readahead may pull in a few
    pages next to a pickle, a reader that loads tensors would pull in all of them;
then the median wall time of `--repeat` warm runs. Baseline, in the same run: the same cold
measurement for `cat` over every file (what reading everything costs, and a check that the
measurement sees reads at all).

Pages holding only tensor data can still become resident without ckpt touching them: the kernel
reads ahead around each zip local header ckpt reads (a page cluster, up to 128 KiB). A reader that
loaded tensors would make all of them resident.

Exit status: 0 (a benchmark) unless something could not run (2); with --check, 1 when a run reads
more than 5% of its bytes or has more than 5% of its tensor pages resident.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

GENERATOR = r'''
import io, json, os, random, sys, hashlib
import numpy as np, torch, torch.nn as nn
root, n, mb = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
torch.manual_seed(0)
width = max(64, int((mb * 1e6 / 4 / 3) ** 0.5))      # model + two Adam moments ~ mb MB
model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 8))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=n * 10)
x = torch.randn(32, width)
def train():
    loss = model(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step(); sched.step(); return loss.item()
guide = os.path.join(root, "guide"); light = os.path.join(root, "lightning", "checkpoints")
os.makedirs(guide); os.makedirs(light)
metrics = open(os.path.join(guide, "metrics.jsonl"), "w")
for i in range(1, n + 1):
    loss = train(); step = i * 10
    metrics.write(json.dumps({"step": step, "loss": loss}) + "\n")
    d = os.path.join(guide, "checkpoint-%07d" % step); os.makedirs(d)
    torch.save(model.state_dict(), os.path.join(d, "model.pt"))
    torch.save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "global_step": step, "epoch": i,
                "batch_pos": 0}, os.path.join(d, "optimizer.pt"))
    torch.save({"rank": 0, "rng": {"python": random.getstate(), "numpy": np.random.get_state(),
                                   "torch": torch.get_rng_state()}}, os.path.join(d, "rng-rank-0.pt"))
    files = {f: {"bytes": os.path.getsize(os.path.join(d, f)),
                 "sha256": hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest()} for f in sorted(os.listdir(d))}
    json.dump({"global_step": step, "world_size": 1, "files": files}, open(os.path.join(d, "manifest.json"), "w"))
    open(os.path.join(d, "COMPLETE"), "w").close()
    name = "epoch=%d-val_loss=%.4f.ckpt" % (i, loss)
    ckpt = {"epoch": i, "global_step": step, "pytorch-lightning_version": "2.1.0",
            "state_dict": {"model." + k: v for k, v in model.state_dict().items()},
            "optimizer_states": [opt.state_dict()], "lr_schedulers": [sched.state_dict()],
            "callbacks": {"ModelCheckpoint{'monitor': 'val_loss', 'mode': 'min'}": {
                "monitor": "val_loss", "best_model_path": os.path.join(light, name), "best_model_score": torch.tensor(loss)}},
            "loops": {"fit_loop": {"epoch_progress": {"total": {"completed": i}}}}}
    buf = io.BytesIO(); torch.save(ckpt, buf)
    open(os.path.join(light, name), "wb").write(buf.getvalue())
metrics.close()
open(os.path.join(guide, "latest"), "w").write("checkpoint-%07d\n" % (n * 10))
'''

libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
PAGE = os.sysconf("SC_PAGE_SIZE")


def files_of(run: Path) -> list[Path]:
    return sorted(p for p in run.rglob("*") if p.is_file())


def evict(paths: list[Path]) -> None:
    os.sync()
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def resident_pages(path: Path) -> list[bool]:
    size = path.stat().st_size
    if size == 0:
        return []
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED: maps, touches nothing
    finally:
        os.close(fd)
    if addr in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap failed for %s" % path)
    pages = (size + PAGE - 1) // PAGE
    vec = (ctypes.c_ubyte * pages)()
    try:
        if libc.mincore(addr, size, vec) != 0:
            raise OSError(ctypes.get_errno(), "mincore failed for %s" % path)
    finally:
        libc.munmap(addr, size)
    return [bool(v & 1) for v in vec]


def tensor_ranges(path: Path) -> list[tuple[int, int]]:
    """Byte ranges of the `<prefix>/data/<key>` records (tensor storages) of a torch.save zip."""
    if not zipfile.is_zipfile(path):
        return []
    out = []
    with zipfile.ZipFile(path) as z, open(path, "rb") as f:
        for info in z.infolist():
            parts = info.filename.split("/")
            if len(parts) == 3 and parts[1] == "data":
                f.seek(info.header_offset + 26)
                name_len, extra_len = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
                start = info.header_offset + 30 + name_len + extra_len
                out.append((start, start + info.file_size))
    return out


def residency(paths: list[Path], ranges: dict[Path, list[tuple[int, int]]]) -> tuple[int, int]:
    """(resident bytes of all files, resident bytes of the pages that hold nothing but tensor data)."""
    total = tensor = 0
    for p in paths:
        pages = resident_pages(p)
        total += sum(pages) * PAGE
        inside = set()
        for b, e in ranges[p]:  # pages wholly inside a record: a zip header or a pickle shares none of them
            inside.update(range((b + PAGE - 1) // PAGE, e // PAGE))
        tensor += sum(1 for i in inside if i < len(pages) and pages[i]) * PAGE
    return total, tensor


def run_cold(argv: list[str], paths: list[Path]) -> tuple[float, int, int]:
    """Wall seconds, bytes read from storage (ru_inblock), exit status; page cache evicted first."""
    evict(paths)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    return elapsed, usage.ru_inblock * 512, os.waitstatus_to_exitcode(status)


def fmt(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%.0f %s" if unit == "B" else "%.1f %s") % (n, unit)
        n /= 1024
    return str(n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ckpt", default="build/bin/ckpt")
    ap.add_argument("--checkpoints", type=int, default=100)
    ap.add_argument("--mb", type=float, default=3.0, help="approximate size of one checkpoint in MB")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", default=None, help="parent of the temporary run directory (default: $TMPDIR)")
    ap.add_argument("--python", default="/usr/bin/python3", help="an interpreter with torch, for generating")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    ckpt = shutil.which(args.ckpt) or args.ckpt
    if not os.access(ckpt, os.X_OK):
        print("ckpt not found: %s (build it: cmake --build build --target ckpt)" % args.ckpt, file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="bench-run-", dir=args.workdir))
    failed = False
    try:
        t0 = time.perf_counter()
        gen = subprocess.run([args.python, "-c", GENERATOR, str(tmp), str(args.checkpoints), str(args.mb)],
                             capture_output=True, text=True)
        if gen.returncode != 0:
            print("generating the runs failed:\n" + gen.stderr, file=sys.stderr)
            return 2
        print("generated %d checkpoints x 2 layouts in %.1f s under %s" % (args.checkpoints, time.perf_counter() - t0, tmp))
        results = {}
        for layout in ("guide", "lightning"):
            run = tmp / layout
            paths = files_of(run)
            ranges = {p: tensor_ranges(p) for p in paths}
            total = sum(p.stat().st_size for p in paths)
            tensor_total = sum(e - b for r in ranges.values() for b, e in r)
            argv = [ckpt, "run", str(run), "--json"]
            cold_s, read_bytes, code = run_cold(argv, paths)
            if code != 0:
                print("%s failed with exit status %d" % (" ".join(argv), code), file=sys.stderr)
                return 2
            resident, resident_tensor = residency(paths, ranges)
            out = subprocess.run(argv, capture_output=True, text=True, check=True)
            found = json.loads(out.stdout)["checkpoints"]
            if len(found) != args.checkpoints or any(c["step"] is None for c in found):
                print("%s: ckpt run found %d checkpoints (expected %d) or a step is missing" % (layout, len(found), args.checkpoints),
                      file=sys.stderr)
                return 2
            warm = []
            for _ in range(args.repeat):
                s = time.perf_counter()
                subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
                warm.append(time.perf_counter() - s)
            cat_s, cat_read, _ = run_cold(["cat"] + [str(p) for p in paths], paths)
            results[layout] = r = {
                "files": len(paths), "bytes": total, "tensor_bytes": tensor_total, "ckpt_cold_s": cold_s,
                "ckpt_warm_median_s": statistics.median(warm), "ckpt_read_bytes": read_bytes,
                "resident_after_bytes": resident, "resident_in_tensor_records_bytes": resident_tensor,
                "cat_cold_s": cat_s, "cat_read_bytes": cat_read}
            print("\n%s/: %d checkpoints, %d files, %s (%s in tensor records)" % (layout, args.checkpoints, len(paths), fmt(total), fmt(tensor_total)))
            print("  ckpt run --json   cold %.3f s, warm median %.3f s (%d runs)" % (cold_s, r["ckpt_warm_median_s"], args.repeat))
            print("  read from storage %s = %.3f%% of the run  (cat, same run: %s in %.2f s)" %
                  (fmt(read_bytes), 100.0 * read_bytes / total, fmt(cat_read), cat_s))
            print("  page cache after  %s of the run's files; pages holding only tensor data: %s = %.3f%% of tensor bytes" %
                  (fmt(resident), fmt(resident_tensor), 100.0 * resident_tensor / max(1, tensor_total)))
            print("  ratio             cat reads %.0fx more than ckpt run" % (cat_read / max(read_bytes, 1)))
            if read_bytes > 0.05 * total or resident_tensor > 0.05 * tensor_total:
                failed = True
        if cat_read == 0:
            print("\nnote: the storage reported no reads even for cat (page cache eviction not effective here); "
                  "the page-cache figures still hold", file=sys.stderr)
        print("\n" + json.dumps(results))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if (failed and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
