#!/usr/bin/env bash
# make_images.sh [DIR] - the two test JPEGs, the same as the PHP reference's
# bench/make_images.sh makes (ImageMagick 6 plasma fractal, seed 42, 4:2:0
# chroma subsampling like a phone camera), into DIR (default
# /tmp/ireporter-macro/img):
#   small.jpg  640x640,   q82, ~62 KB   (a modern client's square photo)
#   big.jpg    4032x3024, q94, ~3.3 MB  (a 12 MP phone camera photo)
# Made once; an existing file is kept. Calls Debian's binary directly
# (/usr/bin/convert-im6.q16), not whatever "convert" comes first on PATH.
set -euo pipefail
OUT="${1:-/tmp/ireporter-macro/img}"
IM=/usr/bin/convert-im6.q16
mkdir -p "$OUT"
[ -x "$IM" ] || { echo "make_images.sh: need Debian's imagemagick-6.q16 ($IM)" >&2; exit 1; }
[ -s "$OUT/small.jpg" ] || "$IM" -seed 42 -size 640x640 plasma:fractal -sampling-factor 4:2:0 -quality 82 "$OUT/small.jpg"
[ -s "$OUT/big.jpg" ]   || "$IM" -seed 42 -size 4032x3024 plasma:fractal -sampling-factor 4:2:0 -quality 94 "$OUT/big.jpg"
for f in small big; do
  printf '%s %s bytes sha256 %s\n' "$OUT/$f.jpg" "$(stat -c %s "$OUT/$f.jpg")" "$(sha256sum "$OUT/$f.jpg" | cut -c1-16)"
done
