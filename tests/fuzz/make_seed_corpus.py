#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Rebuilds tests/fuzz/corpus/<target>/ from the sample runs and the test generators.

usage: make_seed_corpus.py TESTDATA [CORPUS_DIR]
  TESTDATA: a folder holding checkpoints/ and hostile/ as made by tests/fixtures/make_checkpoints.py
  and make_hostile.py (e.g. build/testdata after `ctest -L fixtures`). The DCP seed comes from
  ../shared/corpus when present. Seeds stay small (a few KiB each): libFuzzer mutates them faster.
  The tar, yaml and tokenizer seeds come from TESTDATA's nemo_runs/ and model_folders/ (the fixtures
  generators' output) and from small archives tarfile writes here in each of its formats.
"""
import hashlib
import io
import tarfile
import pathlib
import shutil
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAX_SEED = 24 * 1024
MAX_ARCHIVE_SEED = 64 * 1024  # a real .nemo: its headers sit between the members' data


def seed(target, source, out, data=None, limit=MAX_SEED):
    data = source.read_bytes() if data is None else data
    if len(data) > limit:
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
    # Only the targets seeded here: corpus/pickle_roundtrip/ holds hand-written recipes.
    for target in ("zip", "pickle", "safetensors", "dcp_metadata", "manifest", "legacy", "tar", "yaml", "tokenizer"):
        shutil.rmtree(out / target, ignore_errors=True)
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

    newer_parsers(testdata, out)


def small_tar(fmt, compression=""):
    """A .nemo-like archive of a few hundred bytes in `fmt`: a directory, a YAML config, a member with
    a name past ustar's 100 bytes (GNU 'L' or pax 'path'), an empty one and a prefix-field name."""
    buffer = io.BytesIO()

    def add(tar, name, data=None, kind=tarfile.REGTYPE):
        info = tarfile.TarInfo(name)
        info.type, info.mtime, info.mode = kind, 1700000000, 0o644
        if data is not None:
            info.size = len(data)
        tar.addfile(info, io.BytesIO(data) if data is not None else None)

    with tarfile.open(fileobj=buffer, mode="w:", format=fmt) as tar:
        add(tar, ".", kind=tarfile.DIRTYPE)
        add(tar, "./model_config.yaml", b"num_layers: 2\nhidden_size: 64\n")
        add(tar, "./model_weights.ckpt", bytes(range(64)))
        add(tar, "./empty", b"")
        if fmt != tarfile.USTAR_FORMAT:
            add(tar, "./" + "d" * 110 + "/tokenizer.model", b"x" * 16)
        add(tar, "./" + "p" * 60 + "/" + "n" * 60, b"prefix and name")
    if compression:  # gzip with a fixed mtime, so the seed is the same file every time
        import bz2, gzip, lzma
        data = buffer.getvalue()
        return {"gz": lambda: gzip.compress(data, mtime=0), "bz2": lambda: bz2.compress(data),
                "xz": lambda: lzma.compress(data)}[compression]()
    # tarfile pads to 20 blocks; one end-of-archive block is enough, and smaller seeds mutate faster
    data = buffer.getvalue().rstrip(b"\0")
    return data + bytes(-len(data) % 512 + 512)


def newer_parsers(testdata, out):
    """Seeds of the tar, yaml and tokenizer targets."""
    nemo = testdata / "nemo_runs"
    for name, fmt in [("ustar", tarfile.USTAR_FORMAT), ("gnu", tarfile.GNU_FORMAT), ("pax", tarfile.PAX_FORMAT)]:
        seed("tar", pathlib.Path(f"small_{name}.tar"), out, small_tar(fmt))
    for compression in ["gz", "bz2", "xz"]:
        seed("tar", pathlib.Path(f"small_ustar.tar.{compression}"), out, small_tar(tarfile.USTAR_FORMAT, compression))
    for archive in ["megatron_gpt_tiny.nemo", "megatron_gpt_tiny_gz.nemo"]:
        seed("tar", nemo / "nemo-archive" / archive, out, limit=MAX_ARCHIVE_SEED)

    with tarfile.open(nemo / "nemo-archive/megatron_gpt_tiny.nemo") as tar:
        seed("yaml", pathlib.Path("model_config.yaml"), out, tar.extractfile("./model_config.yaml").read())
    for model_yaml in sorted(nemo.glob("nemo2-gpt/**/context/model.yaml"))[:1]:
        seed("yaml", model_yaml, out)
    samples = {
        "scalars.yaml": "a: ~\nb: null\nc: yes\nd: Off\ne: 0x1F\nf: 0o17\ng: -12_000\nh: 1.5\ni: .inf\nj: -.Inf\nk: .nan\n"
                        "l: '12'\nm: \"true\"\nn: 012\no: 3.\np: +7\nq: hello world\nr: 1.0e+3\ns: 0b101\nt:\n"
                        "u: 18446744073709551615\nv: -9223372036854775809\nw: 1e-4\n",
        "styles.yaml": "list: [1, two, {three: 3}]\nmap: {x: 1, y: [a, b]}\nblock: |\n  line one\n  line two\n"
                       "folded: >\n  one\n  two\nnested:\n  - name: a\n    vals: [1, 2]\n  - name: b\n    vals: []\n"
                       "? complex key\n: value\nq: \"esc \\x41 \\u00e9 \\t\"\n",
        "anchors.yaml": "base: &b {lr: 0.1, wd: 0.0}\ncopy: *b\nlist: [*b, *b]\nscalar: &s 3\nagain: *s\n",
        "documents.yaml": "%YAML 1.1\n---\n- 1\n- [2, 3]\n- {a: b}\n...\n---\nb: 2\n",
        "tags.yaml": "a: !!str 12\nb: !!int '3'\nc: !custom {x: 1}\n1: int key\n[x]: flow key\n",
        "hparams.yaml": "cfg:\n  num_layers: 2\n  hidden_size: 64\n  optim:\n    name: adamw\n    lr: 0.001\n",
    }
    for name, text in samples.items():
        seed("yaml", pathlib.Path(name), out, text.encode())

    folders = testdata / "model_folders"
    for name in ["tokenizer-grown/tokenizer.json", "tokenizer-grown/tokenizer_config.json",
                 "models/tiny-llama/tokenizer.json", "models/tiny-llama/generation_config.json"]:
        seed("tokenizer", pathlib.Path(name.replace("/", "_")), out, (folders / name).read_bytes())
    unigram = ('{"version":"1.0","added_tokens":[{"id":0,"content":"<unk>","special":true}],'
               '"model":{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0.0],["a",-1.5],["b",-2.25]]}}')
    wordpiece = ('{"added_tokens":[{"id":3,"content":"[CLS]"}],"model":{"type":"WordPiece",'
                 '"vocab":{"[PAD]":0,"[UNK]":1,"hello":2,"[CLS]":3},"max_input_chars_per_word":100}}')
    seed("tokenizer", pathlib.Path("unigram_tokenizer.json"), out, unigram.encode())
    seed("tokenizer", pathlib.Path("wordpiece_tokenizer.json"), out, wordpiece.encode())


if __name__ == "__main__":
    main()
