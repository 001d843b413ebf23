#!/usr/bin/env bash
# thumbnail.sh - micro-benchmark of the 180x180 thumbnail (IReporterKit
# Thumbnailer: libjpeg-turbo DCT-scaled decode, gdImageScale (GD_TRIANGLE),
# gdImageJpegPtr q85), single thread, no HTTP. Same photos as the reference's
# bench/make_images.sh (ImageMagick 6 plasma, fixed seed, 4:2:0):
#   small.jpg 640x640 q82, big.jpg 4032x3024 q94.
# Runs the ImagingBenchmarkTests test (off unless IREPORTER_THUMB_BENCH is
# set) in a release build with its own scratch path.
#   N=50 bench/micro/thumbnail.sh            # iterations per file (default 50)
#   FILES=/a.jpg:/b.jpg bench/micro/thumbnail.sh   # other photos
# Env: OUT=dir keeps the thumbnails; IMG_DIR (default /tmp/ireporter-bench/img), SCRATCH (default
# /tmp/ireporter-bench-build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
IMG="${IMG_DIR:-/tmp/ireporter-bench/img}"
IM=/usr/bin/convert-im6.q16
if [ -z "${FILES:-}" ]; then
  [ -x "$IM" ] || { echo "need Debian's imagemagick-6.q16 (or set FILES)" >&2; exit 1; }
  mkdir -p "$IMG"
  [ -s "$IMG/small.jpg" ] || "$IM" -seed 42 -size 640x640 plasma:fractal -sampling-factor 4:2:0 -quality 82 "$IMG/small.jpg"
  [ -s "$IMG/big.jpg" ]   || "$IM" -seed 42 -size 4032x3024 plasma:fractal -sampling-factor 4:2:0 -quality 94 "$IMG/big.jpg"
  FILES="$IMG/small.jpg:$IMG/big.jpg"
fi
export PATH="/opt/swift/usr/bin:$PATH"
cd "$ROOT"
# -enable-testing: other test files may use @testable imports, which a plain
# release build rejects.
IREPORTER_THUMB_BENCH="$FILES" IREPORTER_THUMB_BENCH_N="${N:-50}" IREPORTER_THUMB_BENCH_OUT="${OUT:-}" \
  swift test -c release -Xswiftc -enable-testing \
    --scratch-path "${SCRATCH:-/tmp/ireporter-bench-build}" \
    --filter ImagingBenchmarkTests 2>&1 | grep -E '^thumbnail |✘|error:|passed|failed'
