#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Benchmark: how `ckpt tensors FILE --json` scales with the number of tensors.

    /usr/bin/python3 tests/bench/bench_many_tensors.py --ckpt build/bin/ckpt \
        [--tensors 20000] [--repeat 3] [--workdir DIR] [--check]

Writes two torch.save files of N and 4N tiny tensors (2 floats each: the cost is all in the
pickle and the zip directory, one record per storage) and times `ckpt tensors --json` and
torch.load on both in the same run. Work that grows faster than the tensor count (a lookup
per storage that scans every zip entry, say) shows as a time ratio well above 4.

Targets: ckpt's time ratio 4N / N <= 5 (near-linear); ckpt within 1.5x of torch.load on the
4N file. Files like these are all pickle: ckpt runs the same opcodes torch.load does and keeps
every object for the tree view, so it cannot be the 50x faster it is on data-heavy files
(bench_load.py); the point here is the scaling.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

SCALING_TARGET = 5.0
TORCH_LOAD_TARGET = 1.5  # ckpt time / torch.load time on the 4N file, at most
STUB_TARGET = 0.2        # issue 16: ckpt time / stub-unpickler time on the 4N file, at most


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ckpt", required=True, help="path to the ckpt binary (e.g. build/bin/ckpt)")
    ap.add_argument("--tensors", type=int, default=20000, help="N: the small file's tensor count")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per command (median)")
    ap.add_argument("--workdir", type=Path, default=None, help="where the files are written (default: a temp dir)")
    ap.add_argument("--python", default=bl.DEFAULT_PYTHON, help="interpreter with torch")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    return ap.parse_args(argv)


def write_file(python: str, path: Path, n: int) -> None:
    code = ("import sys, torch\n"
            "n = int(sys.argv[2])\n"
            "torch.save({f'layers.{i}.weight': torch.full((2,), float(i)) for i in range(n)}, sys.argv[1])\n")
    subprocess.run([python, "-c", code, str(path), str(n)], check=True)


def run(args: argparse.Namespace) -> int:
    out = print
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)  # tempfile does not make it
    with tempfile.TemporaryDirectory(prefix="ckpt-many-", dir=args.workdir) as tmp:
        sizes = [args.tensors, 4 * args.tensors]
        files = [Path(tmp) / f"many-{n}.pt" for n in sizes]
        for path, n in zip(files, sizes):
            write_file(args.python, path, n)
        ckpt, torch_load, stub, rss = [], [], [], []
        for path in files:
            first = bl.run_once([args.ckpt, "tensors", path, "--json"]).check("ckpt tensors")
            rss.append(first.maxrss_mib)
            ckpt.append(bl.time_command([args.ckpt, "tensors", path, "--json"], repeat=args.repeat))
            torch_load.append(bl.torch_load_stats(path, repeat=args.repeat, python=args.python).load)
            stub.append(bl.stub_unpickle_stats(path, repeat=args.repeat, python=args.python))
    scaling = ckpt[1].median / ckpt[0].median
    torch_scaling = torch_load[1].median / torch_load[0].median
    checks = {
        f"ckpt time 4N/N <= {SCALING_TARGET:g}": scaling <= SCALING_TARGET,
        f"ckpt within {TORCH_LOAD_TARGET:g}x of torch.load on 4N": ckpt[1].median <= TORCH_LOAD_TARGET * torch_load[1].median,
        f"ckpt <= {STUB_TARGET:g}x the stub C unpickler on 4N": ckpt[1].median <= STUB_TARGET * stub[1].median,
    }
    out("")
    out("Checkpoint Inspector benchmark: many tensors")
    for n, c, t, u, r in zip(sizes, ckpt, torch_load, stub, rss):
        rss_text = f"; peak RSS {r:.1f} MiB" if r is not None else ""
        out(f"  {n:>7} tensors  ckpt tensors --json {c.summary()}{rss_text}")
        out(f"                 torch.load          {t.summary()}")
        out(f"                 stub C unpickler    {u.summary()} (data.pkl only, in-process: the same work as a listing)")
    out(f"  ratios         ckpt 4N/N = {scaling:.2f}x; torch.load 4N/N = {torch_scaling:.2f}x; "
        f"torch.load/ckpt on 4N = {torch_load[1].median / ckpt[1].median:.2f}x")
    out("")
    out("Targets")
    for name, ok in checks.items():
        out(f"  {name}: {'PASS' if ok else 'FAIL'}")
    ok = all(checks.values())
    out(f"Result: {'PASS' if ok else 'FAIL'}")
    return 1 if args.check and not ok else 0


def main(argv: list[str] | None = None) -> int:
    return bl.run_guarded("bench_many_tensors", run, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
