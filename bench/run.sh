#!/usr/bin/env bash
# bench/run.sh - ours vs the PHP original, one command (run as root, after
# scripts/deps.sh). See bench/README.md.
#
#   bench/run.sh                         everything, REPS=1, 10 s per run, -c32
#   REPS=3 bench/run.sh                  three runs per scenario and server
#   ONLY="stream ceiling_fcgi" bench/run.sh      a subset (scenario names below)
#   SKIP_BUILD=1 bench/run.sh            don't rebuild (use .build/release/ireporter)
#
# What it does:
#   1. the PHP reference: its own up.sh (nginx 127.0.0.1:8081, php-fpm with
#      4 static children, MariaDB 127.0.0.1:3307 / /tmp/ref-mariadb/mysqld.sock)
#   2. seeds THAT database (bench/seed.py: drops and recreates login and
#      photos; 1000 users, 10000 photos) - it is shared by both servers
#   3. our stack: `make up` (release build, our server with $WORKERS worker
#      processes, nginx on 127.0.0.1:$OURS_PORT) in its own RUN_DIR, pointed
#      at the reference's MariaDB through DB_URL; then upload_rate_limit = 0
#      in its config (reloaded with SIGUSR2) and the benchmark locations of
#      bench/nginx-bench.conf.in added to its nginx (reloaded)
#   4. the test JPEGs (bench/make_images.sh), the ceiling responder
#      (bench/ceiling/fcgi_fixed.c, compiled with cc -lfcgi)
#   5. the scenarios, each with wrk through bench/wrkrun.py (CPU per process
#      group, peak memory, foreign requests), ours and PHP alternating (the
#      order flips on every repetition)
#   6. a sequential probe of ours with the access log on (per-request
#      parse/db/image times, e.g. the thumbnail step of a 12 MP upload), and
#      the thumbnail micro-benchmark (bench/micro/thumbnail.sh: our
#      Thumbnailer and vipsthumbnail on the same two photos, $RES/thumbnail.json)
#   7. bench/summarize.py: $RES/results.md (+ results.jsonl, meta.json, raw/)
#   8. stops what it started, removes the session files and uploaded photos
#      the runs made (the seeded DB stays)
#
# Scenarios (ONLY=...): stream ceiling_fcgi ceiling_fcgi_keep ceiling_static stream_id login
#   login_indexed login_hashed upload_small_1s upload_small_64s upload_big_64s
#   (extra, not in the default set: upload_big_1s stream_c64)
#
# Environment (defaults):
#   DUR (10s) CONNS (32) BIG_CONNS (16) THREADS (2) REPS (1) WORKERS (4)
#   OURS_PORT (8088)  BENCH_TMP (/tmp/ireporter-macro)  REF_DIR (../shared/reference)
#   RES (bench/results/<date>[-n])  QUIET_WAIT (30: max s to wait for a quiet machine)
#   CHECK (1: every response is checked by the Lua scripts; 0: off)
#   PROBE (1)  THUMB (1: the thumbnail micro-benchmark; 0: off)  PROFILE (0; or a list of stream stream_id login upload_small upload_big:
#   perf record -g of our workers during an extra 12 s run of each, $RES/perf-*.txt)
#   OURS_CONF (e.g. stream_cache_ms=0: extra settings for our server, comma-separated)
#   STATES (0; 1: what our workers wait for during each of our runs, $RES/worker-states.txt)
#   SCHEMA (reference; migrated: sql/migrations but 001 applied to the seeded
#   database, as an operator applies them while the PHP version still serves
#   it; 001 would let our logins hash passwords that PHP then cannot check.
#   login_indexed is skipped there: 002's index is already in place)
#   BINARY (the server's executable to run, instead of .build/release/ireporter: an A/B)
#   KEEP_UP (0; 1: leave both stacks running)  UPDATE_README (1 on a full run)
#   NICE (-10: nice value of every benchmarked process, both stacks and wrk,
#   so that other work on a shared machine takes less from the runs; 0: off)
set -euo pipefail
# the command as given (the knobs that were set), for the results
BENCH_COMMAND="$(for v in REPS DUR CONNS BIG_CONNS THREADS WORKERS OURS_CONF ONLY CHECK SKIP_BUILD PROBE THUMB PROFILE STATES SCHEMA BINARY QUIET_WAIT NICE; do
  if [ -n "${!v:-}" ]; then printf "%s='%s' " "$v" "${!v}"; fi; done)bench/run.sh"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
REF_DIR="${REF_DIR:-$(cd "$ROOT/../shared/reference" 2>/dev/null && pwd || echo /work/shared/reference)}"
W="${BENCH_TMP:-/tmp/ireporter-macro}"
DUR="${DUR:-10s}"
CONNS="${CONNS:-32}"
BIG_CONNS="${BIG_CONNS:-16}"
THREADS="${THREADS:-2}"
REPS="${REPS:-1}"
WORKERS="${WORKERS:-4}"
OURS_PORT="${OURS_PORT:-8088}"
QUIET_WAIT="${QUIET_WAIT:-30}"
ONLY="${ONLY:-}"
PROBE="${PROBE:-1}"
THUMB="${THUMB:-1}"
PROFILE="${PROFILE:-0}"
STATES="${STATES:-0}"
SCHEMA="${SCHEMA:-reference}"
case "$SCHEMA" in reference|migrated) ;; *) echo "SCHEMA is reference or migrated, not $SCHEMA" >&2; exit 2 ;; esac
KEEP_UP="${KEEP_UP:-0}"
NICE="${NICE:--10}"
export CHECK="${CHECK:-1}"
USERS=1000
PHOTOS=10000
LAST_ID=$((PHOTOS + 1))            # seeded IdPhoto 2..LAST_ID
DEFAULT_SET="stream ceiling_fcgi ceiling_fcgi_keep ceiling_static stream_id login login_indexed login_hashed upload_small_1s upload_small_64s upload_big_64s"
if [ -z "$ONLY" ]; then SET="$DEFAULT_SET"; UPDATE_README="${UPDATE_README:-1}"; else SET="$ONLY"; UPDATE_README="${UPDATE_README:-0}"; fi

. "$ROOT/scripts/lib.sh"
log() { printf '\n[bench] %s\n' "$*"; }
die() { printf '[bench] ERROR: %s\n' "$*" >&2; exit 1; }
want() { [[ " $SET " == *" $1 "* ]]; }

[ "$(id -u)" = 0 ] || die "run as root (the stacks' daemons switch to the www-data / mysql users)"
[ -x "$REF_DIR/up.sh" ] || die "the PHP reference is not at $REF_DIR (set REF_DIR)"
"$ROOT/scripts/deps.sh" bench || die "scripts/deps.sh bench failed"
[[ "$DUR" =~ ^[0-9]+s$ ]] || die "DUR must be seconds like 10s"

# ------------------------------------------------------------ results dir --
if [ -z "${RES:-}" ]; then
  RES="$HERE/results/$(date +%F)"
  n=2
  while [ -e "$RES/results.jsonl" ]; do RES="$HERE/results/$(date +%F)-$n"; n=$((n + 1)); done
fi
mkdir -p "$RES/raw"
STAMP="$(date +%Y%m%d-%H%M%S)"
START_TS=$(date +%s)
exec > >(tee -a "$RES/run.log") 2>&1
log "results: $RES"

# ------------------------------------------------------------------- paths --
REF_URL=http://127.0.0.1:8081
REF_DB_PID=/tmp/ref-mariadb/mariadbd.pid
REF_NGX_PID=/tmp/ref-nginx/nginx.pid
REF_FPM_PID=/tmp/ref-php/php-fpm.pid
REF_UPLOADS=/tmp/ref-php/app/upload
DB=(mariadb --defaults-file=/tmp/ref-mariadb/my.cnf -u root iReport)
DBCMD="mariadb --defaults-file=/tmp/ref-mariadb/my.cnf -u root iReport"
export RUN_DIR="$W/stack"
export PORT="$OURS_PORT"
export WORKERS
export DB_URL="mysql://ireport:ireport@localhost/iReport?socket=/tmp/ref-mariadb/mysqld.sock"
export SESSION_DIR="$RUN_DIR/sessions.$STAMP"
export UPLOAD_DIR="$RUN_DIR/upload"
OURS_URL="http://127.0.0.1:$OURS_PORT"
SRV_PID="$RUN_DIR/ireporter/ireporter.pid"
SRV_CONF="$RUN_DIR/ireporter.conf"
NGX_PID="$RUN_DIR/nginx/nginx.pid"
FCGI_DIR="$W/fcgi"
FCGI_PID="$FCGI_DIR/fixed.pid"
KEEP_PID="$FCGI_DIR/keep.pid"
mkdir -p "$W" "$W/static"
chmod 755 "$W" "$W/static"
touch "$W/run.marker"

# The reference's database is shared: another session's test (the
# differential E2E test resets it with the reference's reset_db.sh) would
# wreck the runs. Its state (row counts, table creation times) is checked
# after every run.
db_state() {
  "${DB[@]}" -N -e "SELECT CONCAT_WS(' ', (SELECT COUNT(*) FROM login), (SELECT COUNT(*) FROM photos WHERE IdPhoto <= $LAST_ID),
    (SELECT GROUP_CONCAT(CREATE_TIME ORDER BY TABLE_NAME) FROM information_schema.TABLES
     WHERE TABLE_SCHEMA = 'iReport' AND TABLE_NAME IN ('login', 'photos')))" 2>&1
}
# The tables sql/migrations adds (SCHEMA=migrated).
drop_migration_tables() {
  local tables
  tables="$(sed -n 's/^CREATE TABLE IF NOT EXISTS `\{0,1\}\([a-z_]*\).*/\1/p' "$ROOT"/sql/migrations/*.sql | paste -sd, -)"
  "${DB[@]}" -e "DROP TABLE IF EXISTS $tables"
}
pid_of() { local p; p="$(pidfile_pid "$1")" && proc_alive "$p" && echo "$p"; }
# set_nice VALUE PIDFILE...: every thread of the pid files' processes and of
# all their descendants (threads and children created later inherit it)
set_nice() {
  local value="$1"; shift
  python3 - "$value" "$@" <<'PY'
import os, sys
value, roots = int(sys.argv[1]), []
for pf in sys.argv[2:]:
    try: roots.append(int(open(pf).read().strip()))
    except (OSError, ValueError): pass
children = {}
for d in os.listdir("/proc"):
    if d.isdigit():
        try: ppid = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError): continue
        children.setdefault(ppid, []).append(int(d))
seen, todo = set(), roots[:]
while todo:
    p = todo.pop()
    if p in seen: continue
    seen.add(p); todo.extend(children.get(p, []))
n, groups = 0, {}
for p in seen:
    try: tids = os.listdir(f"/proc/{p}/task")
    except OSError: continue
    for t in tids:
        try: os.setpriority(os.PRIO_PROCESS, int(t), value); n += 1
        except OSError: pass
    # With sched_autogroup (CONFIG_SCHED_AUTOGROUP, on by default) the CPU
    # is shared between sessions first, and a thread's nice only counts
    # within its session's group: the group's own nice must be set too.
    try: groups.setdefault(open(f"/proc/{p}/autogroup").read().split()[0], p)
    except OSError: pass
for g, p in groups.items():
    try: open(f"/proc/{p}/autogroup", "w").write(str(value))
    except OSError: pass
print(f"   nice {value}: {len(seen)} processes, {n} threads, {len(groups)} autogroups")
PY
}

# ----------------------------------------------------------------- cleanup --
REF_STARTED=0
OURS_STARTED=0
FCGI_STARTED=0
TRASH=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  log "cleaning up"
  for f in "$FCGI_PID" "$KEEP_PID"; do
    if [ "$FCGI_STARTED" = 1 ] && p="$(pid_of "$f")" && pid_matches "$p" fcgi_fixed; then
      kill -TERM "$p"; for _ in $(seq 1 50); do [ -e "/proc/$p" ] || break; sleep 0.1; done
    fi
  done
  if [ -s "$W/hashed.flag" ]; then   # interrupted during login_hashed: plain rows back
    python3 "$HERE/seed.py" --mysql "$DBCMD" --restore-plain && rm -f "$W/hashed.flag"
  fi
  # the reference (and our stack, with KEEP_UP) may stay up: normal priority again
  [ -n "${NICED:-}" ] && set_nice 0 "$REF_NGX_PID" "$REF_FPM_PID" "$REF_DB_PID" "$SRV_PID" "$NGX_PID" "$W/self.pid" > /dev/null
  # Before the reference may stop: its database back to the reference's schema.
  [ -n "${DB_SEEDED:-}" ] && [ "$SCHEMA" = migrated ] && drop_migration_tables
  if [ "$KEEP_UP" != 1 ]; then
    [ "$OURS_STARTED" = 1 ] && make -s -C "$ROOT" down
    [ "$REF_STARTED" = 1 ] && "$REF_DIR/down.sh"
  else
    log "KEEP_UP=1: stacks left running (ours $OURS_URL/iReporter/, PHP $REF_URL/iReporter/)"
  fi
  # Session files and photos made by the runs (never deleted between runs:
  # see README, "ext4 and deleted inodes"). The seeded database stays.
  # Counted (`deleted`) for the next run's results (after_cleanup below).
  local deleted=0
  delete_counted() { # DIR NAME-PATTERN: the files there made by this run
    local n
    n="$(find "$1" -mindepth 1 -maxdepth 1 -name "$2" -newer "$W/run.marker" -print -delete 2>/dev/null | wc -l)"
    deleted=$((deleted + n))
  }
  if [ "$KEEP_UP" != 1 ]; then
    deleted=$(( deleted + $(find "$SESSION_DIR" -type f 2>/dev/null | wc -l) ))
    rm -rf "$SESSION_DIR"
    delete_counted "$UPLOAD_DIR" '*.jpg'
    # PHP's session files: only if we started (and so just stopped) the reference
    [ "$REF_STARTED" = 1 ] && [ -d /tmp/ref-php/sessions ] && delete_counted /tmp/ref-php/sessions 'sess_*'
  fi
  for t in "${TRASH[@]}"; do rm -rf "$t"; done
  [ -d "$REF_UPLOADS" ] && delete_counted "$REF_UPLOADS" '*.jpg'
  echo "$(date +%s) $deleted" > "$W/last-cleanup"
  [ -n "${DB_SEEDED:-}" ] && "${DB[@]}" -e "DELETE FROM photos WHERE IdPhoto > $LAST_ID; ALTER TABLE photos AUTO_INCREMENT = $((LAST_ID + 1))" 2>/dev/null
  log "done in $(( $(date +%s) - START_TS )) s; results: $RES/results.md"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------- 1. PHP reference --
if pid_of "$REF_NGX_PID" >/dev/null && pid_of "$REF_FPM_PID" >/dev/null && pid_of "$REF_DB_PID" >/dev/null; then
  log "PHP reference already running: using it (it will be left running)"
else
  REF_STARTED=1
fi
log "PHP reference: $REF_DIR/up.sh"
FPM_CHILDREN="${FPM_CHILDREN:-4}" "$REF_DIR/up.sh"

# ------------------------------------------------------------ 2. seed it --
log "seeding the reference's database (shared by both servers): $USERS users, $PHOTOS photos"
# The tables of an earlier SCHEMA=migrated run go: every run starts from the reference's schema.
drop_migration_tables
python3 "$HERE/seed.py" --mysql "$DBCMD" --schema "$REF_DIR/sql/schema.sql" \
  --users "$USERS" --photos "$PHOTOS" --users-out "$W/users.txt"
DB_SEEDED=1
if [ "$SCHEMA" = migrated ]; then
  for migration in "$ROOT"/sql/migrations/*.sql; do
    case "$migration" in */001-*) continue ;; esac
    log "SCHEMA=migrated: $(basename "$migration")"
    "${DB[@]}" < "$migration" || die "$migration failed"
  done
fi
DB_STATE="$(db_state)"
rm -f "$W/hashed.flag"
# PHP's session directory starts empty; the old one is renamed away (a rename
# frees no inode) and deleted at the very end.
if [ "$REF_STARTED" = 1 ] && [ -d /tmp/ref-php/sessions ]; then
  mv /tmp/ref-php/sessions "/tmp/ref-php/sessions.old.$STAMP"
  TRASH+=("/tmp/ref-php/sessions.old.$STAMP")
  install -d -m 700 -o www-data -g www-data /tmp/ref-php/sessions
fi

# ------------------------------------------------------------ 3. our stack --
if pid_of "$SRV_PID" >/dev/null; then log "our bench stack was running in $RUN_DIR: restarting it"; fi
OURS_STARTED=1
log "our stack: make up (RUN_DIR=$RUN_DIR PORT=$PORT WORKERS=$WORKERS DB_URL=<the reference's MariaDB>${SKIP_BUILD:+ SKIP_BUILD=$SKIP_BUILD})"
make -s -C "$ROOT" up

children_of() { ps -o pid= --ppid "$1" | tr -d ' ' | sort | tr '\n' ' '; }
reload_ours() { reload_server "$SRV_PID" "$WORKERS"; }
set_conf() { # KEY VALUE|"" : set (or remove) a key in our server's config
  sed -i "/^$1 *=/d" "$SRV_CONF"
  [ -z "$2" ] || printf '%s = %s\n' "$1" "$2" >> "$SRV_CONF"
  # The master runs as www-data (config `user`) once started: to re-read the
  # file on SIGUSR2 it must own it (stack.sh leaves it root's, mode 600).
  chown www-data "$SRV_CONF"
}
set_conf upload_rate_limit 0
# OURS_CONF="key=value[,key=value]": more settings, e.g. stream_cache_ms=0 to
# measure without the stream cache
for kv in ${OURS_CONF:+${OURS_CONF//,/ }}; do set_conf "${kv%%=*}" "${kv#*=}"; done
reload_ours
log "our config ($SRV_CONF):"; grep -v '^#' "$SRV_CONF" | sed -e 's/^/    /' -e 's#//ireport:[^@]*@#//ireport:***@#'

# the benchmark locations in our nginx
sed -e "s#@W@#$W#g" "$HERE/nginx-bench.conf.in" > "$W/nginx-bench.conf"
grep -qF "include $W/nginx-bench.conf;" "$RUN_DIR/nginx/nginx.conf" \
  || sed -i "s#^\([[:space:]]*\)include $RUN_DIR/nginx/ireporter.conf;#&\n\1include $W/nginx-bench.conf;#" "$RUN_DIR/nginx/nginx.conf"
grep -qF "include $W/nginx-bench.conf;" "$RUN_DIR/nginx/nginx.conf" || die "could not add the bench locations to $RUN_DIR/nginx/nginx.conf"
# ... and their upstream (kept FastCGI connections), at the http level
sed -e "s#@W@#$W#g" "$HERE/nginx-bench-http.conf.in" > "$W/nginx-bench-http.conf"
grep -qF "include $W/nginx-bench-http.conf;" "$RUN_DIR/nginx/nginx.conf" \
  || sed -i "0,/^\([[:space:]]*\)server {/s##\1include $W/nginx-bench-http.conf;\n&#" "$RUN_DIR/nginx/nginx.conf"
grep -qF "include $W/nginx-bench-http.conf;" "$RUN_DIR/nginx/nginx.conf" || die "could not add the bench upstream to $RUN_DIR/nginx/nginx.conf"

# ------------------------------------------------ 4. images, ceiling app --
log "test images"
"$HERE/make_images.sh" "$W/img"
SMALL="$W/img/small.jpg"; BIG="$W/img/big.jpg"

curl -sf -X POST -d command=stream "$OURS_URL/iReporter/" > "$W/static/stream.json" || die "ours: stream failed"
curl -sf -X POST -d command=stream "$REF_URL/iReporter/" > "$W/stream.php.json" || die "PHP: stream failed"
python3 - "$W/static/stream.json" "$W/stream.php.json" "$LAST_ID" <<'PY'
import json, sys
ours, php, last = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), sys.argv[3]
d = json.loads(ours)
assert len(d["result"]) == 50 and d["result"][0]["IdPhoto"] == last, d["result"][:1]
print(f"stream answer: {len(ours)} bytes, 50 rows, newest IdPhoto {last}; "
      + ("byte-identical to PHP's" if ours == php else f"DIFFERS from PHP's ({len(php)} bytes)"))
PY
chmod 644 "$W/static/stream.json"

log "ceiling responder: cc bench/ceiling/fcgi_fixed.c -lfcgi"
install -d -m 755 -o www-data -g www-data "$FCGI_DIR"
cc -O2 -o "$FCGI_DIR/fcgi_fixed" "$HERE/ceiling/fcgi_fixed.c" -lfcgi
# Two of them: one connection per request (fixed.sock), and kept connections
# served side by side in poll() (keep.sock, ceiling_fcgi_keep).
for mode in fixed keep; do
  pidf="$FCGI_DIR/$mode.pid"
  if p="$(pid_of "$pidf")" && pid_matches "$p" fcgi_fixed; then kill -TERM "$p"; sleep 0.5; fi
  rm -f "$pidf"
  ( cd / && exec setsid -f runuser -u www-data -- "$FCGI_DIR/fcgi_fixed" "$FCGI_DIR/$mode.sock" \
      "$W/static/stream.json" "$WORKERS" "$pidf" "$mode" >> "$FCGI_DIR/fcgi_fixed.log" 2>&1 < /dev/null )
  FCGI_STARTED=1
  for _ in $(seq 1 50); do [ -S "$FCGI_DIR/$mode.sock" ] && [ -s "$pidf" ] && break; sleep 0.1; done
done
nginx_in "$RUN_DIR/nginx" -t -q || die "nginx config test failed"
# Until the old workers (without the /bench/ locations) have left, they may answer.
nginx_reload "$RUN_DIR/nginx" || die "nginx's old workers did not leave after its reload"
answers_stream() { cmp -s <(curl -sf -X POST -d command=stream "$OURS_URL/bench/$1") "$W/static/stream.json"; }
for location in fcgi_fixed fcgi_keep; do
  if ! answers_stream "$location"; then
    curl -s -o /dev/null -w "[bench] POST /bench/$location: HTTP %{http_code}\n" -X POST -d command=stream "$OURS_URL/bench/$location"
    ls -l "$FCGI_DIR"; tail -n 5 "$FCGI_DIR/fcgi_fixed.log" "$RUN_DIR/nginx/error.log"
    die "/bench/$location does not answer the stream bytes"
  fi
done
if [ "$NICE" != 0 ]; then
  log "benchmarked processes at nice $NICE (both stacks, MariaDB, the ceiling responder; wrk is started with it)"
  set_nice "$NICE" "$SRV_PID" "$NGX_PID" "$FCGI_PID" "$KEEP_PID" "$REF_NGX_PID" "$REF_FPM_PID" "$REF_DB_PID"
  echo $$ > "$W/self.pid"; set_nice "$NICE" "$W/self.pid"   # this script's session: wrk and wrkrun.py
  NICED=1
fi
cmp -s <(curl -sf "$OURS_URL/bench/stream.json") "$W/static/stream.json" || die "/bench/stream.json does not serve the stream bytes"

# ------------------------------------------------------------------ meta --
explain() { # the stream query as both servers send it
  "${DB[@]}" -e 'EXPLAIN SELECT IdPhoto, title, l.IdUser, username FROM photos p JOIN login l ON (l.IdUser = p.IdUser) ORDER BY IdPhoto DESC LIMIT 50'
}
PHPV="$(php -r 'echo PHP_MAJOR_VERSION.".".PHP_MINOR_VERSION;')"
BENCH_COMMAND="$BENCH_COMMAND" python3 - "$RES/meta.json" <<PY
import json, subprocess, sys, platform, os, time
def sh(c):
    r = subprocess.run(c, shell=True, capture_output=True, text=True)
    return r.stdout.strip() or r.stderr.strip()
def after_cleanup():
    # The previous run's deletions, if ext4 without a journal may still be
    # skipping their inodes (60 s, 360 s while their table block is dirty).
    try:
        at, files = map(int, open("$W/last-cleanup").read().split())
    except (OSError, ValueError):
        return None
    ago = int(time.time()) - at
    return {"seconds": ago, "files": files} if ago < 360 and files > 0 else None
meta = {
  "date": sh("date -u +%FT%TZ"), "command": os.environ["BENCH_COMMAND"],
  "reps": int("$REPS"), "duration": "$DUR", "conns": int("$CONNS"), "big_conns": int("$BIG_CONNS"),
  "threads": int("$THREADS"), "workers": int("$WORKERS"), "check": "$CHECK" != "0",
  "scenarios": "$SET".split(),
  "machine": {"nproc": os.cpu_count(), "cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-") + " (family " + sh("grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' '") + " model " + sh("grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | tr -d ' '") + ")",
              "kernel": platform.release(), "os": sh(". /etc/os-release; echo \$PRETTY_NAME"),
              "mem": sh("free -h | awk '/Mem:/{print \$2}'"),
              "fs_tmp": sh("findmnt -no FSTYPE,OPTIONS -T /tmp")},
  "versions": {"nginx": sh("nginx -v 2>&1"), "php-fpm": sh("php-fpm$PHPV -v | head -1"),
               "mariadb": sh("mariadbd --version"), "wrk": sh("wrk -v 2>&1 | head -1"),
               "swift": sh("swift --version 2>&1 | head -1"),
               "libjpeg-turbo": sh("dpkg-query -W -f='\${Version}' libjpeg62-turbo"),
               "libgd": sh("dpkg-query -W -f='\${Version}' libgd3"),
               "libargon2": sh("dpkg-query -W -f='\${Version}' libargon2-1"),
               "libfcgi": sh("dpkg-query -W -f='\${Version}' libfcgi0ldbl || dpkg-query -W -f='\${Version}' libfcgi-bin")},
  "ours": {"git": sh("git -C $ROOT rev-parse --short HEAD"),
           "dirty_files": len(sh("git -C $ROOT status --porcelain").splitlines()),
           "binary_sha256": sh("sha256sum $RUN_DIR/bin/ireporter | cut -c1-16"),
           "version": sh("$RUN_DIR/bin/ireporter --version"),
           "config": [l for l in open("$SRV_CONF").read().splitlines() if l and not l.startswith("#") and "db_url" not in l]},
  "php": {"fpm_children": sh("grep -E '^pm.max_children' /tmp/ref-php/php-fpm.conf")},
  "db": {"url": "the PHP reference's MariaDB, /tmp/ref-mariadb/mysqld.sock, database iReport (shared)",
         "users": $USERS, "photos": $PHOTOS,
         "explain_seeded": sh("""$DBCMD -t -e 'EXPLAIN SELECT IdPhoto, title, l.IdUser, username FROM photos p JOIN login l ON (l.IdUser = p.IdUser) ORDER BY IdPhoto DESC LIMIT 50'""")},
  "images": sh("stat -c '%n %s' $SMALL $BIG"),
  "after_cleanup": after_cleanup(),
}
json.dump(meta, open(sys.argv[1], "w"), indent=1)
print(json.dumps(meta["machine"]), "\n", json.dumps(meta["versions"]))
print(meta["db"]["explain_seeded"])
PY

# ------------------------------------------------------------- 5. helpers --
login_cookie() { # URL username password -> PHPSESSID=...
  curl -s -D - -o /dev/null -X POST -d "command=login&username=$2&password=$3" "$1/iReporter/" \
    | grep -io 'set-cookie: *PHPSESSID=[A-Za-z0-9,-]*' | tail -1 | sed 's/^[Ss]et-[Cc]ookie: *//'
}
cookies_for() { # URL N FILE: the first N users logged in, one cookie per line
  head -n "$2" "$W/users.txt" | while read -r u p; do login_cookie "$1" "$u" "$p"; done > "$3"
  [ "$(grep -c PHPSESSID "$3")" = "$2" ] || die "could not log in $2 users at $1"
}

# bench_one SERVER NAME REP CONNS LUA [wrk args...]
bench_one() {
  local s="$1" name="$2" rep="$3" conns="$4" lua="$5" url status groups=()
  shift 5
  case "$s" in
    ours)   url="$OURS_URL/iReporter/"; status="$OURS_URL/bench/nginx_status"
            groups=(--group "ours=$SRV_PID" --group "nginx=$NGX_PID" --group "mariadbd=$REF_DB_PID") ;;
    php)    url="$REF_URL/iReporter/"; status="$REF_URL/bench/nginx_status"
            groups=(--group "php-fpm=$REF_FPM_PID" --group "nginx=$REF_NGX_PID" --group "mariadbd=$REF_DB_PID") ;;
    fcgi)   url="$OURS_URL/bench/fcgi_fixed"; status="$OURS_URL/bench/nginx_status"
            groups=(--group "fcgi_fixed=$FCGI_PID" --group "nginx=$NGX_PID") ;;
    keep)   url="$OURS_URL/bench/fcgi_keep"; status="$OURS_URL/bench/nginx_status"
            groups=(--group "fcgi_fixed=$KEEP_PID" --group "nginx=$NGX_PID") ;;
    static) url="$OURS_URL/bench/stream.json"; status="$OURS_URL/bench/nginx_status"
            groups=(--group "nginx=$NGX_PID") ;;
  esac
  case "$lua" in   # common.lua alone (a GET) has no default EXPECT
    common.lua) export EXPECT='{"result":[' ;;
    *) unset EXPECT ;;
  esac
  local var
  for var in COOKIE COOKIES_FILE; do
    local v="${var}_${s}"; export "$var=${!v:-}"
  done
  echo; echo "######## $name [$s] (run $rep/$REPS)"
  if [ "$STATES" = 1 ] && [ "$s" = ours ]; then
    python3 "$HERE/worker_states.py" "$SRV_PID" "$name, run $rep" "$RES/worker-states.txt" &
  fi
  python3 "$HERE/wrkrun.py" --name "$name" --server "$s" --rep "$rep" --out "$RES/results.jsonl" \
      --status-url "$status" --wait-quiet "$QUIET_WAIT" "${groups[@]}" -- \
      nice -n "$NICE" wrk -t"$THREADS" -c"$conns" -d"$DUR" --latency "$@" -s "$HERE/lua/$lua" "$url" \
    | tee "$RES/raw/$name.$s.$rep.txt" || echo "(wrkrun exited non-zero)"
  [ -z "${AFTER:-}" ] || "$AFTER" "$s" "$name" "$rep"
  local now
  now="$(db_state)"
  if [ "$now" != "$DB_STATE" ]; then
    echo "{\"check\": \"db_changed\", \"name\": \"$name\", \"server\": \"$s\", \"rep\": $rep}" >> "$RES/checks.jsonl"
    die "the shared database changed during $name [$s] (was: $DB_STATE, now: $now): someone else reset or modified it (another session's differential test?). These results are not valid; run again later."
  fi
}

# scenario NAME "SERVERS" CONNS LUA [wrk args...]: REPS times, servers alternating
scenario() {
  local name="$1" servers="$2" conns="$3" lua="$4" r s order
  shift 4
  want "$name" || return 0
  for r in $(seq 1 "$REPS"); do
    order="$servers"
    (( r % 2 == 0 )) && order="$(tr ' ' '\n' <<< "$servers" | tac | tr '\n' ' ')"
    for s in $order; do bench_one "$s" "$name" "$r" "$conns" "$lua" "$@"; done
  done
}

# After an upload run: wait for uploads in flight, count the rows and photo
# files it made, then delete its rows (AUTO_INCREMENT keeps counting; files
# stay until the end). The stream answer stays as seeded.
check_uploads() {
  local s="$1" name="$2" rep="$3" rows prev=-1 files dir
  for _ in $(seq 1 60); do
    rows="$("${DB[@]}" -N -e "SELECT COUNT(*) FROM photos WHERE IdPhoto > $LAST_ID")"
    [ "$rows" = "$prev" ] && break; prev="$rows"; sleep 1
  done
  dir="$UPLOAD_DIR"; [ "$s" = php ] && dir="$REF_UPLOADS"
  files="$(find "$dir" -maxdepth 1 -name '*-thumb.jpg' -newer "$W/upload.marker" | wc -l)"
  python3 - "$RES/checks.jsonl" "$name" "$s" "$rep" "$rows" "$files" <<'PY'
import json, sys
path, name, server, rep, rows, thumbs = sys.argv[1:]
json.dump({"check": "uploads", "name": name, "server": server, "rep": int(rep), "rows": int(rows),
           "thumbnails": int(thumbs)}, open(path, "a")); open(path, "a").write("\n")
print(f"   uploads stored by this run: {rows} rows, {thumbs} thumbnails")
PY
  "${DB[@]}" -e "DELETE FROM photos WHERE IdPhoto > $LAST_ID"
  touch "$W/upload.marker"
}

# --------------------------------------------------------------- 5. runs --
: > "$RES/checks.jsonl"
export USERS_FILE="$W/users.txt" ID_MIN=2 ID_MAX="$LAST_ID"
log "runs: $SET (REPS=$REPS, DUR=$DUR, -c$CONNS, -t$THREADS, response checks: $([ "$CHECK" = 0 ] && echo off || echo on))"

scenario stream "ours php" "$CONNS" stream.lua
scenario stream_c64 "ours php" 64 stream.lua
scenario ceiling_fcgi "fcgi" "$CONNS" stream.lua
scenario ceiling_fcgi_keep "keep" "$CONNS" stream.lua
scenario ceiling_static "static" "$CONNS" common.lua
scenario stream_id "ours php" "$CONNS" stream_id.lua
scenario login "ours php" "$CONNS" login.lua
if want login_indexed && [ "$SCHEMA" = migrated ]; then
  log "login_indexed skipped: SCHEMA=migrated has 002's index already (login is that run)"
elif want login_indexed; then
  # The schema as our install leaves it (scripts/mariadb.sh applies
  # sql/migrations): the original looks accounts up with a full table scan.
  # Both servers on the same indexed table; the index goes again afterwards.
  "${DB[@]}" < "$ROOT/sql/migrations/002-index-username.sql"
  DB_STATE="$(db_state)"
  scenario login_indexed "ours php" "$CONNS" login.lua
  "${DB[@]}" -e "DROP INDEX username ON login"
  DB_STATE="$(db_state)"
fi

if want upload_small_1s || want upload_small_64s || want upload_big_64s || want upload_big_1s; then
  log "logging in for the upload runs"
  COOKIE_ours="$(login_cookie "$OURS_URL" $(sed -n 1p "$W/users.txt"))"
  COOKIE_php="$(login_cookie "$REF_URL" $(sed -n 1p "$W/users.txt"))"
  [ -n "$COOKIE_ours" ] && [ -n "$COOKIE_php" ] || die "could not log in user0001"
  cookies_for "$OURS_URL" 64 "$W/cookies64.ours"
  cookies_for "$REF_URL" 64 "$W/cookies64.php"
  touch "$W/upload.marker"
  AFTER=check_uploads
  export UPLOAD_FILE="$SMALL"
  scenario upload_small_1s "ours php" "$CONNS" upload.lua --timeout 30s
  COOKIE_ours_1s="$COOKIE_ours"; COOKIE_php_1s="$COOKIE_php"
  COOKIE_ours=""; COOKIE_php=""; COOKIES_FILE_ours="$W/cookies64.ours"; COOKIES_FILE_php="$W/cookies64.php"
  scenario upload_small_64s "ours php" "$CONNS" upload.lua --timeout 30s
  export UPLOAD_FILE="$BIG"
  scenario upload_big_64s "ours php" "$BIG_CONNS" upload.lua --timeout 60s
  COOKIES_FILE_ours=""; COOKIES_FILE_php=""; COOKIE_ours="$COOKIE_ours_1s"; COOKIE_php="$COOKIE_php_1s"
  scenario upload_big_1s "ours php" "$BIG_CONNS" upload.lua --timeout 60s
  unset AFTER COOKIE_ours COOKIE_php
fi
if want login_hashed; then
  # Last of the load runs: the first hashed logins make each worker keep
  # Argon2's 19 MiB (see README), which would inflate the memory figures of
  # the runs after it.
  # Ours only: the PHP original cannot check a hash. migrate-passwords (the
  # server's own command) hashes the seeded passwords in place; its result
  # is kept in $W so later runs only reload it (hashing 1000 passwords takes
  # a while). Undone afterwards (plain values, varchar(45)).
  HASHES="$W/hashes.tsv"
  echo 1 > "$W/hashed.flag"
  if [ -s "$HASHES" ] && [ "$(wc -l < "$HASHES")" = "$USERS" ]; then
    python3 "$HERE/seed.py" --mysql "$DBCMD" --apply-hashes "$HASHES"
  else
    log "ireporter migrate-passwords (Argon2id, the server's defaults)"
    t0=$(date +%s)
    "$RUN_DIR/bin/ireporter" migrate-passwords --config "$SRV_CONF"
    echo "   took $(( $(date +%s) - t0 )) s"
    python3 "$HERE/seed.py" --mysql "$DBCMD" --dump-hashes "$HASHES"
  fi
  before="$("${DB[@]}" -N -e 'SELECT pass FROM login WHERE IdUser = 1')"
  c="$(curl -s -X POST -d "command=login&username=user0001&password=$(sed -n 1p "$W/users.txt" | cut -d' ' -f2)" "$OURS_URL/iReporter/")"
  [[ "$c" == '{"result":[{"IdUser":1,'* || "$c" == '{"result":[{"IdUser":"1",'* ]] || die "login against hashed rows failed: $c"
  after="$("${DB[@]}" -N -e 'SELECT pass FROM login WHERE IdUser = 1')"
  if [ "$before" != "$after" ]; then
    rm -f "$HASHES"; die "the server re-hashed a cached hash (other parameters?): cache removed, run again"
  fi
  echo "$before" | cut -d'$' -f1-4 | sed 's/^/   hash parameters: /' | tee "$RES/hash_params.txt"
  DB_STATE="$(db_state)"
  scenario login_hashed "ours" "$CONNS" login.lua --timeout 10s
  # Back to plain rows in a narrow column. First let the logins still in
  # flight when wrk stopped finish (a worker that finds a plain value while it
  # believes the column wide - it re-checks the width once a minute - would
  # store a hash into the narrowed column, truncated), then fresh workers.
  sleep 3
  python3 "$HERE/seed.py" --mysql "$DBCMD" --restore-plain
  reload_ours
  rm -f "$W/hashed.flag"
  DB_STATE="$(db_state)"
fi

{ echo "EXPLAIN stream (end of the runs):"; explain; } > "$RES/explain_end.txt"

# ------------------------------------------------------------- 6. probe --
if [ "$PROBE" = 1 ]; then
  log "sequential probe of ours with the access log on"
  : > "$W/probe-access.log"; chown www-data:www-data "$W/probe-access.log"
  set_conf access_log "$W/probe-access.log"
  reload_ours
  python3 "$HERE/probe.py" --url "$OURS_URL/iReporter/" --users "$W/users.txt" --small "$SMALL" --big "$BIG" \
      --access-log "$W/probe-access.log" --out "$RES/probe.json" || echo "(probe failed)"
  set_conf access_log ""
  reload_ours
  "${DB[@]}" -e "DELETE FROM photos WHERE IdPhoto > $LAST_ID"
fi

if [ "$THUMB" = 1 ]; then
  log "thumbnail micro-benchmark: our Thumbnailer and vipsthumbnail, same photos, one at a time"
  FILES="$SMALL:$BIG" N=30 THUMB_JSON="$RES/thumbnail.json" "$HERE/micro/thumbnail.sh" \
    || echo "(thumbnail micro-benchmark failed)"
fi

if [ "$PROFILE" != 0 ] && command -v perf >/dev/null; then
  [ "$PROFILE" = 1 ] && PROFILE=stream
  master="$(pid_of "$SRV_PID")"
  cookie="$(login_cookie "$OURS_URL" $(sed -n 1p "$W/users.txt"))"
  for what in $PROFILE; do
    log "perf profile of our workers during an extra $what run (12 s, not in the results)"
    case "$what" in
      stream) lua=stream.lua; extra=() ;;
      stream_id) lua=stream_id.lua; extra=() ;;
      login) lua=login.lua; extra=() ;;
      upload_small) lua=upload.lua; extra=(--timeout 30s); export UPLOAD_FILE="$SMALL" ;;
      upload_big) lua=upload.lua; extra=(--timeout 60s); export UPLOAD_FILE="$BIG" ;;
      *) echo "   unknown PROFILE entry $what (stream stream_id login upload_small upload_big)"; continue ;;
    esac
    pids="$(children_of "$master" | tr ' ' ',' | sed 's/,$//')"
    COOKIE="$cookie" COOKIES_FILE="" timeout 30 wrk -t"$THREADS" -c"$CONNS" -d12s "${extra[@]}" -s "$HERE/lua/$lua" \
      "$OURS_URL/iReporter/" > "$W/perf-wrk.txt" 2>&1 &
    wrk_pid=$!
    sleep 1
    perf record -F 999 -g -p "$pids" -o "$W/perf-$what.data" -- sleep 8 > /dev/null 2>&1 || true
    wait "$wrk_pid" || true
    { echo "# perf record -F 999 -g of our workers during $what (-c$CONNS); flat profile, by library then by symbol"
      perf report -i "$W/perf-$what.data" --no-children --sort dso -g none --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -12
      echo
      perf report -i "$W/perf-$what.data" --no-children --sort dso,sym -g none --percent-limit 0.4 --stdio 2>/dev/null \
        | grep -v '^#' | grep -v '^$' | head -60
    } > "$RES/perf-$what.txt" || true
    perf report -i "$W/perf-$what.data" --no-children --percent-limit 2 --stdio 2>/dev/null \
      | grep -v '^$' | head -300 > "$RES/perf-$what-callgraph.txt" || true
    echo "   $RES/perf-$what.txt (flat), $RES/perf-$what-callgraph.txt"
    "${DB[@]}" -e "DELETE FROM photos WHERE IdPhoto > $LAST_ID"
  done
fi

# ------------------------------------------------------------ 7. results --
log "summary"
args=("$RES"); [ "$UPDATE_README" = 1 ] && args+=(--readme "$HERE/README.md")
python3 "$HERE/summarize.py" "${args[@]}"
