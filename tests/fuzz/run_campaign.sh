#!/bin/bash
# Fuzzes one target until it has used CPU_SECONDS of CPU time (not wall time: the machine is
# shared), at the lowest priority (FUZZ_NICE overrides), then stops it with SIGINT so libFuzzer prints its final stats.
#   tests/fuzz/run_campaign.sh BUILD_DIR TARGET CPU_SECONDS LOG_DIR
# Prints one line: target, CPU seconds used, exit status, runs, and the artifacts it left
# (crash-*, leak-*, timeout-*, oom-* under LOG_DIR/TARGET/). New corpus units stay in BUILD_DIR.
set -uo pipefail
build=$1 target=$2 budget=$3 logdir=$4
src="$(cd "$(dirname "$0")" && pwd)"
work="$build/tests/fuzz/work/$target"
out="$logdir/$target"
mkdir -p "$work/corpus" "$out"
dict=()
[ -f "$src/dict/$target.dict" ] && dict=(-dict="$src/dict/$target.dict")
inputs=("$src/corpus/$target")
[ -d "$src/regressions/$target" ] && inputs+=("$src/regressions/$target")

# -timeout is wall time: at nice 19 on a loaded machine a 0.2 s input can wait many seconds for a
# CPU, so only a unit stuck for two minutes counts as a hang.
nice -n "${FUZZ_NICE:-19}" "$build/bin/fuzz_$target" -timeout=120 -rss_limit_mb=1536 -malloc_limit_mb=512 \
    -print_final_stats=1 -artifact_prefix="$out/" "${dict[@]}" "$work/corpus" "${inputs[@]}" \
    >"$out/fuzz.log" 2>&1 &
pid=$!
ticks=$(getconf CLK_TCK)
cpu=0
while kill -0 "$pid" 2>/dev/null; do
    if stat=$(cat "/proc/$pid/stat" 2>/dev/null); then
        fields=(${stat##*) })
        cpu=$(( (fields[11] + fields[12]) / ticks ))
        if [ "$cpu" -ge "$budget" ]; then
            kill -INT "$pid"
            break
        fi
    fi
    sleep 5
done
wait "$pid"
rc=$?
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/fuzz.log" | grep -o '[0-9]*$' | tail -1)
artifacts=$(cd "$out" && ls crash-* leak-* timeout-* oom-* slow-unit-* 2>/dev/null | tr '\n' ' ')
echo "$target cpu_s=$cpu rc=$rc runs=${runs:-?} artifacts=${artifacts:-none}" | tee -a "$logdir/summary.txt"
