#!/bin/bash
# Prints one line per CLI invocation over the corpus and the sample runs: the command, its exit
# code and the sha256 of its stdout and stderr. Run it with two builds and diff the results to
# prove that a refactoring changed no output:
#   tests/scripts/cli_outputs.sh OLD/bin/ckpt > before.txt
#   tests/scripts/cli_outputs.sh build/bin/ckpt > after.txt && diff before.txt after.txt
# Paths in the output are relative to the repository root, so two checkouts compare equal.
set -uo pipefail
ckpt="$(realpath "$1")"
cd "$(dirname "$0")/../.."
corpus="${CKPT_CORPUS:-../shared/corpus}"

emit() { # emit ARGS...: one line for `ckpt ARGS...`
    local out err rc
    out=$(mktemp); err=$(mktemp)
    timeout 120 "$ckpt" "$@" >"$out" 2>"$err"; rc=$?
    printf '%s\t%s\t%s\t%s\n' "$*" "$rc" "$(sha256sum <"$out" | cut -c1-16)" "$(sha256sum <"$err" | cut -c1-16)"
    rm -f "$out" "$err"
}

files=()
[ -d "$corpus" ] || echo "cli_outputs: no corpus at $corpus: sample runs only" >&2
[ -d "$corpus" ] && while IFS= read -r f; do files+=("$f"); done < <(find "$corpus" -type f ! -name '*.md' ! -name '*.tsv' | sort)
while IFS= read -r f; do files+=("$f"); done < <(find sample_runs -type f ! -name '*.py' ! -name '*.md' | sort)
for f in "${files[@]}"; do
    emit tensors "$f" --json
    emit tensors "$f"
    emit imports "$f" --json
    emit tree "$f" --json --depth 4
    emit show "$f" --json
    emit tensors "$f" --stats --json
done
dirs=()
[ -d "$corpus" ] && while IFS= read -r d; do dirs+=("$d"); done < <(find "$corpus" -mindepth 1 -type d | sort)
while IFS= read -r d; do dirs+=("$d"); done < <(find sample_runs -mindepth 1 -type d | sort)
dirs+=(sample_runs)
for d in "${dirs[@]}"; do
    emit show "$d" --json
    emit show "$d"
    emit run "$d" --json
    emit check "$d" --json
    emit check "$d"
    emit audit "$d" --json
    emit tensors "$d" --stats --json
    emit tensors "$d" --json
    emit tensors "$d"
done
# Pairs: consecutive checkpoints of each sample run, and the first two corpus torch files.
for run in sample_runs/*/; do
    mapfile -t ck < <(find "$run" -mindepth 1 -maxdepth 1 -type d | sort)
    if [ "${#ck[@]}" -ge 2 ]; then
        emit diff "${ck[0]}" "${ck[1]}" --json
        emit diff "${ck[0]}" "${ck[1]}"
        emit check "${ck[0]}" "${ck[1]}" --json
    fi
done
emit check --list-rules --json
emit check --list-rules
emit --help
