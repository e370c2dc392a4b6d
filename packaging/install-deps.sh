#!/bin/sh
# Installs the Debian 12 packages that building, running and testing need.
# Idempotent: packages already present are skipped, so re-running is cheap.
set -eu

BUILD="cmake ninja-build g++ pkg-config qt6-base-dev libqcustomplot-dev nlohmann-json3-dev libsimdjson-dev libjemalloc-dev libssl-dev libtorch-dev libarchive-dev libyaml-dev zlib1g-dev"
TEST="python3-torch python3-numpy python3-yaml xvfb xauth imagemagick xxhash libgl1-mesa-dri"
# Packaging tests: cpack -G DEB with dpkg-shlibdeps, and validating the desktop integration files.
TEST="$TEST appstream desktop-file-utils dpkg-dev file shared-mime-info"
# The HTML report rendered in a real browser (tests/ui/tst_timelinepage.cpp reportRendersInChromium).
TEST="$TEST chromium"
# Launcher tests (tests/ui/tst_launchers.cpp): an sshd on 127.0.0.1 and a one-node Slurm with munge.
TEST="$TEST openssh-server openssh-client slurm-wlm munge"
# The fuzz preset only (packaging/install-deps.sh fuzz): clang with libFuzzer and the sanitizers.
FUZZ="clang libclang-rt-14-dev"
# Regenerating the real-library runs only (packaging/install-deps.sh frameworks): what accelerate,
# Lightning and transformers import, as Debian packages (tests/fixtures/real_libraries/README.md); the
# older set of its lock.json (pytorch_lightning 1.9, accelerate 0.19, transformers 4.26) needs no more.
# DeepSpeed 0.14 (lock.json variants.deepspeed) imports cpuinfo and pydantic (1.10 works) and JIT-builds its
# CPU comm op with pybind11 headers, BUILD's g++ and ninja-build, and python3-dev (via libtorch-dev).
FRAMEWORKS="python3-torch python3-numpy python3-yaml python3-packaging python3-psutil python3-tqdm python3-fsspec python3-typing-extensions python3-filelock python3-requests python3-regex python3-protobuf"
FRAMEWORKS="$FRAMEWORKS python3-cpuinfo python3-pydantic pybind11-dev"
PACKAGES="$BUILD $TEST ${EXTRA_PACKAGES:-}"
if [ "${1:-}" = fuzz ]; then PACKAGES="$PACKAGES $FUZZ"; fi
if [ "${1:-}" = frameworks ]; then PACKAGES="$PACKAGES $FRAMEWORKS"; fi

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "install-deps: all packages present"
    exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends $missing
