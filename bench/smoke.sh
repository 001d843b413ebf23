#!/usr/bin/env bash
# bench/smoke.sh [URL] - a seconds-long run of the benchmark scenarios against
# an ALREADY RUNNING iReporter stack (ours), for CI:
#
#   bench/smoke.sh http://127.0.0.1:8090/iReporter/     (default: http://127.0.0.1:8080/iReporter/)
#
# Exits non-zero only if a request fails: a socket error or timeout, an HTTP
# status other than 200, or a body that is not the expected JSON (checked in
# full for one request of each kind, by its start for every request under
# load). Never on speed: the req/s it prints are for information only.
#
# It needs no seeded database: it registers SMOKE_USERS fresh accounts
# (smoke<time><n>, left in the database), uploads through them, then runs
# wrk for SMOKE_DUR (1s) with SMOKE_CONNS (4) connections per scenario:
#   stream, stream with IdPhoto, login (the fresh accounts in turn),
#   upload 640x640 and upload 4032x3024 (sessions of the fresh accounts in
#   turn, so that the server's default upload_rate_limit of 120 per user and
#   hour is not reached: a one-session upload run would be refused by it).
# Needs wrk, curl, python3 and ImageMagick 6 (test JPEGs, made once into
# SMOKE_TMP, default /tmp/ireporter-smoke).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
URL="${1:-${SMOKE_URL:-http://127.0.0.1:8080/iReporter/}}"
DUR="${SMOKE_DUR:-1s}"
CONNS="${SMOKE_CONNS:-4}"
NUSERS="${SMOKE_USERS:-32}"
T="${SMOKE_TMP:-/tmp/ireporter-smoke}"
export CHECK=1
fail=0

say() { printf '[smoke] %s\n' "$*"; }
bad() { printf '[smoke] FAIL: %s\n' "$*" >&2; fail=1; }
for c in wrk curl python3; do command -v "$c" >/dev/null || { echo "[smoke] need $c" >&2; exit 2; }; done
mkdir -p "$T"
RUN="$(mktemp -d "$T/run.XXXXXX")"
trap 'rm -rf "$RUN"' EXIT

"$HERE/make_images.sh" "$T/img" > /dev/null
SMALL="$T/img/small.jpg"; BIG="$T/img/big.jpg"

# post EXPECTED-SHAPE CURL-ARGS...: one request, checked in full (python);
# prints the Set-Cookie session, if any
post() {
  local shape="$1"; shift
  local hdr="$RUN/h" body="$RUN/b" code
  code="$(curl -s -o "$body" -D "$hdr" -w '%{http_code}' --max-time 60 -X POST "$@" "$URL")" || code=000
  if [ "$code" != 200 ]; then bad "HTTP $code for $shape: $(head -c 200 "$body")"; return 1; fi
  python3 - "$shape" "$body" <<'PY' || { bad "unexpected body for $shape: $(head -c 200 "$body")"; return 1; }
import json, sys
shape, d = sys.argv[1], json.load(open(sys.argv[2], "rb"))
if shape == "stream":
    assert isinstance(d["result"], list)
    for r in d["result"]:
        assert set(r) == {"IdPhoto", "title", "IdUser", "username"}, r
elif shape == "login":
    assert len(d["result"]) == 1 and set(d["result"][0]) == {"IdUser", "username"}, d
elif shape == "upload":
    assert d == {"successful": 1}, d
PY
  grep -io 'set-cookie: *PHPSESSID=[A-Za-z0-9,-]*' "$hdr" | tail -1 | sed 's/^[Ss]et-[Cc]ookie: *//' || true
}

say "target: $URL ($DUR per scenario, $CONNS connections)"
post stream -d command=stream > /dev/null || { say "the stack does not answer stream correctly"; exit 1; }

# fresh accounts (register logs in: the answer is login's). The server counts
# registrations per client address (from the 100th in an hour it refuses
# them for a while): against a loopback server they come from an address of
# their own, not from 127.0.0.1, where the E2E suite registered its users.
source=()
case "$URL" in
  http://127.*|http://localhost[:/]*) source=(--interface "127.$((RANDOM % 100 + 100)).$((RANDOM % 250 + 1)).1") ;;
esac
prefix="smoke$(date +%s)$$"
: > "$RUN/users.txt"; : > "$RUN/cookies.txt"
for i in $(seq -w 1 "$NUSERS"); do
  pw="$(printf '%s' "$prefix$i" | sha1sum | cut -c1-40)"
  # (post's own `bad` runs in this command substitution's subshell: fail here)
  c="$(post login "${source[@]}" -d command=register -d "username=$prefix$i" -d "password=$pw")" || { fail=1; break; }
  [ -n "$c" ] || { bad "register gave no session cookie"; break; }
  echo "$prefix$i $pw" >> "$RUN/users.txt"; echo "$c" >> "$RUN/cookies.txt"
done
[ "$fail" = 0 ] || exit 1
c1="$(sed -n 1p "$RUN/cookies.txt")"
post upload -H "Cookie: $c1" -F command=upload -F title=smoke -F "file=@$SMALL;filename=photo.jpg;type=image/jpeg" > /dev/null || exit 1
post login -d command=login -d "username=$(cut -d' ' -f1 "$RUN/users.txt" | head -1)" -d "password=$(cut -d' ' -f2 "$RUN/users.txt" | head -1)" > /dev/null || exit 1
curl -s -X POST -d command=stream "$URL" > "$RUN/stream.json"
max_id="$(python3 -c 'import json,sys; print(max(int(r["IdPhoto"]) for r in json.load(open(sys.argv[1]))["result"]))' "$RUN/stream.json")"
post stream -d command=stream -d "IdPhoto=$max_id" > /dev/null || exit 1

# smoke_run NAME LUA [wrk args]: wrk under `timeout`, then the WRKJSON check
smoke_run() {
  local name="$1" lua="$2"; shift 2
  timeout 120 wrk -t1 -c"$CONNS" -d"$DUR" "$@" -s "$HERE/lua/$lua" "$URL" > "$RUN/wrk.out" 2>&1 || true
  python3 - "$name" "$RUN/wrk.out" <<'PY' || fail=1
import json, re, sys
out = open(sys.argv[2], errors="replace").read()
m = re.search(r"^WRKJSON (\{.*\})$", out, re.M)
if not m:
    print(f"[smoke] FAIL: {sys.argv[1]}: wrk gave no result\n{out}", file=sys.stderr)
    sys.exit(1)
r = json.loads(m.group(1))
sock = r["err_connect"] + r["err_read"] + r["err_write"] + r["err_timeout"]
ok = r["requests"] > 0 and sock == 0 and r["bad_status"] == 0 and r["bad_body"] == 0
print(f"[smoke] {'ok  ' if ok else 'FAIL'} {sys.argv[1]:13} {r['requests']:6d} requests, "
      f"{r['requests'] / (r['duration_us'] / 1e6):8.1f} req/s, p99 {r['p99_us'] / 1000:7.2f} ms; "
      f"socket errors {sock}, bad status {r['bad_status']}, bad body {r['bad_body']}"
      + (f" (first: {r['bad_sample']!r})" if r["bad_sample"] else ""))
sys.exit(0 if ok else 1)
PY
}

export USERS_FILE="$RUN/users.txt" ID_MIN=$((max_id > 50 ? max_id - 49 : 2)) ID_MAX="$max_id"
smoke_run stream stream.lua
# ids in the range may have been deleted: an empty result is a valid answer
EXPECT='{"result":[' smoke_run stream_id stream_id.lua
export COOKIES_FILE="$RUN/cookies.txt"
UPLOAD_FILE="$SMALL" smoke_run upload_small upload.lua --timeout 30s
UPLOAD_FILE="$BIG" smoke_run upload_big upload.lua --timeout 60s
# Last: each login makes a session, and a user keeps only its newest
# session_max_per_user (20), so the registration cookies above would end.
smoke_run login login.lua

if [ "$fail" = 0 ]; then say "PASS"; else say "FAILED"; fi
exit "$fail"
