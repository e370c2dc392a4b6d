#!/usr/bin/env bash
# Builds ckpt-validate against the LibTorch inside a pip PyTorch with CUDA and replays the sample
# runs' probes with --device cuda, printing one table row per checkpoint. Run it on a CUDA machine:
#
#   PYTHON=/path/to/venv/bin/python tests/gpu/validate_on_gpu.sh [BUILD_DIR]
#
# Needs: that Python with a CUDA build of torch, the CUDA toolkit its TorchConfig.cmake looks for
# (nvcc of the same major version), cmake >= 3.25, ninja, g++, and the Debian packages of
# packaging/install-deps.sh that core and ckpt need (nlohmann-json3-dev libsimdjson-dev libjemalloc-dev
# libssl-dev libarchive-dev libyaml-dev zlib1g-dev).
# Qt is not needed: the build is headless (CKPT_BUILD_GUI=OFF). Exit 0 when every row shows what it
# should (see EXPECTED below), 1 otherwise, 2 when no CUDA device or no torch is found.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build-gpu}
PY=${PYTHON:-python3}

if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "validate_on_gpu: $PY has no torch with a visible CUDA device" >&2
    exit 2
fi
TORCH_PREFIX=$("$PY" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
"$PY" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "on", torch.cuda.get_device_name(0))'

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCKPT_BUILD_GUI=OFF -DBUILD_TESTING=OFF \
      -DCKPT_BUILD_VALIDATOR=ON -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" >"$BUILD.configure.log" 2>&1 \
    || { tail -30 "$BUILD.configure.log"; exit 2; }
cmake --build "$BUILD" --target ckpt-validate ckpt -j "$(nproc)" >"$BUILD.build.log" 2>&1 \
    || { tail -30 "$BUILD.build.log"; exit 2; }

# checkpoint (under sample_runs/) and what a CUDA replay must show: the verdict and the component
# named first. The probes were recorded on the CPU: without dropout the replay agrees within
# tolerance, but the CPU generator after the update cannot be compared from a CUDA replay, so the
# verdict is partial (never pass); with dropout (ddp4-mlp) the CUDA generator draws other masks,
# so the results differ in "numerics" while every input component stays exact; each resume fault
# is still named first.
EXPECTED="
tiny-mlp/checkpoint-0000050 partial -
tiny-mlp/checkpoint-0000100 partial -
ddp4-mlp/checkpoint-0000200 differs numerics
broken/data-cursor-wrong/checkpoint-0000200 differs batch
broken/optimizer-not-restored/checkpoint-0000200 differs optimizer
broken/scheduler-stepped-twice/checkpoint-0000200 differs lr_scheduler
broken/scaler-reset/checkpoint-0000200 differs scaler
broken/rng-not-restored/checkpoint-0000200 differs rng
"

status=0
printf '%-50s %-7s %-9s %-13s %-12s %-24s %s\n' checkpoint device verdict first loss-rel-diff "params after (=/~/!)" ok
while read -r ckpt want_verdict want_first; do
    [ -n "$ckpt" ] || continue
    set +e
    out=$("$BUILD/bin/ckpt-validate" "$ROOT/sample_runs/$ckpt" --device cuda)
    code=$?
    set -e
    row=$(printf '%s\n' "$out" | tail -n 1 | "$PY" -c '
import json, sys
r = json.loads(sys.stdin.read())
loss = params = "-"
for c in r.get("components", []):
    for ch in c["checks"]:
        if ch["name"] == "loss (mean)":
            loss = "%.2e" % ch["measured"]["rel_diff"]
        if ch["name"] == "parameters after the update":
            m = ch["measured"]
            params = "%s/%s/%s" % (m.get("exact", "-"), m.get("within_tolerance", "-"), m.get("differs", "-"))
print(r.get("device", "-"), r["verdict"], r.get("first_difference") or "-", loss, params)')
    read -r device verdict first loss params <<<"$row"
    ok=yes
    if [ "$verdict" != "$want_verdict" ] || [ "$first" != "$want_first" ] || [ "${device#cuda}" = "$device" ]; then
        ok="NO (want $want_verdict $want_first, exit $code)"
        status=1
    fi
    printf '%-50s %-7s %-9s %-13s %-12s %-24s %s\n' "$ckpt" "$device" "$verdict" "$first" "$loss" "$params" "$ok"
done <<<"$EXPECTED"

# The test loop of docs/validation.md written with this machine's torch (2.x): its probes follow
# torch 2.x's optimizer formulas, so the CPU replay checks the 2.x branches of torch_optimizers.cpp
# bitwise (every verdict as expected.json says), and the CUDA replay records how close each
# optimizer comes on the GPU (probes recorded on the CPU: expect partial or numerics).
LOOP="$BUILD/resume-loop"
"$PY" "$ROOT/tests/fixtures/make_resume_loop.py" "$LOOP" >"$BUILD.resume-loop.log" 2>&1 \
    || { tail -20 "$BUILD.resume-loop.log"; exit 2; }
printf '\n%-40s %-10s %-14s %-10s %-14s %s\n' run cpu-verdict cpu-first cuda-verdict cuda-first ok
for run in $("$PY" -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))))' "$LOOP/expected.json"); do
    want=$("$PY" -c 'import json,sys; e=json.load(open(sys.argv[1]))[sys.argv[2]]; print(e["verdict"], e["first_difference"] or "-")' \
           "$LOOP/expected.json" "$run")
    got=()
    for device in cpu cuda; do
        set +e
        out=$("$BUILD/bin/ckpt-validate" "$LOOP/$run/checkpoint-0000010" --device "$device")
        set -e
        got+=($(printf '%s\n' "$out" | tail -n 1 | "$PY" -c 'import json,sys; r=json.loads(sys.stdin.read()); print(r["verdict"], r.get("first_difference") or "-")'))
    done
    ok=yes
    if [ "${got[0]} ${got[1]}" != "$want" ]; then
        ok="NO (cpu: want $want)"
        status=1
    fi
    printf '%-40s %-10s %-14s %-10s %-14s %s\n' "$run" "${got[0]}" "${got[1]}" "${got[2]}" "${got[3]}" "$ok"
done
exit $status
