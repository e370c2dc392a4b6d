#!/bin/bash
# Starts an OpenSSH server on 127.0.0.1 for the launcher tests, owned by the calling user, with its own
# host key and a fresh client key; nothing outside DIR is written or read (no /etc/ssh, no ~/.ssh).
#   tests/launchers/start_sshd.sh DIR      prints one line: the launcher prefix to use, e.g.
#     ssh -F DIR/ssh_config ckpt-test --
# Stop it with: kill "$(cat DIR/sshd.pid)". Exit 77 (skip) when sshd or ssh is not installed.
set -euo pipefail
dir=$(realpath -m "$1")
sshd=$(command -v sshd || echo /usr/sbin/sshd)
if [ ! -x "$sshd" ] || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
    echo "SKIP: openssh-server / openssh-client are not installed (packaging/setup.sh test installs them)" >&2
    exit 77
fi
mkdir -p "$dir"
# sshd started by root wants its privilege-separation directory (Debian creates it at boot, containers may not)
if [ "$(id -u)" = 0 ]; then mkdir -p /run/sshd; fi
chmod 700 "$dir"
rm -f "$dir"/host_key* "$dir"/client_key*
ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$dir/client_key"
cp "$dir/client_key.pub" "$dir/authorized_keys"
chmod 600 "$dir/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
       || /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$dir/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $port
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
AcceptEnv none
CONF
cat >"$dir/ssh_config" <<CONF
Host ckpt-test
    HostName 127.0.0.1
    Port $port
    User $(id -un)
    IdentityFile $dir/client_key
    IdentitiesOnly yes
    BatchMode yes
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    LogLevel ERROR
CONF
# sshd refuses a relative path to itself; -D keeps it in the foreground, so background it here
"$sshd" -D -e -f "$dir/sshd_config" 2>"$dir/sshd.log" &
for _ in $(seq 1 50); do
    if ssh -F "$dir/ssh_config" ckpt-test true 2>/dev/null; then
        echo "ssh -F $dir/ssh_config ckpt-test --"
        exit 0
    fi
    sleep 0.2
done
echo "sshd did not accept a login on 127.0.0.1:$port; its log:" >&2
cat "$dir/sshd.log" >&2
exit 1
