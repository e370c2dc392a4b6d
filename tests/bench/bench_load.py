#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Benchmark: `ckpt tensors FILE --json` against `torch.load(FILE, map_location="cpu")`.

    /usr/bin/python3 tests/bench/bench_load.py --ckpt build/bin/ckpt \
        [--size-gb 2.0] [--workdir DIR] [--keep] [--repeat 5] [--check]

Generates (or reuses) a ~2 GB transformer-shaped checkpoint, warms the page cache,
then reports the median wall time of both, ckpt's peak RSS, and whether the targets are
met: ckpt time <= torch.load time / 50, ckpt peak RSS <= 64 MiB, and ckpt lists the
same tensors torch.load finds.

Exit status: 0 (a benchmark, not a test) unless something could not run (2); with
--check, 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402  (must not import torch: see benchlib's RSS note)

TIME_RATIO_TARGET = 50.0      # ckpt must be at least this many times faster
RSS_TARGET_MIB = 64.0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description="Benchmark `ckpt tensors FILE --json` against torch.load on a large checkpoint.")
    ap.add_argument("--ckpt", required=True, help="path to the ckpt binary (e.g. build/bin/ckpt)")
    ap.add_argument("--size-gb", type=float, default=2.0,
                    help="size of the synthetic checkpoint in GB (10^9 bytes; default 2.0)")
    ap.add_argument("--workdir", type=Path, default=None,
                    help=f"where the checkpoint is cached (default {bl.default_workdir()})")
    ap.add_argument("--keep", action="store_true",
                    help="keep a checkpoint this run generates, so later runs reuse it "
                         "(default: delete it when done; a file already cached is never "
                         "deleted)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each tool (median taken)")
    ap.add_argument("--seed", type=int, default=0, help="seed for the synthetic checkpoint")
    ap.add_argument("--python", default=bl.DEFAULT_PYTHON,
                    help="interpreter with torch for the child processes (default: this one)")
    ap.add_argument("--json-out", type=Path, default=None, help="also write the results as JSON")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.size_gb <= 0:
        ap.error("--size-gb must be positive")
    args.workdir = args.workdir or bl.default_workdir()
    return args


def resolve_ckpt(arg: str) -> str:
    path = shutil.which(arg) if os.sep not in arg else arg
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise bl.BenchError(f"ckpt binary not found or not executable: {arg} "
                            "(build it first, e.g. `cmake --preset release && "
                            "cmake --build --preset release`)")
    return os.path.abspath(path)


def sanity(ckpt_stdout: bytes, torch_tensors: int, torch_nbytes: int,
           file_bytes: int) -> tuple[bool, list[str], dict]:
    """Compare ckpt's JSON tensor list with what torch.load found."""
    info: dict = {"ckpt_tensors": None, "ckpt_nbytes": None}
    text = ckpt_stdout.decode(errors="replace")
    try:
        doc = json.loads(text)
    except ValueError as e:
        snippet = text.strip()[:120].replace("\n", " ")
        return False, [f"ckpt output is not JSON ({e.msg}); "
                       f"first bytes: {snippet!r}" if snippet else
                       "ckpt printed nothing on stdout (expected one JSON object)"], info
    records = bl.tensor_records(doc)
    if records is None:
        return False, ["ckpt JSON has no recognisable tensor list "
                       "(expected {\"tensors\": [...]} with dtype/shape/nbytes records)"], info

    ok = True
    msgs = []
    n = len(records)
    info["ckpt_tensors"] = n
    if n == torch_tensors:
        msgs.append(f"tensor count {n} = torch.load's: OK")
    else:
        ok = False
        msgs.append(f"tensor count MISMATCH: ckpt lists {n}, torch.load found {torch_tensors}")

    nb = [r.get("nbytes") for r in records]
    if not all(isinstance(x, int) for x in nb):
        ok = False
        missing = sum(1 for x in nb if not isinstance(x, int))
        msgs.append(f"{missing} records lack an integer \"nbytes\"")
        return ok, msgs, info
    total = sum(nb)
    info["ckpt_nbytes"] = total
    # exact: a listing that gets one tensor's size wrong is wrong, however plausible the sum
    if total == torch_nbytes:
        msgs.append(f"nbytes sum {total:,} = torch's numel*element_size sum: OK")
    else:
        ok = False
        msgs.append(f"nbytes sum MISMATCH: ckpt {total:,}, torch {torch_nbytes:,} (file {file_bytes:,} B)")
    return ok, msgs, info


def run(args: argparse.Namespace) -> int:
    ckpt_bin = resolve_ckpt(args.ckpt)
    out = print

    t0 = time.perf_counter()
    cp = bl.ensure_checkpoint(args.workdir, args.size_gb, args.seed, python=args.python, log=out)
    m = cp.manifest
    gen_note = "reused from cache"
    if cp.generated:
        gen_note = f"generated in {m['generate_s']:.1f} s"
        if m.get("generate_maxrss_kib"):
            gen_note += f" (peak RSS {bl.fmt_bytes(m['generate_maxrss_kib'] * 1024)})"
    try:
        file_bytes = cp.path.stat().st_size
        warm_s = bl.warm_page_cache(cp.path)
        argv = [ckpt_bin, "tensors", str(cp.path), "--json"]

        # One captured run: checks ckpt works, gives the JSON and the peak RSS, and warms
        # the binary's own pages for the timed runs.
        first = bl.run_once(argv, capture_stdout=True, timeout=600)
        if first.returncode != 0:
            first.check(f"`{' '.join(argv)}`")
        floor_kib = bl.rss_floor_kib()
        ckpt_t = bl.time_command(argv, repeat=args.repeat, warmup=0, timeout=600)

        out(f"timing torch.load ({args.repeat} runs, fresh interpreter each) ...")
        tl = bl.torch_load_stats(cp.path, repeat=args.repeat, python=args.python)
        out(f"timing the C unpickler on data.pkl with stub callbacks ({args.repeat} runs) ...")
        stub = bl.stub_unpickle_stats(cp.path, repeat=args.repeat, python=args.python)
    finally:
        if cp.generated and not args.keep:
            cp.remove()

    ok_sanity, sanity_msgs, sinfo = sanity(first.stdout or b"", tl.tensors, tl.nbytes, file_bytes)
    ratio = tl.load.median / ckpt_t.median if ckpt_t.median > 0 else float("inf")
    time_limit = tl.load.median / TIME_RATIO_TARGET
    ok_time = ckpt_t.median <= time_limit
    rss_mib = first.maxrss_mib
    ok_rss = rss_mib is not None and rss_mib <= RSS_TARGET_MIB
    passed = ok_time and ok_rss and ok_sanity

    def verdict(ok: bool) -> str:
        return "PASS" if ok else "FAIL"

    dtypes = ", ".join(f"{k} {v}" for k, v in sorted(tl.dtypes.items(), key=lambda kv: -kv[1]))
    rss_how = {"gnu-time": "GNU time", "wait4": "os.wait4"}.get(first.rss_method, "unmeasured")
    floor = f"{floor_kib / 1024:.1f} MiB" if floor_kib is not None else "n/a"
    tl_rss = bl.fmt_bytes(tl.maxrss_kib * 1024) if tl.maxrss_kib else "n/a"
    rss_str = f"{rss_mib:.1f} MiB" if rss_mib is not None else "n/a"

    out("")
    out("Checkpoint Inspector benchmark: load (`ckpt tensors --json` vs torch.load)")
    out(f"  checkpoint      {cp.path}")
    out(f"                  {bl.fmt_bytes(file_bytes)} ({file_bytes:,} bytes), {gen_note}; "
        f"hidden size {m['hidden_size']}, {m['n_layers']} layers")
    out(f"  tensors         {tl.tensors} ({dtypes}); {bl.fmt_bytes(tl.nbytes)} of tensor data")
    out(f"  page cache      warmed (read the file in {warm_s:.2f} s, "
        f"{file_bytes / max(warm_s, 1e-9) / bl.GIB:.2f} GiB/s)")
    out(f"  torch.load      {tl.load.summary()}")
    out(f"                  whole child process (startup + import torch + load): "
        f"median {bl.fmt_seconds(tl.process.median)}; peak RSS {tl_rss}")
    out(f"  ckpt tensors    {ckpt_t.summary()}")
    out(f"                  peak RSS {rss_str} (via {rss_how}; measurement floor {floor})")
    out(f"  stub unpickle   {stub.summary()}")
    out("                  the same work as a listing: CPython's C unpickler over data.pkl with stub")
    out("                  persistent_load and rebuild callbacks, no tensor bytes read (timed in-process)")
    out(f"  ratio           torch.load / ckpt = {ratio:,.1f}x (torch.load reads every byte)")
    out(f"                  stub unpickle / ckpt = {stub.median / ckpt_t.median if ckpt_t.median > 0 else float('inf'):,.2f}x "
        "(ckpt's time includes its process start and JSON output)")
    out("  sanity          " + "\n                  ".join(sanity_msgs))
    out("")
    out("Targets")
    out(f"  time    ckpt <= torch.load / {TIME_RATIO_TARGET:g} "
        f"(<= {bl.fmt_seconds(time_limit)}): {verdict(ok_time)} ({bl.fmt_seconds(ckpt_t.median)})")
    out(f"  memory  ckpt peak RSS <= {RSS_TARGET_MIB:g} MiB: {verdict(ok_rss)} ({rss_str})")
    out(f"  sanity  ckpt lists the tensors torch.load finds: {verdict(ok_sanity)}")
    out(f"Result: {verdict(passed)}   (total benchmark time {time.perf_counter() - t0:.1f} s)")
    if cp.generated and not args.keep:
        out(f"(checkpoint deleted; pass --keep to cache it in {args.workdir})")

    if args.json_out:
        result = {
            "benchmark": "load",
            "checkpoint": {"path": str(cp.path), "file_bytes": file_bytes,
                           "generated": cp.generated, "kept": args.keep or not cp.generated,
                           "manifest": m},
            "torch_load": {**tl.load.as_dict(), "process": tl.process.as_dict(),
                           "maxrss_kib": tl.maxrss_kib, "tensors": tl.tensors,
                           "nbytes": tl.nbytes, "dtypes": tl.dtypes},
            "ckpt": {**ckpt_t.as_dict(), "maxrss_kib": first.maxrss_kib,
                     "rss_method": first.rss_method, "rss_floor_kib": floor_kib, **sinfo},
            "ratio": ratio,
            "targets": {"time": ok_time, "rss": ok_rss, "sanity": ok_sanity},
            "sanity_messages": sanity_msgs,
            "pass": passed,
        }
        bl.write_json(args.json_out, result)

    return 1 if (args.check and not passed) else 0


def main(argv: list[str] | None = None) -> int:
    return bl.run_guarded("bench_load", run, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
