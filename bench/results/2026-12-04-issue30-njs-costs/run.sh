#!/usr/bin/env bash
# What nginx's answer of the plain stream costs, part by part (issue 30,
# bench/profile-changes.md entry 27). Run as root from the repository, after
# scripts/deps.sh bench (nginx, libnginx-mod-http-js, wrk, libfcgi-dev):
#
#   bash bench/results/2026-12-04-issue30-njs-costs/run.sh [ROUNDS] > results.txt
#
# LOCATIONS="..." measures those locations instead of the default ten;
# REUSEPORT=1 has nginx listen with `reuseport` (README: extras.txt).
# Not among the ten, for the Lua script that replaced the njs one (entry
# 30, bench/results/2026-12-05-issue30-lua-answer): lua-shipped,
# lua-no-file and shipped-no-file (needs libnginx-mod-http-lua as well).
#
# A private nginx (its own prefix in a temporary directory, 127.0.0.1:8097,
# the stacks' http settings) serves a 50-row stream answer of 3,859 bytes
# from locations that differ in one part each; wrk -t2 -c32 -d6s POSTs
# `command=stream` (bench/lua/stream.lua, every response checked), the
# locations in turn, ROUNDS times (default 3). Misses of the cache
# locations go to bench/ceiling/fcgi_fixed.c over kept connections.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
ROUNDS="${1:-3}"
LISTEN_OPTIONS=""; [ "${REUSEPORT:-0}" = 1 ] && LISTEN_OPTIONS=" reuseport"
PORT=8097
D="$(mktemp -d /tmp/njs-costs.XXXXXX)"
chmod 755 "$D"
cleanup() {
  [ -s "$D/nginx.pid" ] && nginx -p "$D/" -c "$D/nginx.conf" -s stop 2>/dev/null || true
  [ -s "$D/fcgi.pid" ] && kill "$(cat "$D/fcgi.pid")" 2>/dev/null || true
  sleep 0.5; rm -rf "$D"
}
trap cleanup EXIT

# The answer: 50 rows as the 2012 stream has them (3,859 bytes, as the bench's seeded stream).
python3 - "$D/body.json" <<'PY'
import json, sys
rows = [{"IdPhoto": str(10001 - i), "title": f"Photo {10000 - i}", "IdUser": str(1 + i % 1000),
         "username": f"user{1 + i % 1000:04d}"} for i in range(50)]
open(sys.argv[1], "w").write(json.dumps({"result": rows}, separators=(",", ":")))
PY
# The server's file: when it ends (far ahead), then the answer.
{ echo 99999999999999; cat "$D/body.json"; } > "$D/answer"
mkdir -p "$D/generations" "$D/cache-body" "$D/cache-generation" "$D/tmp"
touch "$D/generations/1"; ln -s "$D/generations/1" "$D/generation"
cp "$HERE/shipped.js" "$D/shipped.js"   # the njs script main shipped then (5a89ad7..)
cp "$ROOT/deploy/nginx/ireporter-stream-answer.lua" "$D/lua-answer.lua"
head -c 8 /dev/zero > "$D/answer.epoch"   # the server's count of removals (none here)
sed '/X-Request-Id/d' "$HERE/shipped.js" > "$D/no-request-id.js"
sed "s|@D@|$D|g" "$HERE/variants.js" > "$D/variants.js"
cc -O2 -o "$D/fcgi_fixed" "$ROOT/bench/ceiling/fcgi_fixed.c" -lfcgi
chown -R www-data "$D"
( cd / && setsid -f runuser -u www-data -- "$D/fcgi_fixed" "$D/fcgi.sock" "$D/body.json" 2 "$D/fcgi.pid" keep \
    > "$D/fcgi.log" 2>&1 < /dev/null )
for _ in $(seq 1 50); do [ -S "$D/fcgi.sock" ] && break; sleep 0.1; done

# The shipped guards (deploy/nginx/ireporter-stream-answer.conf), with or without the file test.
guards='error_page 418 = @ireporter_api; if ($content_length !~ "^(14|[7-9][0-9]|1[0-9][0-9]|20[0-8])$") { return 418; }'
file_test='if (!-f $ireporter_stream_answer) { return 418; }'
cache='include /etc/nginx/fastcgi_params; fastcgi_pass kept; fastcgi_keep_conn on;
      fastcgi_cache_methods POST; fastcgi_cache_valid 200 10m;
      fastcgi_cache_bypass $not_plain_stream; fastcgi_no_cache $not_plain_stream;'
cat > "$D/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ngx_http_js_module.so;
load_module /usr/lib/nginx/modules/ndk_http_module.so;
load_module /usr/lib/nginx/modules/ngx_http_lua_module.so;
user www-data;
worker_processes auto;
pid $D/nginx.pid;
error_log $D/error.log warn;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  sendfile on; tcp_nopush on; keepalive_timeout 65; access_log off; server_tokens off;
  client_body_temp_path $D/tmp/body; fastcgi_temp_path $D/tmp/fastcgi; proxy_temp_path $D/tmp/proxy;
  uwsgi_temp_path $D/tmp/uwsgi; scgi_temp_path $D/tmp/scgi;
  js_import shipped from $D/shipped.js;
  js_import no_request_id from $D/no-request-id.js;
  js_import variants from $D/variants.js;
  js_var \$ireporter_stream_answer $D/answer;
  upstream kept { server unix:$D/fcgi.sock; keepalive 8; }
  fastcgi_cache_path $D/cache-body levels=1 keys_zone=by_body:1m;
  fastcgi_cache_path $D/cache-generation levels=1 keys_zone=by_generation:1m;
  map_hash_bucket_size 128;
  map "\$content_type|\$request_body" \$not_plain_stream {
    default 1;
    "application/x-www-form-urlencoded|command=stream" 0;
  }
  server {
    listen 127.0.0.1:$PORT$LISTEN_OPTIONS;
    client_body_buffer_size 1m;
    location @ireporter_api { include /etc/nginx/fastcgi_params; fastcgi_pass kept; fastcgi_keep_conn on; }
    location = /static-get { alias $D/body.json; default_type application/json; }
    location = /shipped { $guards $file_test js_content shipped.answer; }
    location = /no-request-id { $guards $file_test js_content no_request_id.answer; }
    location = /no-request-id-no-file-test { $guards js_content no_request_id.answer; }
    location = /lua-shipped { $guards content_by_lua_block { (package.loaded.ireporter_stream_answer or dofile("$D/lua-answer.lua")).answer("$D/answer") } }
    location = /lua-no-file { $guards content_by_lua_block { (package.loaded.ireporter_stream_answer or dofile("$D/lua-answer.lua")).answer("$D/missing") } }
    location = /shipped-no-file { set \$ireporter_stream_answer $D/missing; $guards $file_test js_content shipped.answer; }
    location = /no-file-test-file-missing { set \$ireporter_stream_answer $D/missing; $guards js_content no_request_id.answer; }
    location = /from-memory { js_content variants.fromMemory; }
    location = /request-id-only { js_content variants.requestIdOnly; }
    location = /read-only { js_content variants.readOnly; }
    location = /read-and-end { js_content variants.readAndEnd; }
    location = /cache-one-key { $cache fastcgi_cache by_body; fastcgi_cache_key stream; }
    location = /cache-generation-key { root $D/generation; $cache fastcgi_cache by_generation; fastcgi_cache_key \$realpath_root; }
  }
}
CONF
nginx -p "$D/" -c "$D/nginx.conf" -e "$D/error.log"
sleep 0.5
URL="http://127.0.0.1:$PORT"
LOCATIONS="${LOCATIONS:-static-get shipped no-request-id no-request-id-no-file-test from-memory request-id-only read-only read-and-end cache-one-key cache-generation-key}"
for l in $LOCATIONS; do   # every location answers the answer's bytes (and fills its cache)
  expected="$D/body.json"; [ "$l" = read-only ] && expected="$D/answer"   # the file as read, its first line too
  if [ "$l" = static-get ]; then got="$(curl -sf "$URL/$l")"; else got="$(curl -sf -X POST -d command=stream "$URL/$l")"; fi
  [ "$got" = "$(cat "$expected")" ] || { echo "$l does not answer the stream's bytes" >&2; exit 1; }
done
echo "# $(date -u +%FT%TZ), $(nproc) CPUs, $(nginx -v 2>&1), njs $(dpkg-query -W -f='${Version}' libnginx-mod-http-js)"
echo "# wrk -t2 -c32 -d6s, POST command=stream (static-get: a GET), every response checked; req/s and p99"
echo "# listen 127.0.0.1:$PORT$LISTEN_OPTIONS; locations: $LOCATIONS"
for round in $(seq 1 "$ROUNDS"); do
  for l in $LOCATIONS; do
    lua="$ROOT/bench/lua/stream.lua"; [ "$l" = static-get ] && lua="$ROOT/bench/lua/common.lua"
    expect='{"result":['; [ "$l" = read-only ] && expect=99999999999999
    out="$(EXPECT="$expect" wrk -t2 -c32 -d6s --latency -s "$lua" "$URL/$l")"
    rps="$(awk '/Requests\/sec/ {print $2}' <<< "$out")"
    p99="$(awk '$1 == "99%" {print $2}' <<< "$out")"
    bad="$(sed -n 's/.*"bad_status":\([0-9]*\),"bad_body":\([0-9]*\).*/\1+\2/p' <<< "$out")"
    printf '%d %-28s %10s req/s  p99 %-8s bad %s\n' "$round" "$l" "$rps" "$p99" "$bad"
  done
done
