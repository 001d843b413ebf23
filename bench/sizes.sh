#!/usr/bin/env bash
# bench/sizes.sh - photo sizes (issue 16), one run on a stack of its own:
# (1) a missing size of a 12 MP photo (4000x3000 baseline JPEG) made on its
#     first request: COUNT photos per size letter of SIZES, each asked once,
#     one request at a time, through nginx's try_files and the size route
#     (each from the 12 MP original: every photo is asked one size only);
#     latency as the client sees it: p50, p90, p99, max (target p99 <= 40 ms);
# (2) the same URL afterwards (nginx serving the file it found through the
#     size location's try_files) against nginx serving a byte-identical copy
#     as the 2012 app's plain photo URL (upload/<id>.jpg's location): wrk,
#     CONNS connections for DUR, ROUNDS alternating runs (target: within 10%).
# Results: $RES/sizes.md and sizes.jsonl, with this command and the load
# average. Run as root; it starts its own stack (RUN_DIR
# /tmp/ireporter-sizes-bench, nginx 127.0.0.1:8099, MariaDB port 3399) and
# stops it at the end. On a shared machine, so two benchmarks never overlap:
#   flock /tmp/ireporter-bench.lock bench/sizes.sh
# Environment: COUNT (100), SIZES (q,z,b), CONNS (32), DUR (10s), ROUNDS (3),
# SKIP_BUILD=1, RES, SIZES_RUN_DIR, SIZES_PORT, SIZES_DB_PORT.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../scripts/stack.sh"
LOG_TAG=sizes-bench
stack_private "${SIZES_RUN_DIR:-/tmp/ireporter-sizes-bench}" "${SIZES_PORT:-8099}" "${SIZES_DB_PORT:-3399}"
bench_results sizes
COMMAND="$(for v in COUNT SIZES CONNS DUR ROUNDS SKIP_BUILD; do [ -z "${!v:-}" ] || printf "%s='%s' " "$v" "${!v}"; done)flock /tmp/ireporter-bench.lock bench/sizes.sh"
trap 'stack_down >/dev/null 2>&1 || true' EXIT
stack_up >/dev/null

# Empty tables as installed (every migration), an empty upload folder.
{ echo "DROP TABLE IF EXISTS login, photos, photos_removed, photo_details, photo_counts, votes, comments, photo_words, photo_words_backfill, photo_secrets;"
  cat "$IREPORTER_REPO/sql/schema.sql" "$IREPORTER_REPO"/sql/migrations/*.sql; } | $MYSQL_ROOT_CMD
find "$UPLOAD_DIR" -mindepth 1 -delete

python3 "$HERE/sizes/measure.py" --api "$API_URL" --upload-dir "$UPLOAD_DIR" --mysql "$MYSQL_ROOT_CMD" \
  --count "${COUNT:-100}" --sizes "${SIZES:-q,z,b}" --conns "${CONNS:-32}" --duration "${DUR:-10s}" \
  --rounds "${ROUNDS:-3}" --lua "$HERE/lua/common.lua" --res "$RES" --command "$COMMAND"
