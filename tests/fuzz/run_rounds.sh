#!/bin/bash
# Round-robin campaigns, one fuzzer at a time, through run_campaign.sh (nice 19, CPU-time budgets):
#   tests/fuzz/run_rounds.sh BUILD_DIR LOG_DIR CPU_SECONDS_PER_SLOT DEADLINE TARGET...
# DEADLINE is a `date -d` time ("06:20", "+2 hours"): no slot starts after it. Touch LOG_DIR/STOP to
# stop after the current slot; SIGINT the fuzzer (its pid is in LOG_DIR/fuzzer.pid) to end that
# slot early with its final stats. Each slot's libFuzzer log is kept as LOG_DIR/TARGET/fuzz-N.log and
# described by one line of LOG_DIR/slots.tsv: target, round, CPU seconds, exit status, executions,
# final cov: and ft:, the corpus's file count in BUILD_DIR, the artifacts left so far.
set -uo pipefail
build=$1 logdir=$2 slot=$3 deadline=$(date -d "$4" +%s) || exit 2
shift 4
src="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$logdir"
[ -f "$logdir/slots.tsv" ] || printf 'target\tround\tcpu_s\trc\truns\tcov\tft\tcorpus\tartifacts\n' >"$logdir/slots.tsv"
round=0
while :; do
    round=$((round + 1))
    for target in "$@"; do
        if [ -e "$logdir/STOP" ] || [ "$(date +%s)" -ge "$deadline" ]; then
            exit 0
        fi
        "$src/run_campaign.sh" "$build" "$target" "$slot" "$logdir" >"$logdir/last-slot.txt" &
        campaign=$!
        # run_campaign.sh starts the fuzzer (nice execs it) as its only child
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            fuzzer=$(pgrep -P "$campaign" -f "/fuzz_$target " | head -1) && break
            sleep 1
        done
        echo "${fuzzer:-}" >"$logdir/fuzzer.pid"
        wait "$campaign"
        rm -f "$logdir/fuzzer.pid"
        log="$logdir/$target/fuzz.log"
        n=1
        while [ -e "$logdir/$target/fuzz-$n.log" ]; do n=$((n + 1)); done
        cp "$log" "$logdir/$target/fuzz-$n.log"
        line=$(cat "$logdir/last-slot.txt")
        final=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
        corpus=$(find "$build/tests/fuzz/work/$target/corpus" -type f | wc -l)
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$round" \
            "$(grep -o 'cpu_s=[0-9]*' <<<"$line" | cut -d= -f2)" "$(grep -o 'rc=[0-9]*' <<<"$line" | cut -d= -f2)" \
            "$(grep -o 'runs=[0-9?]*' <<<"$line" | cut -d= -f2)" "$(awk '{print $2}' <<<"$final")" \
            "$(awk '{print $4}' <<<"$final")" "$corpus" "$(sed 's/.*artifacts=//' <<<"$line")" >>"$logdir/slots.tsv"
    done
done
