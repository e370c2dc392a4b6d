#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Shared helpers for the Checkpoint Inspector benchmarks (tests/bench/bench_*.py).

What lives here:

* Synthetic checkpoint generation: ``ensure_checkpoint()`` makes (or reuses from a cache
  directory) a transformer-shaped ``torch.save`` file of a requested size, with a sidecar
  manifest. Generation runs in a child interpreter so the benchmarking process never
  imports torch and stays small (see the RSS note below).
* Process measurement: ``run_once()`` runs a command, timing it and reading its peak RSS;
  ``time_command()`` repeats that and takes the median.
* ``torch_load_stats()`` times ``torch.load(path, map_location="cpu")`` in a fresh child
  interpreter per repeat and reports what the checkpoint contains.
* Small things every benchmark needs: page-cache warming, JSON tensor-list parsing,
  report formatting.

Peak RSS, and why the benchmarking process must stay lean
---------------------------------------------------------
Linux's ``ru_maxrss`` for a child (as returned by ``os.wait4`` or ``RUSAGE_CHILDREN``)
includes the RSS high-water mark of the address space the child had *before* it called
exec: with vfork (what CPython's subprocess and posix_spawn use) that is the parent's
whole address space. So ``os.wait4`` on ``/bin/true`` spawned from a Python process that
once held 300 MB reports ~300 MB. ``run_once`` therefore measures RSS through
``/usr/bin/time -f %M`` when it is installed (GNU time forks from its own ~1 MB image, so
the floor is ~1 MB), and falls back to ``os.wait4`` otherwise, in which case the floor is
the RSS high-water mark of this Python process (~10 MB if it never imported torch).
``rss_floor_kib()`` measures that floor with ``/bin/true`` so reports can show it.

This file is also a small CLI used for the child processes:

    benchlib.py generate --out PATH --size-gb 2.0 [--seed 0]   # prints the manifest JSON
    benchlib.py torch-load PATH                                   # prints one JSON line
    benchlib.py stub-unpickle PATH                                # prints one JSON line
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

HERE = Path(__file__).resolve().parent

# Bump when the generated content changes so cached files are regenerated.
GENERATOR_VERSION = 1

# The interpreter with torch (Debian's python3-torch). Children use the same interpreter
# as the benchmark itself unless told otherwise.
DEFAULT_PYTHON = sys.executable or "/usr/bin/python3"

TIME_BIN = shutil.which("time", path="/usr/bin:/bin")  # GNU time, package `time`
GIB = 1024 ** 3
MIB = 1024 ** 2


class BenchError(RuntimeError):
    """Something needed to run a benchmark could not run (benchmarks exit 2 on this)."""


# --------------------------------------------------------------------------------------
# Paths and files
# --------------------------------------------------------------------------------------

def default_workdir() -> Path:
    """$XDG_CACHE_HOME/checkpoint-inspector-bench, else ~/.cache/checkpoint-inspector-bench."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "checkpoint-inspector-bench"


def warm_page_cache(path: os.PathLike | str, chunk: int = 16 * MIB) -> float:
    """Read the whole file once (like `cat FILE > /dev/null`); returns the seconds it took."""
    buf = bytearray(chunk)
    view = memoryview(buf)
    t0 = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        while f.readinto(view):
            pass
    return time.perf_counter() - t0


def fmt_bytes(n: float) -> str:
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", 1024)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def fmt_seconds(s: float | None) -> str:
    if s is None or math.isnan(s):
        return "n/a"
    if s < 1.0:
        return f"{s * 1000:.1f} ms"
    return f"{s:.3f} s"


# --------------------------------------------------------------------------------------
# Running and measuring commands
# --------------------------------------------------------------------------------------

@dataclass
class RunResult:
    argv: list[str]
    returncode: int
    wall_s: float
    maxrss_kib: int | None          # peak RSS of the command, KiB (None if unmeasured)
    rss_method: str                 # "gnu-time", "wait4" or "none"
    stdout: bytes | None = None     # only when capture_stdout=True
    stderr: bytes = b""

    @property
    def maxrss_mib(self) -> float | None:
        return None if self.maxrss_kib is None else self.maxrss_kib / 1024.0

    def check(self, what: str = "") -> "RunResult":
        """Raise BenchError if the command failed."""
        if self.returncode != 0:
            tail = self.stderr.decode(errors="replace").strip()[-2000:]
            raise BenchError(f"{what or ' '.join(self.argv)} exited with {self.returncode}"
                             + (f":\n{tail}" if tail else ""))
        return self


def run_once(argv: Sequence[str], *, capture_stdout: bool = False, rss: str = "auto",
             env: dict[str, str] | None = None, cwd: os.PathLike | str | None = None,
             timeout: float | None = None) -> RunResult:
    """Run argv once; wall time (spawn to reap) and peak RSS.

    rss: "auto" (GNU time if installed, else os.wait4), "gnu-time", "wait4" or "none".
    Going through GNU time adds one fork+exec (~1 ms) to wall_s; use rss="none" or
    "wait4" for the runs you time when that matters. stdout goes to /dev/null unless
    capture_stdout; stderr is always captured. Both go through temporary files, never
    pipes, so a large output cannot block the child while we sit in wait4.
    """
    argv = [str(a) for a in argv]
    if rss == "auto":
        rss = "gnu-time" if TIME_BIN else "wait4"
    if rss == "gnu-time" and not TIME_BIN:
        raise BenchError("/usr/bin/time (Debian package `time`) is not installed")

    with tempfile.TemporaryDirectory(prefix="ckpt-bench-") as tmp:
        time_out = os.path.join(tmp, "time.out")
        full = [TIME_BIN, "-f", "%M", "-o", time_out, "--", *argv] if rss == "gnu-time" else argv
        err_path = os.path.join(tmp, "stderr")
        out_path = os.path.join(tmp, "stdout")
        with open(err_path, "wb") as err_f, \
                (open(out_path, "wb") if capture_stdout else open(os.devnull, "wb")) as out_f:
            t0 = time.perf_counter()
            try:
                proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=out_f,
                                        stderr=err_f, env=env, cwd=cwd)
            except OSError as e:
                raise BenchError(f"cannot run {argv[0]}: {e}") from e
            timer = None
            if timeout is not None:
                timer = threading.Timer(timeout, proc.kill)
                timer.start()
            try:
                _, status, usage = os.wait4(proc.pid, 0)
            finally:
                if timer is not None:
                    timer.cancel()
            wall = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)  # tell Popen it is reaped

        stderr = Path(err_path).read_bytes()
        stdout = Path(out_path).read_bytes() if capture_stdout else None
        maxrss: int | None
        if rss == "gnu-time":
            maxrss = None
            try:
                lines = Path(time_out).read_text().split()
                maxrss = int(lines[-1]) if lines else None
            except (OSError, ValueError):
                pass
        elif rss == "wait4":
            maxrss = int(usage.ru_maxrss)  # KiB on Linux
        else:
            maxrss = None
    return RunResult(argv, proc.returncode, wall, maxrss, rss if maxrss is not None else "none",
                     stdout, stderr)


@dataclass
class TimingStats:
    runs: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.runs) if self.runs else float("nan")

    @property
    def min(self) -> float:
        return min(self.runs) if self.runs else float("nan")

    @property
    def max(self) -> float:
        return max(self.runs) if self.runs else float("nan")

    def summary(self) -> str:
        return (f"median {fmt_seconds(self.median)} (min {fmt_seconds(self.min)}, "
                f"max {fmt_seconds(self.max)}, n={len(self.runs)})")

    def as_dict(self) -> dict[str, Any]:
        return {"median_s": self.median, "min_s": self.min, "max_s": self.max,
                "runs_s": self.runs}


def time_command(argv: Sequence[str], repeat: int = 5, warmup: int = 1,
                 **kwargs: Any) -> TimingStats:
    """Median-of-N wall time of a command (stdout to /dev/null, no RSS wrapper).

    `warmup` untimed runs go first. Raises BenchError if any run fails.
    """
    kwargs.setdefault("rss", "none")
    for _ in range(warmup):
        run_once(argv, **kwargs).check()
    stats = TimingStats()
    for _ in range(repeat):
        stats.runs.append(run_once(argv, **kwargs).check().wall_s)
    return stats


def rss_floor_kib(rss: str = "auto") -> int | None:
    """Peak RSS `run_once` reports for /bin/true: what measurements cannot go below."""
    return run_once(["/bin/true"], rss=rss).maxrss_kib


# --------------------------------------------------------------------------------------
# torch.load measurement (child interpreter per run)
# --------------------------------------------------------------------------------------

@dataclass
class TorchLoadStats:
    load: TimingStats          # torch.load() call alone, timed inside the child
    process: TimingStats       # whole child process (interpreter + import torch + load)
    maxrss_kib: int | None     # largest peak RSS over the runs
    tensors: int               # tensors reachable in the loaded object
    nbytes: int                # sum of numel * element_size over those tensors
    storage_bytes: int         # sum over distinct storages
    dtypes: dict[str, int]     # tensor count per dtype


def torch_load_stats(path: os.PathLike | str, repeat: int = 5,
                     python: str = DEFAULT_PYTHON, timeout: float | None = 600) -> TorchLoadStats:
    """Time torch.load(path, map_location="cpu"), each run in a fresh interpreter."""
    load, proc = TimingStats(), TimingStats()
    maxrss: int | None = None
    info: dict[str, Any] = {}
    for _ in range(repeat):
        r = run_once([python, str(HERE / "benchlib.py"), "torch-load", str(path)],
                     capture_stdout=True, timeout=timeout).check("torch.load child")
        info = json.loads(r.stdout.decode().strip().splitlines()[-1])
        load.runs.append(info["load_s"])
        proc.runs.append(r.wall_s)
        if r.maxrss_kib is not None:
            maxrss = max(maxrss or 0, r.maxrss_kib)
    return TorchLoadStats(load, proc, maxrss, info["tensors"], info["nbytes"],
                          info["storage_bytes"], info["dtypes"])


def stub_unpickle_stats(path: os.PathLike | str, repeat: int = 5, python: str = DEFAULT_PYTHON,
                        timeout: float | None = 600) -> TimingStats:
    """The fair baseline for a listing: CPython's C unpickler on the file's data.pkl, with stub callbacks
    (persistent_load returns the storage key, torch's rebuild functions return a small tuple), so it
    does the same work a listing does (every opcode, one record per tensor) and reads no tensor bytes.
    Timed inside a fresh interpreter around load() only, after the zip member was read."""
    stats = TimingStats()
    for _ in range(repeat):
        r = run_once([python, str(HERE / "benchlib.py"), "stub-unpickle", str(path)],
                     capture_stdout=True, timeout=timeout).check("stub unpickle child")
        info = json.loads(r.stdout.decode().strip().splitlines()[-1])
        stats.runs.append(info["unpickle_s"])
    return stats


def _child_stub_unpickle(path: str) -> None:
    import io
    import pickle
    import zipfile

    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.endswith("/data.pkl") or n == "data.pkl")
        data = z.read(name)
    rebuilt = [0]

    def stub(*args: Any, **kwargs: Any) -> tuple:
        rebuilt[0] += 1
        return args[:1]

    class StubUnpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if module.startswith("torch"):
                return stub
            return super().find_class(module, name)

        def persistent_load(self, pid: Any) -> Any:
            return pid

    t0 = time.perf_counter()
    StubUnpickler(io.BytesIO(data)).load()
    unpickle_s = time.perf_counter() - t0
    print(json.dumps({"unpickle_s": unpickle_s, "stub_calls": rebuilt[0], "pickle_bytes": len(data)}))


def _child_torch_load(path: str) -> None:
    import torch  # only ever imported in child processes

    t0 = time.perf_counter()
    obj = torch.load(path, map_location="cpu")
    load_s = time.perf_counter() - t0
    tensors = nbytes = 0
    storages: dict[int, int] = {}
    dtypes: dict[str, int] = {}
    for t in iter_tensors(obj, torch):
        tensors += 1
        nbytes += t.numel() * t.element_size()
        st = t.storage()
        storages[st.data_ptr()] = st.nbytes() if hasattr(st, "nbytes") else st.size() * t.element_size()
        name = str(t.dtype).removeprefix("torch.")
        dtypes[name] = dtypes.get(name, 0) + 1
    print(json.dumps({"load_s": load_s, "tensors": tensors, "nbytes": nbytes,
                      "storage_bytes": sum(storages.values()), "dtypes": dtypes}))


def iter_tensors(obj: Any, torch: Any) -> Iterable[Any]:
    """Tensors reachable from obj through dicts, lists and tuples (depth first)."""
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, torch.Tensor):
            yield o
        elif isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, (list, tuple)):
            stack.extend(o)


# --------------------------------------------------------------------------------------
# ckpt JSON output
# --------------------------------------------------------------------------------------

def tensor_records(doc: Any) -> list[dict[str, Any]] | None:
    """Find the tensor list in `ckpt ... --json` output, tolerating layout variations.

    Accepts a top-level list of records, {"tensors": [...]} or {"tensors": {key: record}},
    or failing that the first list of dicts (searching breadth first) whose elements look
    like tensor records (have "dtype" and "shape"). Returns None when nothing matches.
    """
    def looks_like_records(x: Any) -> bool:
        return isinstance(x, list) and all(isinstance(e, dict) for e in x) and \
            (not x or ("dtype" in x[0] and "shape" in x[0]))

    if looks_like_records(doc):
        return doc
    if isinstance(doc, dict) and "tensors" in doc:
        t = doc["tensors"]
        if looks_like_records(t):
            return t
        if isinstance(t, dict) and all(isinstance(v, dict) for v in t.values()):
            return [{"key": k, **v} for k, v in t.items()]
    queue = [doc]
    while queue:
        o = queue.pop(0)
        if looks_like_records(o) and o:
            return o
        if isinstance(o, dict):
            queue.extend(o.values())
        elif isinstance(o, list):
            queue.extend(e for e in o if isinstance(e, (dict, list)))
    return None


# --------------------------------------------------------------------------------------
# Synthetic checkpoint
# --------------------------------------------------------------------------------------

# Shape of the synthetic model. The tensor count does not depend on the size: only the
# hidden size changes, so timings at different sizes compare like with like.
N_LAYERS = 24
ADAM_LAYERS = 4          # Adam state for the last 4 blocks (a partial fine-tune)
VOCAB = 32000
MAX_POS = 2048


def _layer_params(d: int) -> list[tuple[str, tuple[int, ...], str]]:
    """(name, shape, dtype) of one block: matrices bf16, norms and biases float32."""
    ff = 4 * d
    return [
        ("ln_1.weight", (d,), "float32"), ("ln_1.bias", (d,), "float32"),
        ("attn.q_proj.weight", (d, d), "bfloat16"), ("attn.q_proj.bias", (d,), "float32"),
        ("attn.k_proj.weight", (d, d), "bfloat16"), ("attn.k_proj.bias", (d,), "float32"),
        ("attn.v_proj.weight", (d, d), "bfloat16"), ("attn.v_proj.bias", (d,), "float32"),
        ("attn.out_proj.weight", (d, d), "bfloat16"), ("attn.out_proj.bias", (d,), "float32"),
        ("ln_2.weight", (d,), "float32"), ("ln_2.bias", (d,), "float32"),
        ("mlp.fc_in.weight", (ff, d), "bfloat16"), ("mlp.fc_in.bias", (ff,), "float32"),
        ("mlp.fc_out.weight", (d, ff), "bfloat16"), ("mlp.fc_out.bias", (d,), "float32"),
    ]


_DTYPE_SIZE = {"float32": 4, "bfloat16": 2, "int64": 8}


def model_layout(d: int) -> list[tuple[str, tuple[int, ...], str]]:
    """Every model tensor as (state-dict key, shape, dtype), in state-dict order."""
    out: list[tuple[str, tuple[int, ...], str]] = [
        ("transformer.embed_tokens.weight", (VOCAB, d), "bfloat16"),
        ("transformer.embed_positions.weight", (MAX_POS, d), "bfloat16"),
        ("transformer.position_ids", (1, MAX_POS), "int64"),
    ]
    for i in range(N_LAYERS):
        out += [(f"transformer.h.{i}.{n}", s, t) for n, s, t in _layer_params(d)]
    out += [("transformer.ln_f.weight", (d,), "float32"),
            ("transformer.ln_f.bias", (d,), "float32"),
            ("lm_head.weight", (VOCAB, d), "bfloat16")]
    return out


def _numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def adam_params(layout: list[tuple[str, tuple[int, ...], str]]) -> list[int]:
    """Indices (into layout) of the parameters that carry Adam state."""
    first = N_LAYERS - ADAM_LAYERS
    prefixes = tuple(f"transformer.h.{i}." for i in range(first, N_LAYERS))
    return [i for i, (k, _, _) in enumerate(layout) if k.startswith(prefixes)]


def planned_bytes(d: int) -> tuple[int, int]:
    """(tensor count, total tensor bytes) of the checkpoint for hidden size d."""
    layout = model_layout(d)
    count = len(layout)
    total = sum(_numel(s) * _DTYPE_SIZE[t] for _, s, t in layout)
    for i in adam_params(layout):
        count += 3                                    # step, exp_avg, exp_avg_sq
        total += 4 + 2 * 4 * _numel(layout[i][1])     # float32 state
    return count, total


def hidden_size_for(size_bytes: float) -> int:
    """Hidden size (multiple of 8, at least 64) whose checkpoint is closest to size_bytes."""
    best, best_err = 64, float("inf")
    for d in range(64, 32768, 8):
        _, b = planned_bytes(d)
        err = abs(b - size_bytes)
        if err < best_err:
            best, best_err = d, err
        if b > size_bytes:
            break
    return best


def generate_checkpoint(out: os.PathLike | str, size_gb: float, seed: int = 0) -> dict[str, Any]:
    """Write the synthetic checkpoint to `out` (in this process; imports torch).

    Values come from one uniform random pool per dtype, copied into each tensor from a
    random offset and scaled: no page is all zeros and no two tensors are identical, and
    it runs at memory speed rather than RNG speed (torch's CPU RNG here is single
    threaded, ~25 M values/s). Peak memory is the checkpoint size plus the pools (~0.3 GB).
    """
    import torch

    t_start = time.perf_counter()
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    d = hidden_size_for(size_gb * 1e9)
    layout = model_layout(d)
    dtypes = {"float32": torch.float32, "bfloat16": torch.bfloat16, "int64": torch.int64}

    pool_n = 1 << 24  # 16 Mi values per pool
    pools = {"float32": torch.empty(pool_n, dtype=torch.float32).uniform_(-1.0, 1.0, generator=gen)}
    pools["bfloat16"] = pools["float32"].to(torch.bfloat16)

    def filled(shape: Sequence[int], dtype: str, scale: float, offset: float = 0.0):
        t = torch.empty(*shape, dtype=dtypes[dtype])
        flat = t.view(-1)
        n = flat.numel()
        pool = pools[dtype]
        pos = int(torch.randint(0, pool_n, (1,), generator=gen))
        done = 0
        while done < n:  # copy from the pool, wrapping around
            k = min(n - done, pool_n - pos)
            flat[done:done + k].copy_(pool[pos:pos + k])
            done += k
            pos = 0
        flat.mul_(scale)
        if offset:
            flat.add_(offset)
        return t

    model: dict[str, Any] = {}
    for key, shape, dtype in layout:
        if dtype == "int64":
            model[key] = torch.arange(_numel(shape), dtype=torch.int64).view(*shape)
        elif key.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
            model[key] = filled(shape, dtype, 0.05, 1.0)
        else:
            scale = 0.02 * (1.0 + float(torch.rand(1, generator=gen)))
            model[key] = filled(shape, dtype, scale)

    params = adam_params(layout)
    state: dict[int, dict[str, Any]] = {}
    for slot, i in enumerate(params):
        shape = layout[i][1]
        state[slot] = {
            "step": torch.tensor(12000.0),
            "exp_avg": filled(shape, "float32", 1e-3),
            "exp_avg_sq": filled(shape, "float32", 1e-6, 2e-6),  # positive
        }
    optimizer = {
        "state": state,
        "param_groups": [{"lr": 1e-4, "betas": (0.9, 0.999), "eps": 1e-8,
                          "weight_decay": 0.01, "amsgrad": False, "maximize": False,
                          "foreach": None, "capturable": False, "differentiable": False,
                          "params": list(range(len(params)))}],
    }
    ckpt = {
        "model": model,
        "optimizer": optimizer,
        "epoch": 3,
        "global_step": 12000,
        "config": {"n_layer": N_LAYERS, "n_embd": d, "vocab_size": VOCAB,
                   "n_positions": MAX_POS, "dtype": "bfloat16"},
    }
    pools.clear()  # free the pools before torch.save
    t_fill = time.perf_counter() - t_start

    out = Path(out)
    tmp = out.with_name(out.name + ".partial")
    try:
        torch.save(ckpt, tmp)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    t_total = time.perf_counter() - t_start

    count, nbytes = planned_bytes(d)
    return {
        "generator_version": GENERATOR_VERSION,
        "torch_version": torch.__version__,
        "size_gb_requested": size_gb,
        "seed": seed,
        "hidden_size": d,
        "n_layers": N_LAYERS,
        "tensors": count,
        "tensor_bytes": nbytes,
        "file_bytes": out.stat().st_size,
        "fill_s": round(t_fill, 3),
        "generate_s": round(t_total, 3),
    }


def checkpoint_name(size_gb: float, seed: int) -> str:
    return f"transformer-{size_gb:g}gb-seed{seed}-v{GENERATOR_VERSION}.pt"


@dataclass
class Checkpoint:
    path: Path
    manifest: dict[str, Any]
    generated: bool            # True if this call wrote it, False if reused from the cache

    @property
    def manifest_path(self) -> Path:
        return manifest_path(self.path)

    def remove(self) -> None:
        for p in (self.path, self.manifest_path):
            try:
                p.unlink()
            except FileNotFoundError:
                pass


def manifest_path(ckpt_path: Path) -> Path:
    return ckpt_path.with_name(ckpt_path.name + ".json")


def ensure_checkpoint(workdir: os.PathLike | str, size_gb: float, seed: int = 0,
                      python: str = DEFAULT_PYTHON, log=print) -> Checkpoint:
    """The synthetic checkpoint in workdir, generated by a child interpreter if missing.

    A cached file is reused when its manifest matches (generator version, size, seed) and
    the file still has the size the manifest recorded.
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / checkpoint_name(size_gb, seed)
    mpath = manifest_path(path)
    try:
        manifest = json.loads(mpath.read_text())
        if (manifest.get("generator_version") == GENERATOR_VERSION
                and manifest.get("size_gb_requested") == size_gb
                and manifest.get("seed") == seed
                and path.stat().st_size == manifest.get("file_bytes")):
            return Checkpoint(path, manifest, generated=False)
    except (OSError, ValueError):
        pass

    path.with_name(path.name + ".partial").unlink(missing_ok=True)  # from a killed run
    log(f"generating {path} (~{size_gb:g} GB, seed {seed}) ...")
    r = run_once([python, str(HERE / "benchlib.py"), "generate", "--out", str(path),
                  "--size-gb", repr(size_gb), "--seed", str(seed)],
                 capture_stdout=True, timeout=3600)
    if r.returncode != 0:
        raise BenchError("checkpoint generation failed:\n"
                         + r.stderr.decode(errors="replace").strip()[-3000:])
    manifest = json.loads(r.stdout.decode().strip().splitlines()[-1])
    manifest["generate_maxrss_kib"] = r.maxrss_kib
    mpath.write_text(json.dumps(manifest, indent=2) + "\n")
    return Checkpoint(path, manifest, generated=True)


# --------------------------------------------------------------------------------------
# Child-process CLI
# --------------------------------------------------------------------------------------

def run_guarded(name: str, run: Callable[[Any], int], args: Any) -> int:
    """Runs a benchmark's `run(args)`; what keeps it from running (BenchError, Ctrl-C) is one
    line on stderr and exit status 2, never a traceback."""
    try:
        return run(args)
    except BenchError as e:
        print(f"{name}: cannot run: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return 2


def write_json(path: os.PathLike | str, result: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(result, indent=2) + "\n")


def _main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="benchmark helper (child-process entry points)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="write the synthetic checkpoint, print its manifest")
    g.add_argument("--out", required=True)
    g.add_argument("--size-gb", type=float, default=2.0)
    g.add_argument("--seed", type=int, default=0)
    t = sub.add_parser("torch-load", help="time torch.load of one file, print JSON")
    t.add_argument("path")
    u = sub.add_parser("stub-unpickle", help="time the C unpickler on data.pkl with stub callbacks, print JSON")
    u.add_argument("path")
    args = ap.parse_args(argv)
    if args.cmd == "generate":
        print(json.dumps(generate_checkpoint(args.out, args.size_gb, args.seed)))
    elif args.cmd == "stub-unpickle":
        _child_stub_unpickle(args.path)
    else:
        _child_torch_load(args.path)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
