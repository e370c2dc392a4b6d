#!/bin/bash
# Starts a one-node Slurm cluster on this machine for the launcher tests: munged with its own key,
# slurmctld and slurmd, all configured, logging and keeping state under DIR (Debian's slurm-wlm and
# munge; nothing under /etc is used). Prints one line: the SLURM_CONF to export for srun.
#   tests/launchers/start_slurm.sh DIR
# Stop it with tests/launchers/stop_services.sh DIR. Exit 77 (skip) when Slurm or munge is missing.
set -euo pipefail
dir=$(realpath -m "$1")
for tool in slurmctld slurmd srun munged; do
    if ! command -v "$tool" >/dev/null && [ ! -x "/usr/sbin/$tool" ]; then
        echo "SKIP: $tool is not installed (slurm-wlm and munge; packaging/setup.sh test installs them)" >&2
        exit 77
    fi
done
export PATH="$PATH:/usr/sbin"
mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
chmod 700 "$dir/munge"
# munged wants a key of at least 32 bytes readable only by its user
head -c 1024 /dev/urandom >"$dir/munge/munge.key"
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
       --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"
free_port() {
    /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
host=$(hostname -s)
user=$(id -un)
cpus=$(nproc)
cat >"$dir/slurm.conf" <<CONF
ClusterName=ckpt-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 100); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qE '^idle'; then
        echo "$SLURM_CONF"
        exit 0
    fi
    sleep 0.2
done
echo "the one-node Slurm cluster did not become idle; sinfo says: $(sinfo 2>&1 | tail -2)" >&2
tail -5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
exit 1
