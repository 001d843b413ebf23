#!/usr/bin/env bash
# bench/feed.sh - the home `feed` (issue 28) at PHOTOS photos (default
# 1,000,000) of USERS people (10,000), each following FOLLOWS / USERS others
# (100,000 edges: 10 each), side by side with the public `stream`, one run:
# (1) seed with MariaDB's sequence engine (the first VIEWERS accounts
# registered through the API, for their session cookies; the others and
# every photo and edge in SQL), (2) wrk through nginx, CONNS connections,
# DUR each, every request another viewer's in turn (bench/lua/feed.lua):
# `stream`, `feed`, `feed` with extras, and the Mastodon-compatible API's
# home and public timelines (each viewer's access token from the password
# grant; 20 statuses a page, Mastodon's default), each with the workers'
# answer caches (the default) and without (stream_cache_ms = 0: every
# request queries MariaDB). The Mastodon API's rate limit is off
# (mastodon_rate_limit = 0), as the upload limit is in bench/run.sh. Results: $RES/feed.md, feed.jsonl, explain.txt (the feed
# query's plan), loadavg.txt (the machine may be shared). Run as root; it
# starts its own stack (RUN_DIR /tmp/ireporter-feed-bench, nginx
# 127.0.0.1:8098, MariaDB port 3398) and stops it at the end.
# Environment: PHOTOS, USERS, FOLLOWS, VIEWERS (64), CONNS (32), DUR (10s),
# WARMUP (3s), BUFFER_POOL (1 GiB), SKIP_BUILD=1, RES, FEED_RUN_DIR,
# FEED_PORT, FEED_DB_PORT; KEEP_CONN_AB=1 and ROUNDS (2) for the A/B of
# nginx's kept FastCGI connections instead of the runs above;
# BINARIES_AB="BIN1 BIN2 ..." and ROUNDS for the home timeline served by
# each binary in turn instead (the same stack and data); PROFILE=1 for one
# home timeline run instead, then a perf record -a -g of the whole machine
# during another ($RES/perf-home.txt: by process, by library, by symbol).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../scripts/stack.sh"
LOG_TAG=feed-bench
stack_private "${FEED_RUN_DIR:-/tmp/ireporter-feed-bench}" "${FEED_PORT:-8098}" "${FEED_DB_PORT:-3398}"
PHOTOS="${PHOTOS:-1000000}"
USERS="${USERS:-10000}"
FOLLOWS="${FOLLOWS:-100000}"
VIEWERS="${VIEWERS:-64}"
CONNS="${CONNS:-32}"
DUR="${DUR:-10s}"
WARMUP="${WARMUP:-3s}"
bench_results feed
COMMAND="$(for v in PHOTOS USERS FOLLOWS VIEWERS CONNS DUR WARMUP BUFFER_POOL SKIP_BUILD KEEP_CONN_AB BINARIES_AB ROUNDS PROFILE RES; do [ -n "${!v:-}" ] && printf "%s='%s' " "$v" "${!v}"; done)bench/feed.sh"
[ "$VIEWERS" -le "$USERS" ] && [ "$FOLLOWS" -le $((USERS * (USERS - 1))) ] || die "VIEWERS <= USERS and FOLLOWS <= USERS * (USERS - 1)"
trap 'stack_down >/dev/null 2>&1 || true' EXIT
# Every run registers VIEWERS accounts from 127.0.0.1, and the run folder's
# count of registrations outlives the stack: the hour's limit would refuse
# the second run's.
export STACK_EXTRA_CONFIG=$'mastodon_rate_limit = 0\nregistration_limit = 1000000'
LOADS="$RES/loadavg.txt"
: > "$LOADS"
loadavg() { echo "$1: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOADS"; }
stack_up >/dev/null
$MYSQL_ROOT_CMD -e "SET GLOBAL innodb_buffer_pool_size = ${BUFFER_POOL:-1073741824}"

log "registering $VIEWERS viewers"
{ echo "DROP TABLE IF EXISTS login, photos, photo_details, photo_counts, votes, comments, photo_words, photo_words_backfill, photo_secrets, follows, notifications;"
  cat "$IREPORTER_REPO/sql/schema.sql" "$IREPORTER_REPO"/sql/migrations/*.sql; } | $MYSQL_ROOT_CMD
COOKIES="$RUN_DIR/cookies.txt"
: > "$COOKIES"
for i in $(seq 1 "$VIEWERS"); do
  cookie=$(curl -s -D - -o /dev/null --data "command=register&username=viewer$i&password=$(printf 'feed%s' "$i" | sha1sum | cut -c1-40)" "$API_URL" \
           | tr -d '\r' | sed -n 's/^Set-Cookie: \(PHPSESSID=[^;]*\).*/\1/Ip' | tail -n 1)
  [ -n "$cookie" ] || die "registering viewer$i gave no session"
  echo "$cookie" >> "$COOKIES"
done

log "an access token for each viewer (an app, then the password grant)"
SITE="http://$HTTP_ADDR"
TOKENS="$RUN_DIR/tokens.txt"
json_field() { python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }
app=$(curl -s --data 'client_name=feed-bench&redirect_uris=urn:ietf:wg:oauth:2.0:oob&scopes=read' "$SITE/api/v1/apps")
client_id=$(json_field client_id <<< "$app") && client_secret=$(json_field client_secret <<< "$app") \
  || die "registering the bench's app answered: $app"
: > "$TOKENS"
for i in $(seq 1 "$VIEWERS"); do
  answer=$(curl -s --data "grant_type=password&scope=read&client_id=$client_id&client_secret=$client_secret&username=viewer$i&password=$(printf 'feed%s' "$i" | sha1sum | cut -c1-40)" "$SITE/oauth/token")
  json_field access_token <<< "$answer" >> "$TOKENS" || die "the password grant for viewer$i answered: $answer"
done

log "seeding $USERS people, $PHOTOS photos, $FOLLOWS follows"
seconds() { date +%s.%N; }
t0=$(seconds)
# Person n's photos: every USERS-th; person n follows 1 + (n + k * 997) mod
# USERS for k = 0, 1, ... (never themselves while 997 * k is no multiple of USERS).
$MYSQL_ROOT_CMD <<SQL
INSERT INTO login (username, pass) SELECT CONCAT('person', seq), 'x' FROM seq_$((VIEWERS + 1))_to_${USERS};
INSERT INTO photos (IdUser, title) SELECT 1 + seq % ${USERS}, CONCAT('Photo ', seq) FROM seq_1_to_${PHOTOS};
INSERT IGNORE INTO follows (follower, followee, created)
  SELECT 1 + seq % ${USERS}, 1 + (seq % ${USERS} + 1 + (seq DIV ${USERS}) * 997) % ${USERS}, 0 FROM seq_0_to_$((FOLLOWS - 1));
DELETE FROM follows WHERE follower = followee;
ANALYZE TABLE login, photos, follows;
SQL
t1=$(seconds)
edges=$($MYSQL_ROOT_CMD -N -B -e "SELECT COUNT(*) FROM follows")
$MYSQL_ROOT_CMD -t > "$RES/explain.txt" <<'SQL'
SELECT 'the feed page''s ids (MariaDBFollowStore.feedSQL), viewer 1' AS statement;
EXPLAIN SELECT p.IdPhoto FROM (SELECT followee AS IdUser FROM follows WHERE follower = 1 UNION SELECT 1) people JOIN photos p ON (p.IdUser = people.IdUser) WHERE p.IdPhoto > 0 AND p.IdPhoto < 9223372036854775807 ORDER BY p.IdPhoto DESC LIMIT 50;
SELECT 'how many people viewer 1 follows, and their photos' AS statement;
SELECT COUNT(*) AS followed, (SELECT COUNT(*) FROM photos WHERE IdUser IN (SELECT followee FROM follows WHERE follower = 1) OR IdUser = 1) AS photos FROM follows WHERE follower = 1;
SQL

# Prepared statements MariaDB has run (only our server runs them here).
statements() { $MYSQL_ROOT_CMD -N -B -e "SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'" | cut -f2; }
run_wrk() { # NAME COMMAND FORM
  log "wrk $1 ($CONNS connections, $DUR)" >&2
  COOKIES="$COOKIES" COMMAND="$2" FORM="$3" wrk -t2 -c"$CONNS" -d"$WARMUP" -s "$HERE/lua/feed.lua" "$API_URL" >/dev/null
  loadavg "before $1"
  local before out
  before=$(statements)
  out=$(COOKIES="$COOKIES" COMMAND="$2" FORM="$3" wrk -t2 -c"$CONNS" -d"$DUR" --latency -s "$HERE/lua/feed.lua" "$API_URL" \
        | grep '^WRKJSON ')
  sed "s/^WRKJSON /{\"name\":\"$1\",\"wrk\":/; s/\$/,\"statements\":$(( $(statements) - before ))}/" <<< "$out"
  loadavg "after $1"
}
run_timeline() { # NAME PATH
  log "wrk $1 ($CONNS connections, $DUR)" >&2
  TOKENS="$TOKENS" TIMELINE="$2" wrk -t2 -c"$CONNS" -d"$WARMUP" -s "$HERE/lua/timeline.lua" "$SITE" >/dev/null
  loadavg "before $1"
  local before out
  before=$(statements)
  out=$(TOKENS="$TOKENS" TIMELINE="$2" wrk -t2 -c"$CONNS" -d"$DUR" --latency -s "$HERE/lua/timeline.lua" "$SITE" \
        | grep '^WRKJSON ')
  sed "s|^WRKJSON |{\"name\":\"$1\",\"wrk\":|; s|\$|,\"statements\":$(( $(statements) - before ))}|" <<< "$out"
  loadavg "after $1"
}
runs() { # SUFFIX
  run_wrk "stream$1" stream ""
  run_wrk "feed$1" feed ""
  run_wrk "feed extras$1" feed "&extras=likes,comments,myvote"
  run_timeline "timelines/home$1" /api/v1/timelines/home
  run_timeline "timelines/public$1" /api/v1/timelines/public
}
# KEEP_CONN_AB=1: instead, nginx's kept FastCGI connections on and off in
# turn (the same stack and binary; both API locations' fastcgi_keep_conn
# changed and nginx reloaded), ROUNDS times: `feed` and the home timeline.
keep_conn_ab() {
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for mode in on off; do
      sed -i "s/fastcgi_keep_conn o[nf]*;/fastcgi_keep_conn $mode;/" "$NGX_DIR/ireporter.conf" "$NGX_DIR/ireporter-mastodon.conf"
      nginx_in "$NGX_DIR" -s reload
      sleep 2
      run_wrk "feed, keep_conn $mode ($round)" feed ""
      run_timeline "timelines/home, keep_conn $mode ($round)" /api/v1/timelines/home
    done
  done
}
# BINARIES_AB: the home timeline served by each binary in turn (the server
# restarted on it: its workers' caches and the shared answers start empty),
# ROUNDS times.
binaries_ab() {
  local round binary
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for binary in $BINARIES_AB; do
      BINARY="$binary" stack_start_server >/dev/null
      run_timeline "timelines/home, $binary ($round)" /api/v1/timelines/home
    done
  done
}
# PROFILE=1: every process on the machine (nginx, our workers, MariaDB, wrk)
# sampled during 8 s of a second home timeline run, the caches warm.
profile_home() {
  local data="$RUN_DIR/perf-home.data" wrk_pid
  TOKENS="$TOKENS" TIMELINE=/api/v1/timelines/home timeout 30 wrk -t2 -c"$CONNS" -d12s -s "$HERE/lua/timeline.lua" "$SITE" \
    > /dev/null 2>&1 &
  wrk_pid=$!
  sleep 2
  perf record -a -F 999 -g -o "$data" -- sleep 8 > /dev/null 2>&1 || true
  wait "$wrk_pid" || true
  { echo "# perf record -a -F 999 -g during the home timeline (-c$CONNS): by process, by library, by symbol"
    perf report -i "$data" --no-children --sort comm -g none --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -12
    echo
    perf report -i "$data" --no-children --comm ireporter --sort dso -g none --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -15
    echo
    perf report -i "$data" --no-children --comm ireporter --sort dso,sym -g none --percent-limit 0.5 --stdio 2>/dev/null \
      | grep -v '^#' | grep -v '^$' | head -70
  } > "$RES/perf-home.txt" || true
  rm -f "$data"
  log "profile: $RES/perf-home.txt" >&2
}
if [ "${KEEP_CONN_AB:-0}" = 1 ]; then
  keep_conn_ab > "$RES/feed.jsonl"
elif [ -n "${BINARIES_AB:-}" ]; then
  binaries_ab > "$RES/feed.jsonl"
elif [ "${PROFILE:-0}" = 1 ]; then
  run_timeline "timelines/home" /api/v1/timelines/home > "$RES/feed.jsonl"
  profile_home
else
  { runs ""
    log "again without the answer caches (stream_cache_ms = 0)" >&2
    echo "stream_cache_ms = 0" >> "$SRV_CONF"
    stack_start_server >/dev/null
    runs ", no cache"; } > "$RES/feed.jsonl"
fi

python3 - "$RES" "$COMMAND" "$PHOTOS" "$USERS" "$edges" "$VIEWERS" "$(awk "BEGIN{print $t1 - $t0}")" "$CONNS" <<'PY'
import json, sys
res, command, photos, users, edges, viewers, seed_s, conns = sys.argv[1:9]
rows = []
for line in open(f"{res}/feed.jsonl"):
    run = json.loads(line)
    w = run["wrk"]
    bad = w["bad_status"] + w["bad_body"] + w["err_status"] + w["err_timeout"]
    rows.append(f"| `{run['name']}` | {w['requests']} | {w['requests'] / (w['duration_us'] / 1e6):.0f} | "
                f"{w['p50_us'] / 1000:.2f} | {w['p99_us'] / 1000:.2f} | {run['statements']} | {'**' + str(bad) + '**' if bad else 0} |")
text = f"""# The home feed at {int(photos):,} photos, {int(edges):,} follows

Command: `{command}` (one run; {int(users):,} people, {viewers} signed-in
viewers asking in turn, each following about {int(edges) // int(users)} people; seeded in {float(seed_s):.0f} s;
the feed query's plan: explain.txt; the load average before and after each
run: loadavg.txt, the machine being shared).

| wrk ({conns} connections, through nginx) | requests | rate (req/s) | p50 ms | p99 ms | statements | bad |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}

`stream` is the public timeline, the same for everyone; `feed` each
viewer's own; `timelines/home` and `timelines/public` the same through the
Mastodon-compatible API (20 statuses a page, rendered as Mastodon's JSON). "no cache": `stream_cache_ms = 0`, every request asks MariaDB.
"statements": the prepared statements MariaDB ran during the run.
Target (issue 28): the home timeline's p99 <= 20 ms at 32 connections.
"""
open(f"{res}/feed.md", "w").write(text)
print(text)
PY
