#!/usr/bin/env bash
# reactions.sh - the benchmarks of issue 15 (bench/reactions.py: the stream's
# cursors, extras and polling, JSON-RPC batches, the live stream through
# Nchan, the effects' cost) on a private stack of their own. Uses the fixed
# loopback ports of the shared machine, so run it under the shared lock:
#
#   flock /tmp/ireporter-make-test.lock bench/reactions.sh
#
# Environment: PHOTOS (1000000), VOTES_PER_PHOTO (10), COMMENTS_PER_PHOTO
# (1), USERS (10000), SUBSCRIBERS (2000), DUR (10s), CONNS (32), EFFECT_REPS
# (3) for bench/reactions.py; BENCH_TMP (/tmp/ireporter-reactions: the
# stack's RUN_DIR), PORT (8088), DB_PORT (3314), WORKERS (4); RES (results
# directory, default bench/results/<date>-reactions). SKIP_BUILD=1 as for
# scripts/stack.sh. The stack is stopped at the end.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export RUN_DIR="${BENCH_TMP:-/tmp/ireporter-reactions}" PORT="${PORT:-8088}" DB_PORT="${DB_PORT:-3314}"
export WORKERS="${WORKERS:-4}"
unset DB_URL UPLOAD_DIR SESSION_DIR
RES="${RES:-$REPO/bench/results/$(date +%F)-reactions}"
case "$RUN_DIR" in /|/tmp|/root|/home|/var|/usr|/etc) echo "refusing RUN_DIR=$RUN_DIR" >&2; exit 2 ;; esac

"$REPO/scripts/deps.sh"
"$REPO/scripts/stack.sh" down > /dev/null 2>&1 || true
rm -rf "$RUN_DIR"
trap '"$REPO/scripts/stack.sh" down' EXIT
"$REPO/scripts/stack.sh" up

# No upload limit; an access log (the effects' image_ms). The master runs as
# www-data once started: it must own the file to read it again on SIGUSR2.
CONF="$RUN_DIR/ireporter.conf"
: > "$RUN_DIR/access.log"
chown www-data:www-data "$RUN_DIR/access.log"
printf 'upload_rate_limit = 0\naccess_log = %s\n' "$RUN_DIR/access.log" >> "$CONF"
chown www-data "$CONF"
master="$(cat "$RUN_DIR/ireporter/ireporter.pid")"
old="$(pgrep -P "$master" | tr '\n' ' ')"
kill -USR2 "$master"
for _ in $(seq 1 100); do
  sleep 0.1
  left=0
  for w in $old; do kill -0 "$w" 2> /dev/null && left=1; done
  [ "$left" = 0 ] && [ "$(pgrep -c -P "$master")" -ge "$WORKERS" ] && break
done

# nginx: room for the live subscribers (2 workers x 1024 connections is the
# private default).
sed -i -e 's/worker_connections 1024;/worker_connections 8192;/' \
       -e 's/^worker_processes auto;/worker_processes auto;\nworker_rlimit_nofile 20000;/' "$RUN_DIR/nginx/nginx.conf"
/usr/sbin/nginx -p "$RUN_DIR/nginx/" -e "$RUN_DIR/nginx/error.log" -c "$RUN_DIR/nginx/nginx.conf" -s reload
sleep 2

python3 "$REPO/bench/reactions.py" --run-dir "$RUN_DIR" --port "$PORT" --out "$RES" --access-log "$RUN_DIR/access.log"
