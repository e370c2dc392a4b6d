#!/bin/bash
# The differential campaign against CPython's C unpickler (issue 34): round after round, Debian's
# python3 writes a new set of pickles with make_pickle_parity.py (random values, random opcode
# streams, byte-level mutants of the fuzz corpus and of those, new seeds each round), loads each
# through a restricted pickle.Unpickler and records what it built or why it refused; then
# tst_pickle_parity reads the same set with the machine and compares (CKPT_PICKLE_PARITY_DIR).
# Every disagreement is a bug in one of the two; the round's set is kept for it.
#   tests/fuzz/differential_cpython.sh BUILD_DIR CPU_SECONDS LOG_DIR [FIRST_SEED]
# Stops once both sides together have used CPU_SECONDS of CPU time (user + system, children
# included), at nice 19. Prints one line per round and a total.
set -uo pipefail
build=$1 budget=$2 logdir=$3 seed=${4:-100000}
src="$(cd "$(dirname "$0")/../fixtures" && pwd)"
python=/usr/bin/python3 # Debian's: the reference is CPython 3.11's _pickle
mkdir -p "$logdir"
summary="$logdir/rounds.tsv"
[ -f "$summary" ] || printf 'seed\tpickles\tcompared\trefused_alike\tdifferences\tcpu_s\n' >"$summary"

cpu_of_children() { # user + system seconds of this shell's finished children (/proc: cutime, cstime)
    awk -v tck="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%d", ($14 + $15) / tck }' "/proc/$$/stat"
}

total_rounds=0 total_pickles=0 total_diff=0
start_cpu=$(cpu_of_children)
while :; do
    used=$(( $(cpu_of_children) - start_cpu ))
    [ "$used" -ge "$budget" ] && break
    dir="$logdir/round-$seed"
    rm -rf "$dir"
    nice -n 19 "$python" "$src/make_pickle_parity.py" "$dir" --seed "$seed" --streams 6000 --values 300 \
        --mutants 6000 >"$dir.gen.log" 2>&1 || { echo "round $seed: the generator failed (see $dir.gen.log)"; break; }
    CKPT_PICKLE_PARITY_DIR="$dir" nice -n 19 "$build/bin/tst_pickle_parity" randomValues randomOpcodeStreams mutants \
        >"$dir.test.log" 2>&1
    rc=$?
    pickles=$(grep -o '^round [0-9]*: [0-9]*' "$dir.gen.log" | grep -o '[0-9]*$')
    compared=$(grep -o '[0-9]* values compared' "$dir.test.log" | awk '{ s += $1 } END { print s + 0 }')
    alike=$(grep -o '[0-9]* refused alike' "$dir.test.log" | awk '{ s += $1 } END { print s + 0 }')
    diff=$(grep -o '[0-9]* differences' "$dir.test.log" | awk '{ s += $1 } END { print s + 0 }')
    now=$(( $(cpu_of_children) - start_cpu ))
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$seed" "$pickles" "$compared" "$alike" "$diff" "$now" >>"$summary"
    echo "round $seed: $pickles pickles, $compared values compared, $alike refused alike, $diff differences (exit $rc), $now CPU s so far"
    total_rounds=$((total_rounds + 1)) total_pickles=$((total_pickles + pickles)) total_diff=$((total_diff + diff))
    [ "$rc" -eq 0 ] && [ "$diff" -eq 0 ] && rm -rf "$dir" "$dir.gen.log" # keep only what disagreed
    seed=$((seed + 1))
done
echo "differential_cpython: $total_rounds rounds, $total_pickles pickles, $total_diff differences, $(( $(cpu_of_children) - start_cpu )) CPU s"
