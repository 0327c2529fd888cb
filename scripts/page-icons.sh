#!/usr/bin/env bash
# Writes the page's home-screen icons (Sources/QuenchWeb/Page/icon-192.png, icon-512.png) with
# Debian's rasterizer (librsvg2-bin). Run again after changing the drawing below; the PNGs are
# committed, so neither a build nor the Pi needs rsvg-convert for them.
# The drop sits inside the middle 80 % on a full blue square: Android's "maskable" safe zone, so a
# round or squircle mask never cuts it; iOS rounds the square's corners itself.
set -euo pipefail
cd "$(dirname "$0")/../Sources/QuenchWeb/Page"
svg='<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" fill="#1565c0"/><path d="M16 7C12.6 11.7 10 15.1 10 18.5a6 6 0 0 0 12 0c0-3.4-2.6-6.8-6-11.5z" fill="#ffffff"/></svg>'
for size in 192 512; do
    printf '%s' "$svg" | rsvg-convert --width "$size" --height "$size" --format png --output "icon-$size.png"
done
ls -l icon-192.png icon-512.png
