#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Rebuilds tests/fuzz/corpus/<target>/ from the sample runs and the test generators.

usage: make_seed_corpus.py TESTDATA [CORPUS_DIR]
  TESTDATA: a folder holding checkpoints/ and hostile/ as made by tests/fixtures/make_checkpoints.py
  and make_hostile.py (e.g. build/testdata after `ctest -L fixtures`). The DCP seed comes from
  ../shared/corpus when present. Seeds stay small (a few KiB each): libFuzzer mutates them faster.
"""
import hashlib
import pathlib
import shutil
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAX_SEED = 24 * 1024


def seed(target, source, out, data=None):
    data = source.read_bytes() if data is None else data
    if len(data) > MAX_SEED:
        return
    folder = out / target
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in source.name)
    (folder / f"{name}-{digest}").write_bytes(data)


def pickles_of(path):
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.endswith(".pkl"):
                yield z.read(name)


def main():
    testdata = pathlib.Path(sys.argv[1])
    out = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "tests/fuzz/corpus"
    shutil.rmtree(out, ignore_errors=True)
    ck, hostile, runs = testdata / "checkpoints", testdata / "hostile", ROOT / "sample_runs"

    zips = [runs / "tiny-mlp/checkpoint-0000050/model.pt", runs / "tiny-mlp/checkpoint-0000050/optimizer.pt",
            runs / "hf-trainer/checkpoint-20/scheduler.pt", runs / "hf-trainer/checkpoint-20/pytorch_model.bin",
            runs / "lightning/checkpoints/epoch=0-step=25.ckpt", ck / "state_dict.pt", ck / "torchscript.pt",
            ck / "bigendian.pt", ck / "full_checkpoint_deflated.pt", hostile / "billion_laughs_zip.pt",
            hostile / "zip_mixed_prefix.pt", hostile / "zip_no_data_pkl.zip", hostile / "zip_truncated_half.pt"]
    for z in zips:
        seed("zip", z, out)
        if zipfile.is_zipfile(z):
            for i, pkl in enumerate(pickles_of(z)):
                seed("pickle", pathlib.Path(f"{z.name}.{i}.pkl"), out, pkl)
    for p in ["plain_p2.pkl", "plain_p5.pkl"]:
        seed("pickle", ck / p, out)
    for p in sorted(hostile.glob("*.pkl")):
        seed("pickle", p, out)

    for p in ["model.safetensors", "sharded-00001-of-00002.safetensors", "sharded.safetensors.index.json"]:
        seed("safetensors", ck / p, out)

    dcp = ROOT.parent / "shared/corpus/Lightning-AI__pytorch-lightning@0f916ea4/dcp-2rank/.metadata"
    if dcp.exists():
        seed("dcp_metadata", pathlib.Path("dcp-2rank.metadata"), out, dcp.read_bytes())

    for run in ["tiny-mlp/checkpoint-0000050", "ddp4-mlp/checkpoint-0000100", "broken/hash-mismatch/checkpoint-0000200"]:
        seed("manifest", pathlib.Path(run.replace("/", "_") + ".manifest.json"), out,
             (runs / run / "manifest.json").read_bytes())
    seed("manifest", pathlib.Path("index.json"), out, (ck / "sharded.safetensors.index.json").read_bytes())

    for p in ["state_dict_legacy.pt", "dtypes_legacy.pt", "views_legacy.pt", "full_checkpoint_legacy_p4.pt"]:
        seed("legacy", ck / p, out)
    for p in sorted(hostile.glob("legacy_*.pt")):
        seed("legacy", p, out)


if __name__ == "__main__":
    main()
