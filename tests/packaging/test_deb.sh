#!/bin/bash
# Builds the .deb with cpack, unpacks it into a scratch root with dpkg -x (no root needed, the
# system is untouched) and runs the installed binaries from there.
#   test_deb.sh BUILD_DIR VERSION SAMPLE_CHECKPOINT
set -euo pipefail
build=$1 version=$2 sample=$3
scratch="$build/packaging-test"
rm -rf "$scratch"
mkdir -p "$scratch/root" "$scratch/home"
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$scratch/out" >"$scratch/cpack.log" 2>&1) || { cat "$scratch/cpack.log"; fail "cpack -G DEB failed"; }
deb=$(ls "$scratch"/out/checkpoint-inspector_*.deb)
echo "package: $(basename "$deb")"

# Dependencies: dpkg-shlibdeps must have found the Qt 6, QCustomPlot and OpenSSL packages.
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for needed in libqt6widgets6 libssl3 libarchive13 qt6-qpa-plugins libstdc++6; do
    grep -q "$needed" <<<"$depends" || fail "Depends lacks $needed"
done
# QCustomPlot and LibTorch: required exactly when a built binary links them (the plots and the
# validator arrive in their own issues).
needs() { readelf -d "$build/bin/$1" 2>/dev/null | grep -q "NEEDED.*$2"; }
if needs checkpoint-inspector libqcustomplot; then
    grep -q "libqcustomplot" <<<"$depends" || fail "the app links QCustomPlot but Depends lacks it"
fi
if needs ckpt-validate libtorch; then
    grep -q "libtorch" <<<"$depends" || fail "ckpt-validate links LibTorch but Depends lacks its libraries"
fi
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "package version $(dpkg-deb -f "$deb" Version), expected $version"

dpkg -x "$deb" "$scratch/root"
usr="$scratch/root/usr"
for f in bin/checkpoint-inspector bin/ckpt share/applications/checkpoint-inspector.desktop \
         share/metainfo/io.github.checkpointinspector.CheckpointInspector.metainfo.xml \
         share/mime/packages/checkpoint-inspector.xml share/icons/hicolor/scalable/apps/checkpoint-inspector.svg \
         share/icons/hicolor/48x48/apps/checkpoint-inspector.png share/icons/hicolor/256x256/apps/checkpoint-inspector.png; do
    [ -e "$usr/$f" ] || fail "the package lacks /usr/$f"
done
if [ -x "$build/bin/ckpt-validate" ]; then
    [ -x "$usr/bin/ckpt-validate" ] || fail "the package lacks /usr/bin/ckpt-validate"
    "$usr/bin/ckpt-validate" --version | grep -qF "$version" || fail "installed ckpt-validate --version does not print $version"
fi

# Desktop integration files are valid as installed.
appstreamcli validate --no-net "$usr/share/metainfo/io.github.checkpointinspector.CheckpointInspector.metainfo.xml"
desktop-file-validate "$usr/share/applications/checkpoint-inspector.desktop"
update-mime-database "$usr/share/mime"
for pattern in '\*\.pt$' '\*\.pth$' '\*\.ckpt$' '\*\.bin$' '\*\.safetensors$'; do
    grep -q "application/x-.*:$pattern" "$usr/share/mime/globs" || fail "no MIME type claims $pattern"
done
grep -q '^MimeType=.*application/x-safetensors' "$usr/share/applications/checkpoint-inspector.desktop"

# The installed binaries run from the scratch root (system libraries come from the system).
export LD_LIBRARY_PATH="$usr/lib:$usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/home/.config" XDG_CACHE_HOME="$scratch/home/.cache"
out=$("$usr/bin/ckpt" --version)
[ "$out" = "ckpt $version" ] || fail "installed ckpt --version printed '$out'"
out=$(QT_QPA_PLATFORM=offscreen "$usr/bin/checkpoint-inspector" --version)
[ "$out" = "checkpoint-inspector $version" ] || fail "installed checkpoint-inspector --version printed '$out'"
"$usr/bin/ckpt" tensors "$sample" >/dev/null
QT_QPA_PLATFORM=offscreen "$usr/bin/checkpoint-inspector" "$sample" --screenshot "$scratch/screenshot.png"
[ "$(head -c 8 "$scratch/screenshot.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "the screenshot is not a PNG"
echo "installed package works: $(du -h "$deb" | cut -f1) package, screenshot $(stat -c %s "$scratch/screenshot.png") bytes"
