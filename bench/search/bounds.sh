#!/usr/bin/env bash
# bench/search/bounds.sh - what one anonymous question costs at PHOTOS photos
# (default 1,000,000; issue 26): the questions that used to read a table at
# large (two common words that seldom meet, a Flickr search by upload date
# alone or with an author) and a few that never did, each asked alone,
# uncached (search_cache_ms = 0), TRIES times by one client (curl's
# time_total: p50, p99), and the index rows MariaDB read for it
# (Handler_read_* of SHOW GLOBAL STATUS, per request: the private MariaDB
# serves nothing else). Then 4 clients of the date-only search for DUR
# seconds while one client reads `stream` (its p50/p90/max).
# Every binary of BINARIES ("name=path ...", e.g. the build before the change
# and after) runs on the same seeded table in turn. Results: $RES/bounds.md,
# and every statement's plan on that table: $RES/explain.txt.
# The seed is bench/search/seed.py's (titles in several languages, one
# upload a minute from 2010-01-01), indexed by `ireporter search-index`.
# Run as root; it starts its own stack (RUN_DIR /tmp/ireporter-search-bounds,
# nginx 127.0.0.1:8098, MariaDB port 3398) and stops it at the end:
#   BINARIES="before=/path/a after=.build/release/ireporter" bench/search/bounds.sh
# Environment: PHOTOS, TRIES (20), DUR (10), BUFFER_POOL (1 GiB), RES,
# BOUNDS_RUN_DIR, BOUNDS_PORT, BOUNDS_DB_PORT.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../../scripts/stack.sh"
LOG_TAG=search-bounds
export SKIP_BUILD=1
PHOTOS="${PHOTOS:-1000000}"
TRIES="${TRIES:-20}"
DUR="${DUR:-10}"
bench_results search-bounds
read -r -a binaries <<< "${BINARIES:?BINARIES=\"name=path ...\"}"
export BINARY="${binaries[0]#*=}"
stack_private "${BOUNDS_RUN_DIR:-/tmp/ireporter-search-bounds}" "${BOUNDS_PORT:-8098}" "${BOUNDS_DB_PORT:-3398}"
COMMAND="$(for v in PHOTOS TRIES DUR BUFFER_POOL; do [ -z "${!v:-}" ] || printf "%s='%s' " "$v" "${!v}"; done)BINARIES='${BINARIES}' bench/search/bounds.sh"
trap 'stack_down >/dev/null 2>&1 || true' EXIT
stack_up >/dev/null

log "seeding $PHOTOS photos"
{ echo "DROP TABLE IF EXISTS login, photos, photo_details, photo_words, photo_words_backfill;"
  cat "$IREPORTER_REPO/sql/schema.sql" "$IREPORTER_REPO"/sql/migrations/*.sql
  python3 "$HERE/seed.py" "$PHOTOS"
  # A comment for every fifth photo, spread over them (the comments' plan).
  echo "TRUNCATE comments; INSERT INTO comments (IdPhoto, IdUser, text, created) SELECT 2 + (seq * 7919) % $PHOTOS, 1 + seq % 1000, 'nice', 1262304000 + seq FROM seq_1_to_$((PHOTOS / 5));"
  } | $MYSQL_ROOT_CMD
$MYSQL_ROOT_CMD -e "SET GLOBAL innodb_buffer_pool_size = ${BUFFER_POOL:-1073741824}"
log "search-index"
"$SRV_BIN" search-index --config "$SRV_CONF" | tail -n 1
$MYSQL_ROOT_CMD -e "ANALYZE TABLE photos, photo_details, photo_words, comments" >/dev/null
$MYSQL_ROOT_CMD -t < "$HERE/explain-bounds.sql" > "$RES/explain.txt"

# One upload a minute from 2010-01-01 (seed.py): IdPhoto 2 + n at 1262304000 + 60 n.
at() { echo $((1262304000 + 60 * ($1 - 2))); }
old=$(at $((PHOTOS / 100)))          # before 99% of the photos
recent=$(at $((PHOTOS - 1000)))      # the newest 1,000
mid_from=$(at $((PHOTOS / 2))); mid_to=$(at $((PHOTOS / 2 + 5000)))
FLICKR="method=flickr.photos.search&format=json&nojsoncallback=1&per_page=50"
QUESTIONS=(
  "search: night city (never in one title)|command=search&q=night+city"
  "search: harbour morning (never in one title)|command=search&q=harbour+morning"
  "search: festival 2019|command=search&q=festival+2019"
  "search: café paris|command=search&q=caf%C3%A9+paris"
  "search: sunset|command=search&q=sunset"
  "search: s t a b c d|command=search&q=s+t+a+b+c+d"
  "flickr: text=night city|$FLICKR&text=night+city"
  "flickr: text=festival 2019|$FLICKR&text=festival+2019"
  "flickr: max_upload_date before 99%|$FLICKR&max_upload_date=$old"
  "flickr: min_upload_date, the newest 1,000|$FLICKR&min_upload_date=$recent"
  "flickr: a span of 5,000 in the middle|$FLICKR&min_upload_date=$mid_from&max_upload_date=$mid_to"
  "flickr: user_id=7, max_upload_date before 99%|$FLICKR&user_id=7&max_upload_date=$old"
  "flickr: text=sunset, max_upload_date before 99%|$FLICKR&text=sunset&max_upload_date=$old"
  "flickr: user_id=7, text=sunset|$FLICKR&user_id=7&text=sunset"
  "flickr: getRecent|method=flickr.photos.getRecent&format=json&nojsoncallback=1&per_page=50"
  "stream|command=stream"
)
handler_reads() {
  $MYSQL_ROOT_CMD -N -B -e "SELECT SUM(VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME LIKE 'HANDLER_READ%'"
}
# percentile FILE P: the P-th percentile of the numbers in FILE (nearest rank).
percentile() { sort -n "$1" | awk -v p="$2" '{v[NR]=$1} END {i=int((p/100)*NR+0.999); if(i<1)i=1; printf "%.1f", v[i]*1000}'; }

{ echo "# What one anonymous question costs at $PHOTOS photos"
  echo
  echo "Command: \`$COMMAND\` (one run; each question alone, uncached, $TRIES times, one client;"
  echo "rows: MariaDB's Handler_read_* per request; answer: the first 80 bytes of one)."
  echo; } > "$RES/bounds.md"
for entry in "${binaries[@]}"; do
  name="${entry%%=*}"
  export BINARY="${entry#*=}"
  grep -q '^search_cache_ms' "$SRV_CONF" || echo "search_cache_ms = 0" >> "$SRV_CONF"
  stack_start_server >/dev/null
  log "$name: each question alone"
  { echo "## $name"
    echo
    echo "| question | p50 ms | p99 ms | rows read per request | answer |"
    echo "|---|---|---|---|---|"; } >> "$RES/bounds.md"
  for question in "${QUESTIONS[@]}"; do
    label="${question%%|*}"; body="${question#*|}"
    curl -s -o /dev/null -m 60 --data "$body" "$API_URL" || true
    case "$body" in method=*) url="${API_URL}services/rest/" ;; *) url="$API_URL" ;; esac
    curl -s -m 60 -o "$RUN_DIR/answer" --data "$body" "$url" || true
    answer=$(head -c 80 "$RUN_DIR/answer" | tr '|\n`' '/  ')
    before=$(handler_reads)
    : > "$RUN_DIR/times"
    for _ in $(seq "$TRIES"); do
      curl -s -o /dev/null -m 60 -w '%{time_total}\n' --data "$body" "$url" >> "$RUN_DIR/times"
    done
    after=$(handler_reads)
    echo "| $label | $(percentile "$RUN_DIR/times" 50) | $(percentile "$RUN_DIR/times" 99) | $(( (after - before) / TRIES )) | \`$answer\` |" >> "$RES/bounds.md"
  done
  log "$name: 4 clients of the date-only search, $DUR s, and one of stream"
  date_only="$FLICKR&max_upload_date=$old"
  end=$(( $(date +%s) + DUR ))
  pids=()
  for _ in 1 2 3 4; do
    ( n=0; while [ "$(date +%s)" -lt "$end" ] && [ $n -lt 100000 ]; do
        curl -s -o /dev/null -m 60 --data "$date_only" "${API_URL}services/rest/"; n=$((n + 1)); done; echo $n > "$RUN_DIR/clients.$BASHPID" ) &
    pids+=($!)
  done
  : > "$RUN_DIR/stream"
  while [ "$(date +%s)" -lt "$end" ]; do
    curl -s -o /dev/null -m 60 -w '%{time_total}\n' --data "command=stream" "$API_URL" >> "$RUN_DIR/stream"
    sleep 0.05
  done
  wait "${pids[@]}"
  searches=$(cat "$RUN_DIR"/clients.* | awk '{s+=$1} END {print s}'); rm -f "$RUN_DIR"/clients.*
  { echo
    echo "With 4 clients asking the date-only search ($searches answers in $DUR s), \`stream\` from a fifth:"
    echo "p50 $(percentile "$RUN_DIR/stream" 50) ms, p90 $(percentile "$RUN_DIR/stream" 90) ms, max $(percentile "$RUN_DIR/stream" 100) ms ($(wc -l < "$RUN_DIR/stream") requests)."
    echo; } >> "$RES/bounds.md"
done
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$RES/bounds.md"
cat "$RES/bounds.md"
