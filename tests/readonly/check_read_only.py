#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The read-only guarantee: every CLI, GUI and validator operation on every sample-run file
leaves the files exactly as they were (content, mtime, mode) and adds nothing beside them
(no lock files, caches or temporaries: directory listings and directory mtimes are compared too).

usage: check_read_only.py --sample-runs DIR --ckpt BIN --out DIR [--gui BIN] [--validate BIN]
(the validator defaults to ckpt-validate beside BIN when it was built)
Settings and caches the programs write go to a scratch HOME / XDG_* under --out.
"""
import argparse
import hashlib
import os
import pathlib
import stat
import subprocess
import sys


def snapshot(root):
    """path -> (kind, size, mtime_ns, mode, sha256 or link target) for everything under root."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in [""] + sorted(dirnames) + sorted(filenames):
            path = os.path.join(dirpath, name) if name else dirpath
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                digest = os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            else:
                digest = ""
            state[os.path.relpath(path, root)] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns,
                                                  stat.S_IMODE(st.st_mode), digest)
    return state


def differences(before, after):
    out = []
    for path in sorted(set(before) | set(after)):
        if path not in after:
            out.append(f"{path}: removed")
        elif path not in before:
            out.append(f"{path}: created")
        elif before[path] != after[path]:
            fields = ["type", "size", "mtime_ns", "mode", "content"]
            changed = [f for f, b, a in zip(fields, before[path], after[path]) if b != a]
            out.append(f"{path}: {', '.join(changed)} changed")
    return out


class Runner:
    def __init__(self, out, env):
        self.out, self.env, self.count, self.crashes = out, env, 0, []

    def __call__(self, *argv, timeout=120):
        self.count += 1
        try:
            proc = subprocess.run([str(a) for a in argv], env=self.env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.crashes.append(f"{' '.join(map(str, argv))}: timed out after {timeout} s")
            return
        # 0 ok, 1 findings, 2 unreadable/refused: all fine here; a signal or anything else is not.
        if proc.returncode not in (0, 1, 2):
            tail = proc.stderr.decode(errors="replace")[-400:]
            self.crashes.append(f"{' '.join(map(str, argv))}: exit {proc.returncode}: {tail}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample-runs", required=True, type=pathlib.Path)
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--out", required=True, type=pathlib.Path)
    ap.add_argument("--gui")
    ap.add_argument("--validate")
    args = ap.parse_args()
    root = args.sample_runs.resolve()
    if not args.validate:
        # Built executables share one folder; the validator is optional (it needs LibTorch).
        beside = pathlib.Path(args.ckpt).with_name("ckpt-validate")
        args.validate = str(beside) if beside.exists() else None
    args.out.mkdir(parents=True, exist_ok=True)
    home = args.out / "home"
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_DATA_HOME=str(home / ".local/share"),
               TMPDIR=str(args.out), QT_QPA_PLATFORM="offscreen")

    before = snapshot(root)
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.name.endswith((".py", ".md")))
    dirs = sorted([root] + [p for p in root.rglob("*") if p.is_dir()])
    run = Runner(args.out, env)
    for f in files:
        run(args.ckpt, "tensors", f, "--json", "--verify-crc")
        run(args.ckpt, "tree", f)
        run(args.ckpt, "imports", f, "--json")
        run(args.ckpt, "show", f, "--json")
    for d in dirs:
        run(args.ckpt, "show", d)
        run(args.ckpt, "run", d, "--json")
        run(args.ckpt, "audit", d, "--json")
        if args.validate:
            run(args.validate, d)
    runs = sorted({d for d in dirs if (d / "latest").exists() or any(d.glob("checkpoint*"))})
    if args.gui:
        for i, r in enumerate(runs):
            inside = sorted(p for p in r.rglob("*") if p.is_file())
            run(args.gui, r, *inside, "--screenshot", args.out / f"run-{i}.png", timeout=300)
    after = snapshot(root)

    print(f"{run.count} operations on {len(files)} files, {len(dirs)} folders and {len(runs)} runs "
          f"({'with' if args.gui else 'without'} the GUI, {'with' if args.validate else 'without'} the validator)")
    problems = differences(before, after)
    for p in problems:
        print(f"CHANGED {p}")
    for c in run.crashes:
        print(f"CRASHED {c}")
    if len(before) < 50:
        print(f"only {len(before)} entries under {root}: is this the sample runs folder?")
        return 1
    return 1 if problems or run.crashes else 0


if __name__ == "__main__":
    sys.exit(main())
