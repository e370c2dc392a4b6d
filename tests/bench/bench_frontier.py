#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Frontier scale (issue 16): a DeepSeek-V3-shaped sharded model folder and runs of 250 and 1000
checkpoints, every figure against a baseline doing the same work in the same run.

    /usr/bin/python3 tests/bench/bench_frontier.py [--ckpt build/bin/ckpt] [--repeat 5]
        [--workdir DIR] [--keep] [--skip-runs] [--json-out FILE] [--check]

Sharded set (made once, cached in the work directory): 163 safetensors shards and
model.safetensors.index.json in the sharded layout of save_pretrained (../shared/docs/formats.md §6 and §7:
shards model-0000i-of-0000N.safetensors in state_dict order, an index with metadata.total_size and
weight_map, written with sort_keys), with a config.json: 61 layers (3 dense, 58 with 256 routed
experts each holding gate/up/down weights and their FP8 block scales, as DeepSeek-V3's release does),
89,9xx tensors of a few bytes each. Figures:
  listing   `ckpt tensors INDEX --json`, the whole process (start included)
            baseline: Python reading the 163 headers and json.loads-ing them, timed in-process
            target: <= 1x baseline; peak RSS <= 64 MiB + 0.5 KiB per tensor
  stats     `ckpt tensors DIR --stats --json`: <= 5x the listing; RSS <= 64 MiB + 1 KiB per tensor
  check     `ckpt check DIR --json`: <= 3x the listing
Runs (made once by bench_gui_run.py's generator, packaging/python/ckpt_writer.py: the recovery
guide's layout, an MLP with AdamW and a cosine schedule, one training step between saves), 250
and 1000 checkpoints:
  run       `ckpt run RUN --json` with the run's files evicted from the page cache (cold) and warm
            target: cold <= 1 s for 1000 checkpoints; baseline `cat` of every file, cold
  check     `ckpt check RUN --json`, warm: the 1000/250 time ratio (linear: about 4)
The desktop app's figures on the same inputs come from bench_gui_run.py
(`--checkpoints 1000 --large WORKDIR/frontier-sharded-v1`, which reuses the same runs).

Times are medians of --repeat runs with a warm page cache unless said otherwise. Exit status 0 (a
benchmark); 2 when something could not run; with --check, 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import benchlib  # noqa: E402
import bench_gui_run  # noqa: E402
from bench_run import evict  # noqa: E402

SHARDED_VERSION = 1
MIB = 1024 * 1024

# ------------------------------------------------------------------------------------------------
# Inputs


def deepseek_tensors() -> list[tuple[str, str, list[int]]]:
    """(name, safetensors dtype, shape) in state_dict order; hidden size 8, one FP8 scale block."""
    out: list[tuple[str, str, list[int]]] = [("model.embed_tokens.weight", "BF16", [100, 8])]
    for layer in range(61):
        p = f"model.layers.{layer}."
        out += [(p + "input_layernorm.weight", "BF16", [8]), (p + "post_attention_layernorm.weight", "BF16", [8])]
        for proj in ("q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"):
            out += [(p + f"self_attn.{proj}.weight", "F8_E4M3", [8, 8]), (p + f"self_attn.{proj}.weight_scale_inv", "F32", [1, 1])]
        out += [(p + "self_attn.q_a_layernorm.weight", "BF16", [8]), (p + "self_attn.kv_a_layernorm.weight", "BF16", [8])]
        experts = [f"mlp.experts.{e}." for e in range(256)] + ["mlp.shared_experts."] if layer >= 3 else ["mlp."]
        if layer >= 3:
            out += [(p + "mlp.gate.weight", "BF16", [256, 8]), (p + "mlp.gate.e_score_correction_bias", "F32", [256])]
        for e in experts:
            for proj in ("gate_proj", "up_proj", "down_proj"):
                out += [(p + e + proj + ".weight", "F8_E4M3", [8, 8]), (p + e + proj + ".weight_scale_inv", "F32", [1, 1])]
    out += [("model.norm.weight", "BF16", [8]), ("lm_head.weight", "BF16", [100, 8])]
    return out


def write_safetensors(path: Path, tensors: list[tuple[str, str, list[int]]]) -> int:
    """One shard: the 8-byte header length, the JSON header, the data (deterministic bytes)."""
    size = {"BF16": 2, "F32": 4, "F8_E4M3": 1}
    header, data, offset = {}, bytearray(), 0
    for name, dtype, shape in tensors:
        n = size[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        # small finite values in every dtype (0x3c: 1.0 in F8_E4M3's top bits, ~1.0 in BF16's)
        data += bytes([0x10, 0x3c] * (n // 2) + [0x10] * (n % 2))
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # save_file pads the header to 8 bytes
    path.write_bytes(struct.pack("<Q", len(text)) + text + bytes(data))
    return offset


def ensure_sharded(workdir: Path, shards: int = 163) -> tuple[Path, int]:
    folder = workdir / f"frontier-sharded-v{SHARDED_VERSION}"
    tensors = deepseek_tensors()
    if (folder / ".bench-complete").exists():
        return folder, len(tensors)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    per = -(-len(tensors) // shards)
    weight_map, total = {}, 0
    for i in range(shards):
        part = tensors[i * per:(i + 1) * per]
        name = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        total += write_safetensors(folder / name, part)
        weight_map.update({t[0]: name for t in part})
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2, sort_keys=True) + "\n")
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "torch_dtype": "bfloat16",
        "hidden_size": 8, "intermediate_size": 8, "moe_intermediate_size": 8, "num_hidden_layers": 61,
        "first_k_dense_replace": 3, "n_routed_experts": 256, "n_shared_experts": 1, "vocab_size": 100,
        "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}}, indent=2) + "\n")
    (folder / ".bench-complete").write_text("ok\n")
    return folder, len(tensors)


def ensure_run(workdir: Path, count: int) -> Path:
    """A run of `count` checkpoints, made by bench_gui_run.py's generator (the same run it opens)."""
    return bench_gui_run.ensure_run(workdir, count)


# ------------------------------------------------------------------------------------------------
# Measuring

JSON_BASELINE = r"""
import json, struct, sys, time
paths = sys.argv[1:]
best = None
for _ in range(5):
    start = time.perf_counter()
    count = 0
    for p in paths:
        with open(p, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            count += len(json.loads(f.read(n)))
    took = time.perf_counter() - start
    best = took if best is None else min(best, took)
print(json.dumps({"seconds": best, "entries": count}))
"""


def python_headers_seconds(folder: Path) -> tuple[float, int]:
    """Python's json.loads of every shard's header, file reads included, best of 5 in one process."""
    shards = sorted(str(p) for p in folder.glob("*.safetensors"))
    out = subprocess.run([sys.executable, "-c", JSON_BASELINE, *shards], check=True, capture_output=True, text=True)
    doc = json.loads(out.stdout)
    return doc["seconds"], doc["entries"]


def timed(argv: list[str], repeat: int) -> tuple[float, float]:
    """Median wall seconds of `repeat` runs, and the peak RSS (MiB) of one more run under GNU time."""
    stats = benchlib.time_command(argv, repeat=repeat, warmup=1)
    rss = benchlib.run_once(argv).check().maxrss_mib
    return stats.median, rss if rss is not None else float("nan")


def cold_seconds(argv: list[str], folder: Path) -> float:
    evict([p for p in folder.rglob("*") if p.is_file()])
    return benchlib.run_once(argv, rss="none").check().wall_s


class Report:
    def __init__(self) -> None:
        self.missed: list[str] = []
        self.results: dict[str, float] = {}

    def line(self, label: str, value: float, unit: str, target: float | None = None, what: str = "") -> None:
        self.results[label] = value
        verdict = ""
        if target is not None:
            ok = value <= target
            verdict = f"  target <= {target:.3g}{unit}: {'met' if ok else 'MISSED'}"
            if not ok:
                self.missed.append(label)
        print(f"  {label:<34} {value:10.3f}{unit}{verdict}{('   ' + what) if what else ''}")


def bench_sharded(ckpt: str, workdir: Path, repeat: int, report: Report) -> None:
    folder, n = ensure_sharded(workdir)
    for p in folder.iterdir():
        benchlib.warm_page_cache(p)
    index = folder / "model.safetensors.index.json"
    base, entries = python_headers_seconds(folder)
    if entries != n:
        raise benchlib.BenchError(f"the headers hold {entries} entries, expected {n}")
    listed = benchlib.run_once([ckpt, "tensors", str(index), "--json"], capture_stdout=True).check()
    got = len(json.loads(listed.stdout)["tensors"])
    if got != n:
        raise benchlib.BenchError(f"ckpt lists {got} tensors, the set has {n}")
    print(f"\nsharded set {folder}: 163 shards, {n} tensors (sanity: ckpt lists all {got})")
    list_s, list_rss = timed([ckpt, "tensors", str(index), "--json"], repeat)
    stats_s, stats_rss = timed([ckpt, "tensors", str(folder), "--stats", "--json"], repeat)
    check_s, check_rss = timed([ckpt, "check", str(folder), "--json"], repeat)
    kib = n / 1024.0
    report.line("python json.loads of the headers", base, " s", what="baseline, in-process")
    report.line("listing", list_s, " s", what=f"{list_s / base:.1f}x the baseline")
    report.line("listing / baseline", list_s / base, "x", 1.0)
    report.line("listing peak RSS", list_rss, " MiB", 64 + 0.5 * kib)
    report.line("stats", stats_s, " s")
    report.line("stats / listing", stats_s / list_s, "x", 5.0)
    report.line("stats peak RSS", stats_rss, " MiB", 64 + 1.0 * kib)
    report.line("check", check_s, " s", what=f"peak RSS {check_rss:.0f} MiB")
    report.line("check / listing", check_s / list_s, "x", 3.0)


def bench_runs(ckpt: str, workdir: Path, repeat: int, report: Report) -> None:
    check_s = {}
    for count in (250, 1000):
        run = ensure_run(workdir, count)
        found = json.loads(benchlib.run_once([ckpt, "run", str(run), "--json"], capture_stdout=True).check().stdout)
        if len(found["checkpoints"]) != count:
            raise benchlib.BenchError(f"ckpt run found {len(found['checkpoints'])} checkpoints in {run}, expected {count}")
        print(f"\nrun of {count} checkpoints {run}")
        cold = cold_seconds([ckpt, "run", str(run), "--json"], run)
        cat = cold_seconds(["sh", "-c", f"find '{run}' -type f -exec cat {{}} + > /dev/null"], run)
        report.line(f"run {count} cold", cold, " s", 1.0 if count == 1000 else None, f"cat of every file, cold: {cat:.3f} s")
        warm = benchlib.time_command([ckpt, "run", str(run), "--json"], repeat=repeat, warmup=1).median
        report.line(f"run {count} warm", warm, " s")
        # check exits 1 when it has findings; time it whatever the verdict
        runs = []
        for _ in range(max(1, repeat // 2)):
            runs.append(benchlib.run_once([ckpt, "check", str(run), "--json"], rss="none").wall_s)
        check_s[count] = statistics.median(runs)
        report.line(f"check {count}", check_s[count], " s")
    report.line("check 1000 / check 250", check_s[1000] / check_s[250], "x", 4.0 * 1.25,
                "linear is 4x (25% allowed for fixed costs measured as growth)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ckpt", default=str(ROOT / "build" / "bin" / "ckpt"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the generated inputs for the next run")
    ap.add_argument("--skip-runs", action="store_true", help="only the sharded set")
    ap.add_argument("--json-out")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    workdir = Path(args.workdir) if args.workdir else benchlib.default_workdir()
    workdir.mkdir(parents=True, exist_ok=True)
    report = Report()
    made = list(workdir.glob("frontier-*")) + list(workdir.glob("gui-run-*"))
    try:
        print(f"load average {os.getloadavg()[0]:.2f} (the figures assume an idle machine)")
        bench_sharded(args.ckpt, workdir, args.repeat, report)
        if not args.skip_runs:
            bench_runs(args.ckpt, workdir, args.repeat, report)
    except (benchlib.BenchError, subprocess.CalledProcessError) as e:
        print(f"bench_frontier: {e}", file=sys.stderr)
        return 2
    finally:
        if not args.keep:
            for p in list(workdir.glob("frontier-*")) + list(workdir.glob("gui-run-*")):
                if p not in made:
                    shutil.rmtree(p, ignore_errors=True)
    print(f"\ntargets missed: {', '.join(report.missed) if report.missed else 'none'}")
    if args.json_out:
        benchlib.write_json(args.json_out, {"results": report.results, "missed": report.missed})
    return 1 if (args.check and report.missed) else 0


if __name__ == "__main__":
    sys.exit(main())
