#!/usr/bin/env bash
# bench/search.sh - `search` at PHOTOS photos (default 1,000,000), one run,
# side by side on the same table: (1) seed (bench/search/seed.py: titles in
# several languages), (2) `ireporter search-index` over all of them (the
# backfill, timed), (3) our `search` through nginx with wrk (CONNS
# connections, DUR, the queries of bench/search/queries.txt in turn), (4)
# the same queries as flickr.photos.search (JSON, 50 a page) through the
# Flickr REST endpoint, (5) as `WHERE title LIKE '%word%'` (bench/search/like.py,
# CONNS clients straight on MariaDB, LIKE_DUR). Results: $RES/search.md and
# search.jsonl. Run as root; it starts its own stack (RUN_DIR
# /tmp/ireporter-search-bench, nginx 127.0.0.1:8097, MariaDB port 3397) and
# stops it at the end. Under `make test`'s lock on a shared machine:
#   flock /tmp/ireporter-make-test.lock bench/search.sh
# Environment: PHOTOS, CONNS (32), DUR (10s), LIKE_DUR (20), BUFFER_POOL (1 GiB), SKIP_BUILD=1, RES.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../scripts/stack.sh"
LOG_TAG=search-bench
export RUN_DIR="${SEARCH_RUN_DIR:-/tmp/ireporter-search-bench}" PORT="${SEARCH_PORT:-8097}" DB_PORT="${SEARCH_DB_PORT:-3397}"
unset DB_URL UPLOAD_DIR SESSION_DIR
stack_env
PHOTOS="${PHOTOS:-1000000}"
CONNS="${CONNS:-32}"
DUR="${DUR:-10s}"
LIKE_DUR="${LIKE_DUR:-20}"
RES="${RES:-$HERE/results/$(date -u +%Y-%m-%d)-search}"
mkdir -p "$RES"
COMMAND="$(for v in PHOTOS CONNS DUR LIKE_DUR BUFFER_POOL SKIP_BUILD; do [ -n "${!v:-}" ] && printf "%s='%s' " "$v" "${!v}"; done)bench/search.sh"
trap 'stack_down >/dev/null 2>&1 || true' EXIT
stack_up >/dev/null

log "seeding $PHOTOS photos"
seconds() { date +%s.%N; }
t0=$(seconds)
{ echo "DROP TABLE IF EXISTS login, photos, photo_words, photo_words_backfill;"
  cat "$IREPORTER_REPO/sql/schema.sql" "$IREPORTER_REPO"/sql/migrations/*.sql
  python3 "$HERE/search/seed.py" "$PHOTOS"; } | $MYSQL_ROOT_CMD
t1=$(seconds)
# The test stack's MariaDB has a 64 MB buffer pool; the index and the table
# both fit in this one, so neither side of the comparison waits on the disk.
$MYSQL_ROOT_CMD -e "SET GLOBAL innodb_buffer_pool_size = ${BUFFER_POOL:-1073741824}"
log "search-index"
"$SRV_BIN" search-index --config "$SRV_CONF" | tail -n 1
t2=$(seconds)
words=$($MYSQL_ROOT_CMD -N -B -e "SELECT COUNT(*) FROM photo_words")
sizes=$($MYSQL_ROOT_CMD -N -B -e "SELECT CONCAT(ROUND(data_length/1048576), ' MB data, ', ROUND(index_length/1048576), ' MB index') FROM information_schema.tables WHERE table_schema = 'iReport' AND table_name = 'photo_words'")
log "wrk search ($CONNS connections, $DUR)"
wrk_line=$(wrk -t2 -c"$CONNS" -d"$DUR" --latency -s "$HERE/lua/search.lua" "$API_URL" | grep '^WRKJSON ' | sed 's/^WRKJSON //')
log "wrk flickr.photos.search ($CONNS connections, $DUR)"
flickr_line=$(wrk -t2 -c"$CONNS" -d"$DUR" --latency -s "$HERE/lua/flickr_search.lua" "${API_URL}services/rest/" | grep '^WRKJSON ' | sed 's/^WRKJSON //')
log "LIKE ($CONNS clients, ${LIKE_DUR}s)"
like_line=$(python3 "$HERE/search/like.py" "$MYSQL_ROOT_CMD" "$HERE/search/queries.txt" "$CONNS" "$LIKE_DUR")
{ echo "{\"name\":\"search\",\"photos\":$PHOTOS,\"words\":$words,\"seed_s\":$(awk "BEGIN{print $t1 - $t0}"),\"backfill_s\":$(awk "BEGIN{print $t2 - $t1}"),\"wrk\":$wrk_line}"
  echo "{\"name\":\"flickr\",\"wrk\":$flickr_line}"
  echo "$like_line"; } > "$RES/search.jsonl"
python3 - "$RES" "$COMMAND" "$sizes" <<'PY'
import json, sys
res, command, sizes = sys.argv[1:4]
ours, flickr, like = [json.loads(l) for l in open(f"{res}/search.jsonl")]


def summary(w):
    return (w["requests"], w["requests"] / (w["duration_us"] / 1e6), w["p50_us"] / 1000, w["p99_us"] / 1000,
            w["bad_status"] + w["bad_body"] + w["err_status"] + w["err_timeout"])


requests, rate, p50, p99, bad = summary(ours["wrk"])
f_requests, f_rate, f_p50, f_p99, f_bad = summary(flickr["wrk"])
text = f"""# search at {ours['photos']:,} photos

Command: `{command}` (one run; queries: bench/search/queries.txt, in turn).

| | requests | rate (req/s) | p50 ms | p99 ms | bad |
|---|---|---|---|---|---|
| `search` (index, through nginx, wrk) | {requests} | {rate:.0f} | {p50:.2f} | {p99:.2f} | {bad} |
| `flickr.photos.search` JSON (same queries, 50 a page) | {f_requests} | {f_rate:.0f} | {f_p50:.2f} | {f_p99:.2f} | {f_bad} |
| `WHERE title LIKE '%word%'` (MariaDB directly) | {like['requests']} | {like['rate']} | {like['p50_ms']} | {like['p99_ms']} | |

- search / LIKE throughput: **{rate / like['rate']:.0f}x**
- flickr.photos.search / search throughput: **{100 * f_rate / rate:.0f}%**
- seed: {ours['seed_s']:.0f} s; backfill (`ireporter search-index`): {ours['backfill_s']:.0f} s for {ours['photos']:,} photos, {ours['words']:,} index rows ({sizes})
"""
open(f"{res}/search.md", "w").write(text)
print(text)
PY
