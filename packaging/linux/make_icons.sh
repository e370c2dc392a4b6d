#!/bin/sh
# Renders the hicolor PNG sizes from resources/checkpoint-inspector.svg (librsvg's gdk-pixbuf
# loader: packages libgdk-pixbuf2.0-bin and librsvg2-common). Run after editing the SVG and
# commit the results; the build only copies them.
set -eu
cd "$(dirname "$0")"
for size in 16 22 24 32 48 64 128 256 512; do
    gdk-pixbuf-thumbnailer -s "$size" ../../resources/checkpoint-inspector.svg "icons/checkpoint-inspector-$size.png"
done
