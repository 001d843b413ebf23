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
OUT_LOG="$(mktemp)"
trap 'rm -f "$OUT_LOG"' EXIT
IREPORTER_THUMB_BENCH="$FILES" IREPORTER_THUMB_BENCH_N="${N:-50}" IREPORTER_THUMB_BENCH_OUT="${OUT:-}" \
  swift test -c release -Xswiftc -enable-testing \
    --scratch-path "${SCRATCH:-/tmp/ireporter-bench-build}" \
    --filter ImagingBenchmarkTests > "$OUT_LOG" 2>&1 || { tail -30 "$OUT_LOG" >&2; exit 1; }
grep -E '^thumbnail |^steps |✘|error:|passed|failed' "$OUT_LOG"

# vipsthumbnail (libvips, Debian's libvips-tools) on the same files in the
# same run, making the same 180x180 centre crop at q85; its process start-up
# (timed on a 16x16 JPEG) is subtracted. THUMB_JSON=file: both, as JSON.
VIPS=/usr/bin/vipsthumbnail
if [ -x "$VIPS" ]; then
  python3 - "$OUT_LOG" "$VIPS" "${N:-50}" "${THUMB_JSON:-}" <<'PY'
import json, os, statistics, subprocess, sys, tempfile, time
log, vips, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
ours = [json.loads(l.split("THUMBJSON ", 1)[1]) for l in open(log) if "THUMBJSON " in l]
tmp = tempfile.mkdtemp(prefix="vips-bench-")
tiny = os.path.join(tmp, "tiny.jpg")
subprocess.run(["/usr/bin/convert-im6.q16", "-size", "16x16", "xc:gray", tiny], check=True)
def runs(path):
    cmd = [vips, path, "--size", "180x180", "--smartcrop", "centre", "-o", os.path.join(tmp, "t.jpg[Q=85]")]
    for _ in range(3): subprocess.run(cmd, check=True)
    times = []
    for _ in range(n):
        t = time.perf_counter(); subprocess.run(cmd, check=True); times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)
startup = runs(tiny)
for o in ours:
    o["vips_wall_ms"] = round(runs(o["file"]) - startup, 2)
    o["vips_startup_ms"] = round(startup, 2)
    print(f"vipsthumbnail {o['file']}: {o['vips_wall_ms']:.2f} ms net of start-up ({startup:.2f} ms); "
          f"ours {o['ours_wall_ms']:.2f} ms (median of {o['runs']}): ours/vips {o['ours_wall_ms'] / o['vips_wall_ms']:.2f}")
if out:
    json.dump(ours, open(out, "w"), indent=1)
PY
else
  echo "(no $VIPS: apt-get install libvips-tools for the side-by-side)"
fi
