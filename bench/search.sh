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
# (3) and (4) run twice: with each worker's cache of recent answers (the
# default, search_cache_ms = 60000: the benchmark repeats its 12 queries, so
# nearly every answer comes from it) and without (search_cache_ms = 0:
# every request queries MariaDB), so that both are on record.
# Then, still without the cache, each query of queries.txt and of
# short.txt (one- and two-letter terms: each starts many words) alone, 3
# times, one client (curl): what each costs MariaDB and us (per-query.txt).
# The load average (/proc/loadavg) is recorded before and after each timed
# part: the machine may be shared.
# Environment: PHOTOS, CONNS (32), DUR (10s), LIKE_DUR (20), LIKE_CLIENTS (CONNS), WARMUP (5s), BUFFER_POOL (1 GiB), SKIP_BUILD=1, RES,
# SEARCH_RUN_DIR, SEARCH_PORT, SEARCH_DB_PORT (another stack's ports), KEEP_UP=1 (leave the stack
# running, seeded, for profiling: stop it with `RUN_DIR=... scripts/stack.sh down`).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../scripts/stack.sh"
LOG_TAG=search-bench
stack_private "${SEARCH_RUN_DIR:-/tmp/ireporter-search-bench}" "${SEARCH_PORT:-8097}" "${SEARCH_DB_PORT:-3397}"
PHOTOS="${PHOTOS:-1000000}"
CONNS="${CONNS:-32}"
DUR="${DUR:-10s}"
LIKE_DUR="${LIKE_DUR:-20}"
WARMUP="${WARMUP:-5s}"
# LIKE is CPU-bound on MariaDB (every query reads the whole table): as many
# clients as cores give it the same throughput as CONNS, with less waiting.
LIKE_CLIENTS="${LIKE_CLIENTS:-$CONNS}"
bench_results search
COMMAND="$(for v in PHOTOS CONNS DUR LIKE_DUR LIKE_CLIENTS WARMUP BUFFER_POOL SKIP_BUILD RES; do [ -n "${!v:-}" ] && printf "%s='%s' " "$v" "${!v}"; done)bench/search.sh"
[ "${KEEP_UP:-0}" = 1 ] || trap 'stack_down >/dev/null 2>&1 || true' EXIT
LOADS="$RES/loadavg.txt"
: > "$LOADS"
loadavg() { echo "$1: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOADS"; }
stack_up >/dev/null

log "seeding $PHOTOS photos"
seconds() { date +%s.%N; }
t0=$(seconds)
{ echo "DROP TABLE IF EXISTS login, photos, photo_details, photo_words, photo_words_backfill;"
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
# The plans of one two-word query's statements, as the server sends them.
$MYSQL_ROOT_CMD -t > "$RES/explain.txt" <<'SQL'
SELECT 'words a term starts (loose index scan)' AS statement;
EXPLAIN SELECT word FROM photo_words WHERE word >= 'night' AND word < CONCAT('night', X'FF') GROUP BY word LIMIT 33;
SELECT 'several terms: a chunk of one word''s photos, newest first (PostingIntersection''s read)' AS statement;
EXPLAIN (SELECT 0 AS slot, IdPhoto FROM photo_words WHERE word = 'night' AND IdPhoto < 9223372036854775807 ORDER BY IdPhoto DESC LIMIT 64) UNION ALL (SELECT 1 AS slot, IdPhoto FROM photo_words WHERE word = '' AND IdPhoto < 0 ORDER BY IdPhoto DESC LIMIT 64);
SELECT 'the page''s photos, by id' AS statement;
EXPLAIN SELECT p.IdPhoto, p.title, l.IdUser, l.username FROM photos p JOIN login l ON (l.IdUser = p.IdUser) WHERE p.IdPhoto IN (999205, 998000, 0, 0);
SELECT 'how many rows each of the queries'' words has' AS statement;
SELECT word, COUNT(*) AS photos FROM photo_words WHERE word IN ('sunset', 'beach', 'paris', 'zoe', 'night', 'city', 'harbour', 'morning', 'cafe', 'festival', '2019', 'strasse') GROUP BY word ORDER BY photos DESC;
SQL
run_wrk() { # NAME SCRIPT URL
  log "wrk $1 ($CONNS connections, $DUR)" >&2
  loadavg "before $1"
  wrk -t2 -c"$CONNS" -d"$DUR" --latency -s "$HERE/lua/$2" "$3" | grep '^WRKJSON ' | sed 's/^WRKJSON //'
  loadavg "after $1"
}
# Each worker asks each query once before the recorded pass (WARMUP, not
# recorded): the cached figures are the steady state; the no-cache pass
# below is every request's own cost.
log "warm-up: $WARMUP unrecorded"
wrk -t2 -c"$CONNS" -d"$WARMUP" -s "$HERE/lua/search.lua" "$API_URL" >/dev/null
wrk -t2 -c"$CONNS" -d"$WARMUP" -s "$HERE/lua/flickr_search.lua" "${API_URL}services/rest/" >/dev/null
wrk_line=$(run_wrk search search.lua "$API_URL")
flickr_line=$(run_wrk flickr.photos.search flickr_search.lua "${API_URL}services/rest/")
log "again without the answer cache (search_cache_ms = 0)"
echo "search_cache_ms = 0" >> "$SRV_CONF"
stack_start_server >/dev/null
nocache_line=$(run_wrk "search, no cache" search.lua "$API_URL")
flickr_nocache_line=$(run_wrk "flickr.photos.search, no cache" flickr_search.lua "${API_URL}services/rest/")
log "each query alone, no cache, 3 times (per-query.txt)"
loadavg "before per-query"
{ echo "seconds per request, one client, search_cache_ms = 0 (curl's time_total, 3 tries)"
  for file in queries.txt short.txt; do
    while read -r q; do
      [ -n "$q" ] || continue
      printf '%-40s' "$(python3 -c 'import sys, urllib.parse; print(urllib.parse.unquote_plus(sys.argv[1]))' "$q")"
      for try in 1 2 3; do
        printf ' %s' "$(curl -s -o /dev/null -m 30 -w '%{time_total}' --data "command=search&q=$q" "$API_URL")"
      done
      echo
    done < "$HERE/search/$file"
  done; } > "$RES/per-query.txt"
loadavg "after per-query"
log "LIKE ($LIKE_CLIENTS clients, ${LIKE_DUR}s)"
loadavg "before LIKE"
like_line=$(python3 "$HERE/search/like.py" "$MYSQL_ROOT_CMD" "$HERE/search/queries.txt" "$LIKE_CLIENTS" "$LIKE_DUR")
loadavg "after LIKE"
{ echo "{\"name\":\"search\",\"photos\":$PHOTOS,\"words\":$words,\"seed_s\":$(awk "BEGIN{print $t1 - $t0}"),\"backfill_s\":$(awk "BEGIN{print $t2 - $t1}"),\"wrk\":$wrk_line}"
  echo "{\"name\":\"flickr\",\"wrk\":$flickr_line}"
  echo "$like_line"
  echo "{\"name\":\"search_nocache\",\"wrk\":$nocache_line}"
  echo "{\"name\":\"flickr_nocache\",\"wrk\":$flickr_nocache_line}"; } > "$RES/search.jsonl"
python3 - "$RES" "$COMMAND" "$sizes" <<'PY'
import json, sys
res, command, sizes = sys.argv[1:4]
ours, flickr, like, ours_nc, flickr_nc = [json.loads(l) for l in open(f"{res}/search.jsonl")]


def summary(w):
    return (w["requests"], w["requests"] / (w["duration_us"] / 1e6), w["p50_us"] / 1000, w["p99_us"] / 1000,
            w["bad_status"] + w["bad_body"] + w["err_status"] + w["err_timeout"])


requests, rate, p50, p99, bad = summary(ours["wrk"])
f_requests, f_rate, f_p50, f_p99, f_bad = summary(flickr["wrk"])
n_requests, n_rate, n_p50, n_p99, n_bad = summary(ours_nc["wrk"])
fn_requests, fn_rate, fn_p50, fn_p99, fn_bad = summary(flickr_nc["wrk"])


def verdict(ok):
    return "met" if ok else "**missed**"


text = f"""# search at {ours['photos']:,} photos

Command: `{command}` (one run; queries: bench/search/queries.txt, in turn;
plans: explain.txt; each query alone: per-query.txt; the load average
before and after each part: loadavg.txt).

| | requests | rate (req/s) | p50 ms | p99 ms | bad |
|---|---|---|---|---|---|
| `search` (through nginx, wrk, answer cache on: the default) | {requests} | {rate:.0f} | {p50:.2f} | {p99:.2f} | {bad} |
| `flickr.photos.search` JSON (same queries, 50 a page, cache on) | {f_requests} | {f_rate:.0f} | {f_p50:.2f} | {f_p99:.2f} | {f_bad} |
| `search`, no cache (`search_cache_ms = 0`: MariaDB every time) | {n_requests} | {n_rate:.0f} | {n_p50:.2f} | {n_p99:.2f} | {n_bad} |
| `flickr.photos.search` JSON, no cache | {fn_requests} | {fn_rate:.0f} | {fn_p50:.2f} | {fn_p99:.2f} | {fn_bad} |
| `WHERE title LIKE '%word%'` (MariaDB directly) | {like['requests']} | {like['rate']} | {like['p50_ms']} | {like['p99_ms']} | |

Targets (32 connections), cache on / no cache:
- p50 ≤ 5 ms: {p50:.2f} ms {verdict(p50 <= 5)} / {n_p50:.2f} ms {verdict(n_p50 <= 5)}
- p99 ≤ 25 ms: {p99:.2f} ms {verdict(p99 <= 25)} / {n_p99:.2f} ms {verdict(n_p99 <= 25)}
- ≥ 50x LIKE's throughput: **{rate / like['rate']:.0f}x** {verdict(rate / like['rate'] >= 50)} / **{n_rate / like['rate']:.0f}x** {verdict(n_rate / like['rate'] >= 50)}
- flickr.photos.search ≥ 80% of search: **{100 * f_rate / rate:.0f}%** {verdict(f_rate >= 0.8 * rate)} / **{100 * fn_rate / n_rate:.0f}%** {verdict(fn_rate >= 0.8 * n_rate)}
- seed: {ours['seed_s']:.0f} s; backfill (`ireporter search-index`): {ours['backfill_s']:.0f} s for {ours['photos']:,} photos, {ours['words']:,} index rows ({sizes})
"""
text += "\nLoad average (1, 5, 15 min) before and after each timed part:\n\n```\n" + open(f"{res}/loadavg.txt").read() + "```\n"
open(f"{res}/search.md", "w").write(text)
print(text)
PY
