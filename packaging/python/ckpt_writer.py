"""Write and find training checkpoints in the recovery guide's directory layout.

Only torch, numpy and the standard library are needed. Import it from a training loop::

    from ckpt_writer import CheckpointWriter, load_latest

    writer = CheckpointWriter("runs/exp1", rank=rank, world_size=world_size,
                              model_arch="mlp-16-64-64-1", config=cfg_dict, dataset_version="sha256:...")
    ...
    optimizer.step(); scheduler.step(); global_step += 1          # guide §2.3: save after the update
    if global_step % save_every == 0:
        writer.save(global_step, model=model, optimizer=optimizer, scheduler=scheduler, scaler=scaler,
                    epoch=epoch, batch_pos=pos + 1, data_seed=data_seed,
                    sampler_state={"epoch": epoch, "position": pos + 1, "seed": data_seed})

    path = load_latest("runs/exp1")        # on resume: the newest checkpoint that verifies, or an error

"The guide" is the recovery guide (模型检查点与训练恢复：状态、随机数、分片、容错和一致性); section numbers
below are its headings (一 = §1, 六 = §6, ...). What one save produces::

    run_dir/
    ├── checkpoint-0000300/          one folder per save, never overwritten in place (§8.3)
    │   ├── model.pt                 rank 0: model.state_dict()                         (§2.1)
    │   ├── optimizer.pt             rank 0: optimizer, scheduler, scaler, counters     (§2.2, §2.3, §3.2, §5)
    │   ├── rng-rank-0.pt ...        every rank: its own RNG states and sampler cursor  (§4.1, §4.2, §4.4)
    │   ├── manifest.json            sizes and SHA-256 of every file above, run metadata (§6.3)
    │   └── COMPLETE                 written last: the commit marker                    (§6.2)
    ├── latest                       "checkpoint-0000300\\n", replaced atomically        (§6.2, §8.3)
    └── .tmp-checkpoint-0000400-xyz/ a save in progress (or one that died): ignored by load_latest

Each file is written into a temporary sibling directory, flushed and fsynced; the directory is renamed
to checkpoint-NNNNNNN only after COMPLETE is in it, and `latest` moves only after that rename (§6.2:
写临时目录 → 写所有分片 → 校验大小和哈希 → 写 manifest.json → 写 COMPLETE → 登记 latest).

Multi-process (DDP) use: when torch.distributed is initialised, every rank calls save() with the same
step; rank 0 picks the temporary directory and broadcasts its name, each rank writes rng-rank-{rank}.pt,
all ranks meet at a barrier, then rank 0 writes model.pt, optimizer.pt, the manifest and COMPLETE and
commits (§7.1: only rank 0 writes the replicated model and optimizer, every rank writes its local state;
§10.2: every rank goes through the same phases). The run directory must be on a filesystem shared by all
ranks. In a single process the other ranks can be simulated with save_rank_state().
"""
import hashlib
import json
import os
import random
import shutil
import tempfile

import numpy as np
import torch

__all__ = ["CheckpointWriter", "CheckpointError", "load_latest", "verify_checkpoint", "read_manifest",
           "capture_rng", "restore_rng", "checkpoint_name", "MANIFEST_FORMAT_VERSION", "STATE_FORMAT_VERSION",
           "UpdateProbe", "SupervisedLoss", "probe_dir_for", "tensor_digest", "PROBE_FORMAT_VERSION",
           "file_table", "manifest_dict", "commit_manifest"]

MANIFEST_FORMAT_VERSION = 3   # manifest.json "format_version" (guide §6.3)
STATE_FORMAT_VERSION = 1      # optimizer.pt "format_version" (guide §5, save_state)
LATEST = "latest"
COMPLETE = "COMPLETE"
MANIFEST = "manifest.json"
_RESERVED_MANIFEST_KEYS = {"format_version", "global_step", "epoch", "world_size", "model_arch", "config_sha256",
                           "dataset_version", "code_commit", "torch_version", "files"}


class CheckpointError(RuntimeError):
    """A checkpoint that must not be resumed from, or a save that cannot be committed."""


def checkpoint_name(step):
    """checkpoint-NNNNNNN: zero-padded so names sort by step (guide §6.2 checkpoint-0001000/)."""
    return "checkpoint-%07d" % int(step)


def capture_rng():
    """This process's generators (guide §4.1): Python random, NumPy's global RandomState, the PyTorch CPU
    generator and, where CUDA is available, every device's generator ("cuda": a list, one per device)."""
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state):
    """Inverse of capture_rng(). Call it before anything draws a random number (guide §4.1: 恢复时必须在随机
    操作发生前调用). Accepts the guide's §5 key names ("torch_cpu", "torch_cuda_all") as well."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"] if "torch" in state else state["torch_cpu"])
    cuda = state.get("cuda", state.get("torch_cuda_all"))
    if cuda is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(cuda)


def _state_dict(obj):
    """obj.state_dict() for modules, optimizers, schedulers and scalers; a plain dict (or None) as is."""
    if obj is None or isinstance(obj, dict):
        return obj
    return obj.state_dict()


def _param_group_names(model, optimizer):
    """The name of every parameter of every param group, in the groups' order: optimizer.state_dict()
    numbers parameters by position only, and with several groups (decay / no decay) nothing else in the
    files says which index is which parameter. None when the optimizer or model is a plain dict or a group
    holds a tensor that is not one of the model's named parameters."""
    if not hasattr(optimizer, "param_groups") or not hasattr(model, "named_parameters"):
        return None
    names = {id(p): n for n, p in model.named_parameters()}
    out = []
    for g in optimizer.param_groups:
        if not all(id(p) in names for p in g["params"]):
            return None
        out.append([names[id(p)] for p in g["params"]])
    return out


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_file(path, write):
    """Guide §6.2 单文件写入: write, flush, fsync. write(f) gets the open binary file."""
    with open(path, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())


def _torch_save(obj, path):
    _write_file(path, lambda f: torch.save(obj, f))


def _canonical_sha256(config):
    if config is None:
        return None
    if isinstance(config, (bytes, bytearray)):
        data = bytes(config)
    elif isinstance(config, str):
        data = config.encode("utf-8")
    else:
        data = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def _dist():
    """torch.distributed when a process group is up, else None."""
    try:
        import torch.distributed as dist
    except ImportError:  # pragma: no cover - stripped builds
        return None
    if dist.is_available() and dist.is_initialized():
        return dist
    return None


def file_table(checkpoint_dir, names=None):
    """{relative name: {"bytes", "sha256"}} of the files in checkpoint_dir, read back from disk (guide §6.2
    校验大小和哈希). names: the files to list (relative, "/"-separated); default every regular file below
    checkpoint_dir, recursively, except manifest.json and COMPLETE (what `ckpt audit` expects listed)."""
    if names is None:
        names = []
        for root, dirs, fnames in os.walk(checkpoint_dir):
            dirs.sort()
            for n in fnames:
                rel = os.path.relpath(os.path.join(root, n), checkpoint_dir).replace(os.sep, "/")
                if rel not in (MANIFEST, COMPLETE):
                    names.append(rel)
    files = {}
    for name in sorted(names):
        p = os.path.join(checkpoint_dir, name)
        files[name] = {"bytes": os.path.getsize(p), "sha256": _sha256(p)}
    return files


def manifest_dict(global_step, *, epoch=None, world_size=None, model_arch=None, config_sha256=None,
                  dataset_version=None, code_commit=None, extra=None, files):
    """manifest.json's content (guide §6.3), keys in CheckpointWriter's order. world_size=None leaves it out
    (a layout whose per-rank RNG files are not named rng-rank-N.pt / rng_state_N.pth: `ckpt audit` checks
    one RNG file per rank of world_size by those names); code_commit=None leaves it out."""
    if extra and _RESERVED_MANIFEST_KEYS & set(extra):
        raise ValueError("extra_manifest may not set %s" % sorted(_RESERVED_MANIFEST_KEYS & set(extra)))
    manifest = {"format_version": MANIFEST_FORMAT_VERSION, "global_step": global_step, "epoch": epoch}
    if world_size is not None:
        manifest["world_size"] = world_size
    manifest.update({"model_arch": model_arch, "config_sha256": config_sha256, "dataset_version": dataset_version})
    if code_commit is not None:
        manifest["code_commit"] = code_commit
    manifest["torch_version"] = torch.__version__
    if torch.version.cuda:
        manifest["cuda_version"] = torch.version.cuda
    for k, v in (extra or {}).items():
        manifest[k] = v
    manifest["files"] = files
    return manifest


def commit_manifest(checkpoint_dir, manifest):
    """Writes manifest.json, then COMPLETE last, each flushed and fsynced, then fsyncs the directory (guide
    §6.2: 写 manifest.json → 写 COMPLETE). A framework's own folder (the Trainer's checkpoint-N, accelerate's
    save_state folder) is committed in place: there the framework already wrote its files."""
    text = json.dumps(manifest, indent=2) + "\n"
    _write_file(os.path.join(checkpoint_dir, MANIFEST), lambda f: f.write(text.encode("utf-8")))
    _write_file(os.path.join(checkpoint_dir, COMPLETE), lambda f: None)
    _fsync_dir(checkpoint_dir)


class CheckpointWriter:
    """Commits consistent checkpoints into run_dir (guide §6 一致性检查点).

    rank / world_size: this process's rank and the job's world size (guide §4.4, §7.1). With
    torch.distributed initialised they default to the process group's values.
    model_arch, config, dataset_version, code_commit: environment metadata for manifest.json (guide §1 E_t,
    §6.3, §9.1). config may be a dict (hashed as sorted compact JSON), a str or bytes; only its SHA-256 is
    stored. code_commit is optional and left out of the manifest when None.
    overwrite: what to do when checkpoint-NNNNNNN already exists (a re-save after a resume from an older
    step). False raises CheckpointError; True replaces it, but only after the new one is complete (§8.3).
    """

    def __init__(self, run_dir, rank=0, world_size=1, *, model_arch=None, config=None, dataset_version=None,
                 code_commit=None, overwrite=False):
        dist = _dist()
        if dist is not None:
            rank, world_size = dist.get_rank(), dist.get_world_size()
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError("rank %r is not in world_size %r" % (rank, world_size))
        self.run_dir = os.path.abspath(run_dir)
        self.rank = rank
        self.world_size = world_size
        self.model_arch = model_arch
        self.config_sha256 = _canonical_sha256(config)
        self.dataset_version = dataset_version
        self.code_commit = code_commit
        self.overwrite = overwrite
        self._pending = {}  # rank -> (rng_state, sampler_state), consumed by the next save()
        self._probe_for = None  # (checkpoint dir, step, "save" | "resume"): the next update gets a probe
        self._session = None    # the probe being recorded over several updates
        os.makedirs(self.run_dir, exist_ok=True)

    # -- per-rank state ---------------------------------------------------------------------------

    def save_rank_state(self, rank, rng_state, sampler_state=None):
        """Stage rank `rank`'s RNG states and sampler cursor for the next save() (guide §4.4: 每个 rank
        写入自己的文件). A real DDP job does not need this: each process's save() captures its own
        generators. A single process that simulates several ranks (switching generator states per rank)
        calls it once per rank before save(). rng_state is a capture_rng() dict; sampler_state at least
        {"epoch", "position", "seed"} (guide §4.2: epoch alone does not say how far the epoch got)."""
        if not 0 <= rank < self.world_size:
            raise ValueError("rank %r is not in world_size %r" % (rank, self.world_size))
        if not {"python", "numpy", "torch"} <= set(rng_state):
            raise ValueError("rng_state needs python, numpy and torch states (capture_rng())")
        self._pending[rank] = (rng_state, sampler_state)

    def _rank_payload(self, rank, sampler_state):
        rng, sampler = self._pending.pop(rank, (None, None))
        if rng is None:
            if rank != self.rank:
                raise CheckpointError("no RNG state for rank %d: call save_rank_state(%d, ...) before save()"
                                      % (rank, rank))
            rng = capture_rng()
        if sampler is None and rank == self.rank:
            sampler = sampler_state
        return {"rank": rank, "world_size": self.world_size, "rng": rng, "sampler": sampler}

    # -- the save ---------------------------------------------------------------------------------

    def save(self, step, *, model, optimizer, scheduler=None, scaler=None, epoch, batch_pos, data_seed,
             sampler_state=None, extra_manifest=None):
        """Commit the state after `step` completed optimizer updates; returns the checkpoint's path.

        Call it after optimizer.step(), scheduler.step() and global_step += 1, on an accumulation boundary,
        so that every part belongs to the same update boundary (guide §2.3, §3.1, §6.1). batch_pos is the
        next batch not yet consumed (guide §5: batch_pos 指向下一个尚未消费的 batch). model, optimizer,
        scheduler and scaler may be objects with state_dict() or already-made dicts; a CPU GradScaler with
        enabled=False gives {} (formats.md §4.6), None is stored as None.

        Steps, in the guide's order (§6.2):
          1. a temporary sibling directory .tmp-checkpoint-NNNNNNN-<random> (rank 0 names it);
          2. every rank writes rng-rank-{rank}.pt: {"rank", "world_size", "rng", "sampler"} (§4.4);
          3. rank 0 writes model.pt (§2.1) and optimizer.pt — the save_state dict of §5 without the model and
             RNG: {"optimizer", "scheduler", "scaler", "epoch", "batch_pos", "global_step", "data_seed",
             "format_version": 1, "torch_version"} (§2.2, §2.3, §3.2), and "optimizer_param_names": each
             param group's parameter names in its order (what the state dict's indices stand for);
          4. each file is flushed and fsynced as it is written, then re-read from disk for its size and
             SHA-256 (校验大小和哈希) and every rank's RNG file is required to be there;
          5. manifest.json (§6.3), fsynced;
          6. COMPLETE, last, and the directory fsynced;
          7. rename to checkpoint-NNNNNNN and fsync run_dir (os.rename is atomic within one filesystem, §6.2);
          8. `latest` replaced: latest.tmp written, fsynced, os.replace'd (§6.2 登记 latest, §8.3 latest 只是
             一个指针). Older checkpoints are kept; pruning them is a retention policy's job (§8.3).
        A failure before step 7 leaves the previous checkpoint and `latest` untouched; the temporary
        directory is removed where possible (a killed process leaves it behind: load_latest ignores it).
        """
        if extra_manifest and _RESERVED_MANIFEST_KEYS & set(extra_manifest):
            raise ValueError("extra_manifest may not set %s" % sorted(_RESERVED_MANIFEST_KEYS & set(extra_manifest)))
        step = int(step)
        dist = _dist()
        final = os.path.join(self.run_dir, checkpoint_name(step))
        if dist is None and self.rank != 0:
            raise CheckpointError("without torch.distributed only rank 0 saves; simulate other ranks with "
                                  "save_rank_state()")
        # 1. temporary directory, named by rank 0 (its refusal reaches every rank, so none waits alone)
        tmp, error = None, None
        if self.rank == 0:
            if os.path.exists(final) and not self.overwrite:
                error = "%s already exists (CheckpointWriter(overwrite=True) replaces it)" % final
            else:
                tmp = tempfile.mkdtemp(prefix=".tmp-" + checkpoint_name(step) + "-", dir=self.run_dir)
                umask = os.umask(0o022)
                os.umask(umask)
                os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it 0700; let it read like any other folder
        if dist is not None:
            box = [tmp, error]
            dist.broadcast_object_list(box, src=0)
            tmp, error = box
        if error is not None:
            raise CheckpointError(error)
        try:
            # 2. this rank's RNG file (and, in one process, the simulated ranks' files)
            ranks = [self.rank] if dist is not None else list(range(self.world_size))
            for r in ranks:
                _torch_save(self._rank_payload(r, sampler_state), os.path.join(tmp, "rng-rank-%d.pt" % r))
            if dist is not None:
                dist.barrier()  # every rank's file is on disk before rank 0 commits
            if self.rank != 0:
                if dist is not None:
                    dist.barrier()  # rank 0 committed (or failed: it raises; see §10.2 on error propagation)
                self._probe_for = (final, step, "save")
                self._session = None
                return final

            # 3. model and training state
            _torch_save(_state_dict(model), os.path.join(tmp, "model.pt"))
            state = {"optimizer": _state_dict(optimizer), "scheduler": _state_dict(scheduler),
                     "scaler": _state_dict(scaler), "epoch": epoch, "batch_pos": batch_pos,
                     "global_step": step, "data_seed": data_seed, "format_version": STATE_FORMAT_VERSION,
                     "torch_version": torch.__version__}
            names = _param_group_names(model, optimizer)
            if names is not None:
                state["optimizer_param_names"] = names
            _torch_save(state, os.path.join(tmp, "optimizer.pt"))

            # 4. sizes and hashes read back from disk; every rank present
            names = sorted(os.listdir(tmp))
            missing = [r for r in range(self.world_size) if "rng-rank-%d.pt" % r not in names]
            if missing:
                raise CheckpointError("no RNG file for rank(s) %s of world_size %d" % (missing, self.world_size))
            files = file_table(tmp, names)

            # 5. manifest, 6. COMPLETE last
            manifest = manifest_dict(step, epoch=epoch, world_size=self.world_size,
                                     model_arch=self.model_arch or _arch_of(model), config_sha256=self.config_sha256,
                                     dataset_version=self.dataset_version, code_commit=self.code_commit,
                                     extra=extra_manifest, files=files)
            commit_manifest(tmp, manifest)

            # 7. publish the directory
            old = None
            if os.path.exists(final):
                old = tempfile.mkdtemp(prefix=".old-" + checkpoint_name(step) + "-", dir=self.run_dir)
                os.rename(final, os.path.join(old, "c"))
            os.rename(tmp, final)
            tmp = None
            _fsync_dir(self.run_dir)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)

            # 8. move `latest`
            latest_tmp = os.path.join(self.run_dir, LATEST + ".tmp")
            _write_file(latest_tmp, lambda f: f.write((checkpoint_name(step) + "\n").encode("ascii")))
            os.replace(latest_tmp, os.path.join(self.run_dir, LATEST))
            _fsync_dir(self.run_dir)
        finally:
            if tmp is not None and self.rank == 0:
                shutil.rmtree(tmp, ignore_errors=True)
        if dist is not None:
            dist.barrier()
        self._probe_for = (final, step, "save")
        self._session = None
        return final

    # -- probes (ckpt-validate) -------------------------------------------------------------------

    def arm_probe(self, checkpoint_dir, step, recorded_by="resume"):
        """Record the next update as a probe of checkpoint_dir. save() arms this itself ("save": the
        original run's next update); call it after a resume from checkpoint_dir ("resume": the resumed run's
        first update), so that `ckpt validate` can tell whether the resume restored everything (guide §9.3)."""
        self._probe_for = (os.path.abspath(checkpoint_dir), int(step), recorded_by)
        self._session = None

    def probe(self, updates=1, **kwargs):
        """The one call a training loop adds around its update::

            with writer.probe(module=loss_module, model=model, optimizer=optimizer, scheduler=scheduler,
                              scaler=scaler, cursor={"epoch": epoch, "batch_pos": pos}, updates=3) as probe:
                optimizer.zero_grad()
                loss = loss_module(x, y); probe.batch(x, y, loss=loss)
                loss.backward(); probe.update(grad_norm=clip_grad_norm_(model.parameters(), 1.0))
                optimizer.step(); scheduler.step()

        Right after save() (or arm_probe()) it records the next `updates` consecutive updates (default 1)
        into probes/after-<checkpoint>/ beside the checkpoint (UpdateProbe); on every other update it does
        nothing and costs nothing. Several updates show drift one update hides (random numbers drawn
        between updates, a scheduler stepped per epoch, an accumulation boundary); `updates` is read on
        the first recorded update. kwargs are UpdateProbe's."""
        if self._session is not None:
            session = self._session
        elif self._probe_for is not None:
            checkpoint_dir, step, recorded_by = self._probe_for
            self._probe_for = None
            session = _ProbeSession(self, checkpoint_dir, step, recorded_by, int(updates))
            self._session = session
        else:
            return _NoProbe()
        kwargs.setdefault("world_size", self.world_size)
        kwargs.setdefault("rank", self.rank)
        return UpdateProbe(session.checkpoint_dir, step=session.step + len(session.records),
                           recorded_by=session.recorded_by, session=session, **kwargs)


def _arch_of(model):
    if isinstance(model, torch.nn.Module):
        return type(model).__name__
    return None


# -- reading back ------------------------------------------------------------------------------------

def read_manifest(checkpoint_dir):
    with open(os.path.join(checkpoint_dir, MANIFEST), "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def verify_checkpoint(checkpoint_dir, *, hashes=True):
    """Problems that make checkpoint_dir unfit to resume from; [] when it verifies (guide §6.2: 恢复程序只接受
    存在 COMPLETE 且 manifest 校验通过的目录). Checked: COMPLETE present; manifest.json readable with
    format_version 3 and a files table; every listed file present with the listed size and SHA-256
    (hashes=False checks sizes only); an RNG file listed for every rank of world_size (§4.4); model.pt
    and optimizer.pt listed. The hash detects truncation and corruption, not semantic errors (§6.3)."""
    problems = []
    if not os.path.isdir(checkpoint_dir):
        return ["%s is not a directory" % checkpoint_dir]
    if not os.path.isfile(os.path.join(checkpoint_dir, COMPLETE)):
        problems.append("no COMPLETE marker: the save did not finish")
    try:
        manifest = read_manifest(checkpoint_dir)
    except (OSError, ValueError) as e:
        return problems + ["manifest.json cannot be read: %s" % e]
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        return problems + ["manifest.json has no files table"]
    if manifest.get("format_version") != MANIFEST_FORMAT_VERSION:
        problems.append("manifest format_version %r, expected %d" % (manifest.get("format_version"),
                                                                      MANIFEST_FORMAT_VERSION))
    files = manifest["files"]
    for name, entry in sorted(files.items()):
        p = os.path.join(checkpoint_dir, name)
        if os.path.isabs(name) or ".." in name.split("/") or not isinstance(entry, dict):
            problems.append("manifest entry %r is not a file inside the checkpoint" % name)
            continue
        if not os.path.isfile(p):
            problems.append("%s is listed in the manifest but missing" % name)
            continue
        size = os.path.getsize(p)
        if size != entry.get("bytes"):
            problems.append("%s has %d bytes, the manifest says %r" % (name, size, entry.get("bytes")))
        elif hashes and _sha256(p) != entry.get("sha256"):
            problems.append("%s does not match its SHA-256 in the manifest" % name)
    ws = manifest.get("world_size")
    if isinstance(ws, int) and ws >= 1:
        absent = [r for r in range(ws) if "rng-rank-%d.pt" % r not in files]
        if absent:
            problems.append("manifest lists no RNG file for rank(s) %s of world_size %d" % (absent, ws))
    for name in ("model.pt", "optimizer.pt"):
        if name not in files:
            problems.append("manifest does not list %s" % name)
    return problems


def _step_of(name):
    if name.startswith("checkpoint-") and name[len("checkpoint-"):].isdigit():
        return int(name[len("checkpoint-"):])
    return None


def load_latest(run_dir, *, fallback=True, hashes=True):
    """The checkpoint directory a resume should load: the one `latest` names, after verify_checkpoint().

    `latest` must hold a bare checkpoint-NNNNNNN name (no path). If it is missing, unreadable, names
    something else, or its checkpoint does not verify, fallback=True walks the other checkpoint-* folders
    newest first and returns the newest that verifies (guide §8.3: 若最新版本损坏，应能回退到上一个 manifest
    校验通过的版本); fallback=False raises CheckpointError instead. Temporary .tmp-checkpoint-* folders are
    never considered. Raises CheckpointError when nothing verifies, listing why each candidate failed.
    Loading the files is left to the caller: torch.load only trusted checkpoints (§5, §11.2)."""
    run_dir = os.path.abspath(run_dir)
    reasons = []
    tried = set()
    latest_path = os.path.join(run_dir, LATEST)
    try:
        with open(latest_path, "rb") as f:
            name = f.read(4096).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        name = None
        reasons.append("latest: %s" % e)
    if name is not None:
        if _step_of(name) is None:
            reasons.append("latest: %r is not a checkpoint-NNNNNNN name" % name)
        else:
            tried.add(name)
            path = os.path.join(run_dir, name)
            problems = verify_checkpoint(path, hashes=hashes)
            if not problems:
                return path
            reasons.append("%s (latest): %s" % (name, "; ".join(problems)))
    if fallback:
        candidates = sorted((n for n in os.listdir(run_dir) if _step_of(n) is not None and n not in tried),
                            key=_step_of, reverse=True)
        for n in candidates:
            path = os.path.join(run_dir, n)
            problems = verify_checkpoint(path, hashes=hashes)
            if not problems:
                return path
            reasons.append("%s: %s" % (n, "; ".join(problems)))
    raise CheckpointError("no checkpoint in %s verifies:\n  %s" % (run_dir, "\n  ".join(reasons or ["none found"])))


# -- probes: the next update, recorded for ckpt-validate ---------------------------------------------

PROBE_FORMAT_VERSION = 1
PROBES_DIR = "probes"


def probe_dir_for(checkpoint_dir):
    """Where the probe of checkpoint_dir lives: <run_dir>/probes/after-<checkpoint name>/. Beside the checkpoint,
    never inside it: a committed checkpoint is not written to again (§6.2), and its manifest stays exact."""
    checkpoint_dir = os.path.abspath(checkpoint_dir)
    return os.path.join(os.path.dirname(checkpoint_dir), PROBES_DIR, "after-" + os.path.basename(checkpoint_dir))


def tensor_digest(t):
    """{"dtype", "shape", "sum", "l2", "sha256"} of a tensor: sum and L2 norm in float64, SHA-256 of its elements'
    bytes in row-major little-endian order (what ckpt-validate computes from the replayed tensor)."""
    t = t.detach().cpu().contiguous()
    flat = t.reshape(-1)
    raw = flat.view(torch.uint8) if flat.numel() and flat.element_size() > 1 else flat
    data = raw.numpy().tobytes() if raw.dtype != torch.bool else flat.to(torch.uint8).numpy().tobytes()
    d = t.double() if not t.is_complex() else t.abs().double()
    return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
            "sum": d.sum().item(), "l2": d.norm().item(), "sha256": hashlib.sha256(data).hexdigest()}


class SupervisedLoss(torch.nn.Module):
    """forward(x, y) = loss_fn(model(x), y): the TorchScript-able loss module a probe needs when the model's
    own forward does not return the loss. Its state_dict is the model's under the prefix "model." (the
    validator finds the prefix itself)."""

    def __init__(self, model, loss_fn):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, x, y):
        return self.loss_fn(self.model(x), y)


def _script(module):
    if isinstance(module, torch.jit.ScriptModule):
        return module
    return torch.jit.script(module)


def _state_prefix(module_keys, model_keys):
    """The prefix under which the model's state_dict sits inside the loss module ("" or "model.")."""
    keys = set(module_keys)
    if set(model_keys) <= keys:
        return ""
    first = next(iter(model_keys), None)
    for k in module_keys:
        if first is not None and k.endswith("." + first):
            prefix = k[:-len(first)]
            if all(prefix + m in keys for m in model_keys):
                return prefix
    raise ValueError("the probe module does not hold the model's parameters (no prefix maps every model key)")


def _number(v):
    if isinstance(v, torch.Tensor) and v.numel() == 1:
        return v.item()
    if isinstance(v, (bool, int, float)) or v is None:
        return v
    if isinstance(v, (list, tuple)) and all(isinstance(x, (int, float)) for x in v):
        return list(v)
    return repr(v)


class _NoProbe:
    """What writer.probe() returns when no checkpoint waits for a probe: every call is a no-op."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def batch(self, *inputs, **kwargs):
        pass

    def update(self, **kwargs):
        pass


class UpdateProbe:
    """Records one optimizer update (the update right after checkpoint_dir was saved, or right after a resume
    from it) so that ckpt-validate can restore the checkpoint, replay the update with LibTorch and compare,
    component by component in the recovery guide's diagnosis order (§9.3, §10.1).

    Use as a context manager around the whole update (see CheckpointWriter.probe()). On entry it takes the
    state the update starts from: parameter and optimizer-moment digests, optimizer step counts and
    hyperparameters, the LR each group will use, the scheduler position, the scaler state and scale, every
    rank's RNG states. Inside, the loop reports each micro-batch with batch(*inputs, loss=...) — the exact
    tensors handed to the module, after augmentation — and the update's results with update(grad_norm=...).
    On a clean exit it takes the end state (digests, scheduler position, RNG) and writes, atomically,
    probes/after-<checkpoint>/ (probe_dir_for):

        probe.json              what was recorded (format "ckpt-probe", version PROBE_FORMAT_VERSION)
        module.pt               the loss module as TorchScript: the one file ckpt-validate loads with LibTorch
        batch-rank-N.pt         rank N's micro-batches: [{"inputs": [tensor, ...]}, ...]
        probe-rng-rank-N.pt     rank N's generators before and after the update: {"before": capture_rng(), "after": ...}

    module: what the validator calls per micro-batch — a TorchScript module (or a module torch.jit.script
    accepts) holding the model's parameters; its `training_loss(*inputs)` method when it has one, otherwise
    its forward(*inputs), must return the micro-batch's loss. SupervisedLoss(model, loss_fn) is the usual one.
    The loss of each micro-batch is divided by grad_divisor before backward (default: the number of
    micro-batches, the mean that DDP's all-reduce and gradient accumulation produce).
    cursor: the data cursor at the start of the update, named as the checkpoint names it ({"epoch",
    "batch_pos"}); rank_cursors: per rank ({rank: {"sampler.epoch", "sampler.position"}}).
    max_grad_norm: the clip_grad_norm_ threshold the loop applies (None: no clipping).
    Simulated ranks (several ranks in one process, generators switched per rank) pass rng_before/rng_after
    to batch(); otherwise this process's generators are captured on entry and exit."""

    def __init__(self, checkpoint_dir, *, step, module, model, optimizer, scheduler=None, scaler=None, cursor=None,
                 rank_cursors=None, max_grad_norm=None, grad_divisor=None, recorded_by="save", world_size=1, rank=0,
                 session=None):
        self.checkpoint_dir = os.path.abspath(checkpoint_dir)
        self.step = int(step)
        self.module = _script(module)
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.scaler = scaler
        self.cursor = dict(cursor or {})
        self.rank_cursors = {int(r): dict(c) for r, c in (rank_cursors or {}).items()}
        self.max_grad_norm = max_grad_norm
        self.grad_divisor = grad_divisor
        self.recorded_by = recorded_by
        self.world_size = world_size
        self.rank = rank
        self.session = session if session is not None else _ProbeSession(None, self.checkpoint_dir, self.step, recorded_by, 1)
        self._micro = []          # (rank, inputs, loss)
        self._rng = {}            # rank -> {"before", "after"}
        self._result = {}
        names = {id(p): n for n, p in model.named_parameters()}
        self._params = [(names[id(p)], p) for g in optimizer.param_groups for p in g["params"] if id(p) in names]
        if len(self._params) != sum(len(g["params"]) for g in optimizer.param_groups):
            raise ValueError("every optimizer parameter must be a parameter of `model` (named_parameters)")

    # -- what the loop reports -----------------------------------------------------------------------

    def batch(self, *inputs, loss, rank=None, rng_before=None, rng_after=None):
        """One micro-batch: the tensors given to the module and the loss it returned (before any division)."""
        rank = self.rank if rank is None else int(rank)
        self._micro.append((rank, [t.detach().cpu().clone() for t in inputs], float(loss)))
        if rng_before is not None:
            self._rng.setdefault(rank, {})["before"] = rng_before
        if rng_after is not None:
            self._rng.setdefault(rank, {})["after"] = rng_after

    def update(self, *, grad_norm=None, found_inf=False):
        """grad_norm: the total gradient norm before clipping (what clip_grad_norm_ returns), None if not
        computed; found_inf: the scaler found inf/nan gradients and skipped optimizer.step()."""
        self._result = {"grad_norm": None if grad_norm is None else float(grad_norm), "found_inf": bool(found_inf)}

    # -- before and after ----------------------------------------------------------------------------

    def _optimizer_state(self):
        out = {}
        for name, p in self._params:
            st = self.optimizer.state.get(p, {})
            entry = {}
            for k, v in st.items():
                if isinstance(v, torch.Tensor) and not (k == "step" and v.numel() == 1):
                    entry[k] = tensor_digest(v)
                else:
                    entry[k] = _number(v)
            out[name] = entry
        return out

    def _groups(self):
        names = {id(p): n for n, p in self._params}
        groups = []
        for g in self.optimizer.param_groups:
            entry = {k: _number(v) for k, v in g.items() if k != "params"}
            entry["params"] = [names[id(p)] for p in g["params"]]
            groups.append(entry)
        return groups

    def _scaler_state(self):
        if self.scaler is None:
            return None, None
        sd = self.scaler.state_dict()
        if not sd:  # GradScaler(enabled=False): no loss scaling
            return None, None
        return {k: _number(v) for k, v in sd.items()}, float(self.scaler.get_scale())

    def __enter__(self):
        self._before = {n: tensor_digest(t) for n, t in self.model.state_dict().items()}
        self._opt_before = self._optimizer_state()
        self._groups_before = self._groups()
        self._lr = [float(g["lr"]) for g in self.optimizer.param_groups]
        self._sched_before = getattr(self.scheduler, "last_epoch", None)
        self._scaler_before, self._scale = self._scaler_state()
        self._own_rng_before = capture_rng()
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.session.abandon()
            return False  # the update failed: no probe
        if not self._micro:
            raise CheckpointError("UpdateProbe: no batch() was recorded inside the update")
        own_after = capture_rng()
        dist = _dist()
        ranks = sorted({r for r, _, _ in self._micro})
        for r in ranks:
            states = self._rng.setdefault(r, {})
            if r == self.rank:
                states.setdefault("before", self._own_rng_before)
                states.setdefault("after", own_after)
            if set(states) != {"before", "after"}:
                raise CheckpointError("UpdateProbe: rank %d's micro-batches need rng_before and rng_after" % r)
        after = {n: tensor_digest(t) for n, t in self.model.state_dict().items()}
        opt_after = self._optimizer_state()
        sched_after = getattr(self.scheduler, "last_epoch", None)
        self.session.add(self, self._record(ranks, after, opt_after, sched_after, dist), dist)
        return False

    # -- one update's record -----------------------------------------------------------------------------

    def _record(self, ranks, after, opt_after, sched_after, dist):
        """This update's part of probe.json and this process's files: {"json": {...}, "files": {name: obj}}.
        Update 1 uses the version-1 names (batch-rank-N.pt, probe-rng-rank-N.pt); update k >= 2 adds
        -update-k."""
        k = len(self.session.records) + 1
        suffix = "" if k == 1 else "-update-%d" % k
        micro = [(r, inputs, loss) for r, inputs, loss in self._micro]
        files = {}
        for r in ranks:
            mine = [inputs for rr, inputs, _ in micro if rr == r]
            files["batch-rank-%d%s.pt" % (r, suffix)] = [{"inputs": inputs} for inputs in mine]
            files["probe-rng-rank-%d%s.pt" % (r, suffix)] = self._rng[r]
        if dist is not None:
            gathered = [None] * dist.get_world_size()
            dist.all_gather_object(gathered, [(r, l) for r, _, l in micro])
            micro_meta = [(r, l) for part in gathered for r, l in part]
        else:
            micro_meta = [(r, l) for r, _, l in micro]
        records, counters = [], {}
        for r, loss in micro_meta:
            records.append({"rank": r, "file": "batch-rank-%d%s.pt" % (r, suffix), "index": counters.get(r, 0),
                            "loss": loss})
            counters[r] = counters.get(r, 0) + 1
        if dist is None:
            for rec in records:
                inputs = [i for rr, i, _ in micro if rr == rec["rank"]][rec["index"]]
                rec["inputs"] = [tensor_digest(t) for t in inputs]
        all_ranks = sorted({rec["rank"] for rec in records})
        record = {
            "global_step_before": self.step, "global_step": self.step + 1,
            "micro_batches": records,
            "grad_divisor": float(self.grad_divisor if self.grad_divisor is not None else len(records)),
            "max_grad_norm": self.max_grad_norm,
            "cursor": self.cursor,
            "ranks": [{"rank": r, "rng_file": "probe-rng-rank-%d%s.pt" % (r, suffix), "cursor": self.rank_cursors.get(r, {})}
                      for r in all_ranks],
            "loss": sum(l for _, l in micro_meta) / len(micro_meta),
            "grad_norm": self._result.get("grad_norm"), "found_inf": self._result.get("found_inf", False),
            "lr": self._lr, "scale": self._scale, "scaler": self._scaler_before,
            "scheduler": {"last_epoch_before": self._sched_before, "last_epoch_after": sched_after},
            "optimizer": {"type": type(self.optimizer).__name__, "groups": self._groups_before},
            "parameters": {n: {"before": self._before[n], "after": after[n]} for n in self._before},
            "optimizer_state": {n: {"before": self._opt_before[n], "after": opt_after[n]} for n, _ in self._params},
        }
        return {"json": record, "files": files}


class _ProbeSession:
    """The updates of one probe: their records are kept until the last of `updates` ends, then every rank
    writes its files into a temporary folder rank 0 names, and rank 0 writes probe.json and module.pt and
    renames the folder to probes/after-<checkpoint>/ (atomically, as before). probe.json is format version 1
    for one update; with several, version 2: update 1 as in version 1 at the top level, updates 2..K in
    "next_updates" with the same keys."""

    def __init__(self, writer, checkpoint_dir, step, recorded_by, updates):
        if updates < 1:
            raise ValueError("updates must be at least 1")
        self.writer, self.checkpoint_dir, self.step = writer, checkpoint_dir, int(step)
        self.recorded_by, self.updates = recorded_by, updates
        self.records = []
        self.files = {}

    def abandon(self):
        if self.writer is not None and self.writer._session is self:
            self.writer._session = None

    def add(self, probe, record, dist):
        self.records.append(record["json"])
        self.files.update(record["files"])
        if len(self.records) < self.updates:
            return
        self.abandon()
        self._write(probe, dist)

    def _write(self, probe, dist):
        final = probe_dir_for(self.checkpoint_dir)
        parent = os.path.dirname(final)
        tmp = None
        if probe.rank == 0:
            os.makedirs(parent, exist_ok=True)
            tmp = tempfile.mkdtemp(prefix=".tmp-" + os.path.basename(final) + "-", dir=parent)
            os.chmod(tmp, 0o755)
        if dist is not None:  # every rank writes its own batches and generators; rank 0 writes the rest
            box = [tmp]
            dist.broadcast_object_list(box, src=0)
            tmp = box[0]
        try:
            for name, obj in self.files.items():
                _torch_save(obj, os.path.join(tmp, name))
            if dist is not None:
                dist.barrier()
                if probe.rank != 0:
                    dist.barrier()
                    return
            keys_module = list(probe.module.state_dict().keys())
            prefix = _state_prefix(keys_module, list(probe.model.state_dict().keys()))
            method = "training_loss" if hasattr(probe.module, "training_loss") else "forward"
            probe.module.save(os.path.join(tmp, "module.pt"))
            first = self.records[0]
            out = {
                "format": "ckpt-probe", "format_version": PROBE_FORMAT_VERSION if self.updates == 1 else 2,
                "checkpoint": os.path.basename(self.checkpoint_dir), "recorded_by": self.recorded_by,
                "updates": self.updates,
                "torch_version": torch.__version__, "cuda_version": torch.version.cuda,
                "device": str(next(probe.model.parameters()).device), "world_size": probe.world_size,
                "module": {"file": "module.pt", "method": method, "state_dict_prefix": prefix},
            }
            out.update(first)
            if self.updates > 1:
                out["next_updates"] = self.records[1:]
            text = json.dumps(out, indent=1) + "\n"
            _write_file(os.path.join(tmp, "probe.json"), lambda f: f.write(text.encode("utf-8")))
            _fsync_dir(tmp)
            if os.path.exists(final):
                shutil.rmtree(final)
            os.rename(tmp, final)
            tmp = None
            _fsync_dir(parent)
        finally:
            if tmp is not None and probe.rank == 0:
                shutil.rmtree(tmp, ignore_errors=True)
        if dist is not None:
            dist.barrier()
