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
. "$REPO/scripts/stack.sh"
LOG_TAG=reactions-bench
export WORKERS="${WORKERS:-4}"
stack_private "${BENCH_TMP:-/tmp/ireporter-reactions}" "${PORT:-8088}" "${DB_PORT:-3314}"
bench_results reactions

stack_wipe
trap stack_down EXIT
stack_up

# No upload limit; an access log (the effects' image_ms). The master runs as
# www-data once started: it must own the file to read it again on SIGUSR2.
: > "$RUN_DIR/access.log"
chown www-data:www-data "$RUN_DIR/access.log"
printf 'upload_rate_limit = 0\naccess_log = %s\n' "$RUN_DIR/access.log" >> "$SRV_CONF"
chown www-data "$SRV_CONF"
reload_server "$SRV_PID" "$WORKERS"

# nginx: more room for the live subscribers than the private default
# (deploy/nginx/nginx-private.conf.in: 4096 connections a worker, 8192 files).
sed -i -e 's/^\( *worker_connections\) [0-9]*;/\1 8192;/' \
       -e 's/^worker_rlimit_nofile [0-9]*;/worker_rlimit_nofile 20000;/' "$NGX_DIR/nginx.conf"
grep -q '^worker_rlimit_nofile 20000;' "$NGX_DIR/nginx.conf" && grep -q 'worker_connections 8192;' "$NGX_DIR/nginx.conf" \
  || die "could not raise nginx's connection limits in $NGX_DIR/nginx.conf"
nginx_reload "$NGX_DIR" || die "nginx's old workers did not leave after its reload"

python3 "$REPO/bench/reactions.py" --run-dir "$RUN_DIR" --port "$PORT" --out "$RES" --access-log "$RUN_DIR/access.log"
