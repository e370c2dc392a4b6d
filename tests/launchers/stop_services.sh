#!/bin/bash
# Stops what start_sshd.sh and start_slurm.sh started under DIR (by their pid files) and waits up to
# 15 s for each to exit (SIGKILL after that), so the caller can remove DIR.
#   tests/launchers/stop_services.sh DIR...
pids=()
for dir in "$@"; do
    for pidfile in "$dir/sshd.pid" "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
        if [ -s "$pidfile" ]; then
            pid=$(cat "$pidfile")
            kill "$pid" 2>/dev/null && pids+=("$pid")
        fi
    done
done
for pid in "${pids[@]}"; do
    for _ in $(seq 1 75); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    kill -9 "$pid" 2>/dev/null
done
exit 0
