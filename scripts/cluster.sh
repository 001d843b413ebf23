#!/usr/bin/env bash
# cluster.sh - iReporter on several hosts, all on this machine's loopback
# (run as root; docs/SCALING.md, "One command to see it"):
#   Galera    three MariaDB nodes, scripts/galera.sh in $CLUSTER_DIR/galera,
#             SQL on GALERA_PORT..+2, the schema with every migration
#   Redis     127.0.0.1:$REDIS_PORT, user redis, $CLUSTER_DIR/redis; sessions,
#             counters and the live channel; append-only file on (fsync every
#             second), so sessions survive a restart of Redis
#   app hosts two, each scripts/stack.sh's server + nginx in $CLUSTER_DIR/hostN
#             on 127.0.0.1:APP_PORTS[N]: db_nodes over the three nodes (host N
#             starting at node N), session_store = redis, the live stream in
#             Redis (ireporter-live.conf's two lines); with PHOTO_STORE=files
#             one shared upload folder $CLUSTER_DIR/upload (an NFS mount
#             between real machines) instead of the S3 server; each host's
#             nginx answers the plain stream from its server's file
#             (stream_answer_file), every change removing both hosts' files
#             through Redis before it is answered
#   S3        scripts/s3-server.py (moto, signature
#             checking on) on 127.0.0.1:$S3_PORT, $CLUSTER_DIR/s3; both hosts
#             keep the photos in its bucket (photo_store = s3) and serve them
#             through deploy/nginx/ireporter-s3.conf's cache; the upload
#             folder then holds only each host's spool files. moto keeps the
#             objects in memory: stopping it loses them (freeze it with
#             SIGSTOP to play an outage)
#   front     nginx on 127.0.0.1:$PORT, deploy/nginx/ireporter-front.conf with
#             the app hosts in its upstream; each answer says which host
#             gave it in an X-Upstream header. It sets X-Forwarded-For to the
#             phone's address, and the hosts' nginx take it from 127.0.0.1
#             only (ireporter.conf's realip lines on): each phone is counted
#             by its own address
#
#   scripts/cluster.sh up       build, (re)start everything, check, print the URL.
#                               Again: the servers restart with a fresh binary,
#                               the nginxes reload, what runs keeps running.
#   scripts/cluster.sh down     stop everything
#   scripts/cluster.sh status
#   scripts/cluster.sh stop-host N | start-host N   one app host (nginx, then
#                               its server; started: server, then nginx)
#   scripts/cluster.sh restart-redis
#   scripts/cluster.sh render-front   only render the front's configuration
#                               into $CLUSTER_DIR/front (for the E2E harness,
#                               Tests/EndToEnd/servers.py: scripts/nginx.sh
#                               starts it)
#   scripts/cluster.sh start-s3 | stop-s3   only the S3 server (the E2E
#                               harness's, for test_s3.py)
#
# Environment (defaults): CLUSTER_DIR (/tmp/ireporter-cluster), PORT (8080,
# the front), APP_PORTS ("PORT+1 PORT+2"), GALERA_PORT (3320: SQL 3320-3322,
# Galera's own ports 3330-3352), REDIS_PORT (6390), WORKERS (2 per host),
# SKIP_BUILD and BINARY as for scripts/stack.sh, PHOTO_STORE (s3: the S3
# server's bucket; files: the shared folder), S3_PORT (9400),
# CLUSTER_EXTRA_CONFIG (lines added to each host's ireporter.conf).
# `make up` uses 127.0.0.1:8080 too: the one that finds the port taken refuses.

. "$(dirname "${BASH_SOURCE[0]}")/stack.sh"
LOG_TAG=cluster

cluster_env() {
  CLUSTER_DIR="$(absolute_dir "${CLUSTER_DIR:-/tmp/ireporter-cluster}")"
  FRONT_PORT="${PORT:-8080}"
  read -r -a HOST_PORTS <<< "${APP_PORTS:-$((FRONT_PORT + 1)) $((FRONT_PORT + 2))}"
  GALERA_PORT="${GALERA_PORT:-3320}"
  REDIS_PORT="${REDIS_PORT:-6390}"
  WORKERS="${WORKERS:-2}"
  PHOTO_STORE="${PHOTO_STORE:-s3}"
  S3_PORT="${S3_PORT:-9400}"
  S3_DIR="$CLUSTER_DIR/s3"
  S3_PID="$S3_DIR/s3-server.pid"
  S3_PATTERN="s3-server.py --port $S3_PORT"
  case "$PHOTO_STORE" in files|s3) ;; *) die "PHOTO_STORE must be files or s3" ;; esac
  local p
  for p in "$FRONT_PORT" "${HOST_PORTS[@]}" "$GALERA_PORT" "$REDIS_PORT" "$S3_PORT"; do
    [[ "$p" =~ ^[0-9]+$ ]] || die "PORT, APP_PORTS, GALERA_PORT and REDIS_PORT must be numbers"
  done
  ((${#HOST_PORTS[@]} == 2)) || die "APP_PORTS: two ports, one for each app host"
  GALERA=("$IREPORTER_REPO/scripts/galera.sh")
  GALERA_DIR="$CLUSTER_DIR/galera"
  REDIS_DIR="$CLUSTER_DIR/redis"
  REDIS_CONF="$REDIS_DIR/redis.conf"
  REDIS_PID="$REDIS_DIR/redis.pid"
  # redis-server replaces its command line with "redis-server ADDR".
  REDIS_PATTERN="127.0.0.1:$REDIS_PORT"
  FRONT_DIR="$CLUSTER_DIR/front"
  SHARED_UPLOAD_DIR="$CLUSTER_DIR/upload"
  FRONT_URL="http://127.0.0.1:$FRONT_PORT/iReporter/"
}

galera() { "${GALERA[0]}" "$1" "$GALERA_DIR" "$GALERA_PORT" "${@:2}"; }

# host_env N: scripts/stack.sh's settings for app host N (1 or 2).
host_env() {
  local n="$1" nodes="" k
  for k in 0 1 2; do nodes+="${nodes:+,}127.0.0.1:$((GALERA_PORT + (n - 1 + k) % 3))"; done
  RUN_DIR="$CLUSTER_DIR/host$n"
  PORT="${HOST_PORTS[n - 1]}"
  UPLOAD_DIR="$SHARED_UPLOAD_DIR"
  SESSION_DIR="$RUN_DIR/sessions"
  # The cluster's, set by host_start; not empty, so that stack.sh's
  # functions leave the database alone (galera.sh runs it).
  DB_URL="galera"
  STACK_EXTRA_CONFIG="# scripts/cluster.sh: app host $n of $CLUSTER_DIR
db_nodes = $nodes
session_store = redis
redis_url = redis://127.0.0.1:$REDIS_PORT/0${CLUSTER_EXTRA_CONFIG:+
$CLUSTER_EXTRA_CONFIG}"
  LIVE_REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
  # The front connects from 127.0.0.1: the host takes the phone's address
  # from the X-Forwarded-For it sets (its last address), from no one else.
  REAL_IP_FROM=127.0.0.1
  S3_URL=""
  if [ "$PHOTO_STORE" = s3 ]; then
    UPLOAD_DIR="$RUN_DIR/spool"
    S3_URL="$(head -n 1 "$S3_DIR/s3.url" 2> /dev/null || true)"
  fi
  stack_env
}

# ------------------------------------------------------------------- S3

s3_start() {
  alive "$S3_PID" "$S3_PATTERN" && [ -s "$S3_DIR/s3.url" ] && { log "S3 server running (pid $(pidfile_pid "$S3_PID"))"; return 0; }
  root_dir "$S3_DIR" 0700
  rm -f "$S3_DIR/s3.url"
  log "starting the S3 server on 127.0.0.1:$S3_PORT"
  spawn_detached "$S3_PID" "$S3_DIR/s3.out" \
    python3 "$IREPORTER_REPO/scripts/s3-server.py" --port "$S3_PORT" --state-dir "$S3_DIR" \
    || die "could not start scripts/s3-server.py"
  local i
  for ((i = 0; i < 300; i++)); do
    [ -s "$S3_DIR/s3.url" ] && return 0
    sleep 0.1
  done
  tail -n 20 "$S3_DIR/s3.out" >&2 2> /dev/null
  die "scripts/s3-server.py did not start on 127.0.0.1:$S3_PORT (moto: scripts/deps.sh installs it)"
}

s3_stop() { stop_pidfile "S3 server" "$S3_PID" "$S3_PATTERN" TERM 20; }

# ----------------------------------------------------------------- Redis

redis_start() {
  alive "$REDIS_PID" "$REDIS_PATTERN" && { log "redis running (pid $(pidfile_pid "$REDIS_PID"))"; return 0; }
  id redis > /dev/null 2>&1 || die "no user redis (scripts/deps.sh installs redis-server)"
  mkdir -p "$REDIS_DIR"
  [ ! -L "$REDIS_DIR" ] || die "$REDIS_DIR must not be a link"
  chown -h redis:redis "$REDIS_DIR"; chmod 0700 "$REDIS_DIR"
  write_file "$REDIS_CONF" <<EOF
# Redis of iReporter's loopback cluster (written by scripts/cluster.sh).
port $REDIS_PORT
bind 127.0.0.1
dir $REDIS_DIR
logfile $REDIS_DIR/redis.log
daemonize no
# Sessions survive a restart: every write appended, fsync once a second
# (a crash of Redis may lose the last second's logins, a clean stop none).
appendonly yes
appendfsync everysec
save ""
EOF
  chmod 644 "$REDIS_CONF"
  log "starting redis on 127.0.0.1:$REDIS_PORT"
  spawn_detached "$REDIS_PID" "$REDIS_DIR/redis.out" \
    setpriv --reuid=redis --regid=redis --init-groups /usr/bin/redis-server "$REDIS_CONF" \
    || die "could not start redis-server"
  local i
  for ((i = 0; i < 100; i++)); do
    [ "$(redis-cli -p "$REDIS_PORT" PING 2> /dev/null)" = PONG ] && return 0
    sleep 0.1
  done
  tail -n 20 "$REDIS_DIR/redis.log" >&2 2> /dev/null
  die "redis-server does not answer on 127.0.0.1:$REDIS_PORT"
}

redis_stop() { stop_pidfile redis "$REDIS_PID" "$REDIS_PATTERN" TERM 20; }

# ------------------------------------------------------------- the hosts

host_start() {
  host_env "$1"
  DB_URL="$(galera url)"
  root_dir "$RUN_DIR" 0711
  # One live_publish_key on every host: it names each person's notification
  # channel, which must be the same wherever they asked for it.
  install -m 600 "$CLUSTER_DIR/publish.key" "$RUN_DIR/publish.key"
  stack_serve
  log "app host $1: $API_URL (server pid $(pidfile_pid "$SRV_PID"))"
}

# Nginx first, so that the front sends this host nothing more, then the
# server, which finishes the requests it has.
host_stop() {
  host_env "$1"
  nginx_stop "nginx of host $1" "$NGX_DIR"
  stack_stop_server
}

front_render() {
  local hosts="" p
  nginx_folder "$FRONT_DIR"
  for p in "${HOST_PORTS[@]}"; do hosts+="    server 127.0.0.1:$p max_fails=1 fail_timeout=5s;\\n"; done
  sed -e "/server 10\.0\.0\.12:80/d" \
      -e "s#^    server 10\.0\.0\.11:80 max_fails=1 fail_timeout=5s;#${hosts%\\n}#" \
      -e "s#listen 80;#listen 127.0.0.1:$FRONT_PORT;#" \
      -e "s#^\(        proxy_pass http://ireporter_\(mastodon_\)\{0,1\}hosts;\)\$#\1\n        add_header X-Upstream \$upstream_addr always;#" \
      "$IREPORTER_REPO/deploy/nginx/ireporter-front.conf" | write_file "$FRONT_DIR/ireporter-front.conf"
  grep -qF "server 127.0.0.1:${HOST_PORTS[1]} " "$FRONT_DIR/ireporter-front.conf" \
    && grep -qF "listen 127.0.0.1:$FRONT_PORT;" "$FRONT_DIR/ireporter-front.conf" \
    || die "rendering deploy/nginx/ireporter-front.conf did not replace its hosts / listen lines"
  sed -e "s#@RUN_DIR@#$FRONT_DIR#g" "$IREPORTER_REPO/deploy/nginx/nginx-front-private.conf.in" \
    | write_file "$FRONT_DIR/nginx.conf"
  chmod 644 "$FRONT_DIR/ireporter-front.conf" "$FRONT_DIR/nginx.conf"
}

front_start() {
  front_render
  nginx_start "the front nginx" "$FRONT_DIR" "127.0.0.1:$FRONT_PORT"
}

# ------------------------------------------------------------- commands

cluster_up() {
  need_root "starts daemons that switch to the mysql / redis / www-data users"
  if port_taken "$FRONT_PORT" && ! nginx_running "$FRONT_DIR"; then
    die "127.0.0.1:$FRONT_PORT is taken by something else (make up's stack? stop it with make down, or choose PORT=...)"
  fi
  mkdir -p "$(dirname "$CLUSTER_DIR")"
  root_dir "$CLUSTER_DIR" 0711
  "$IREPORTER_REPO/scripts/deps.sh"
  RUN_DIR="$CLUSTER_DIR"
  stack_env
  stack_build
  # Both hosts install this binary (stack_build leaves BINARY as it found it).
  export BINARY SKIP_BUILD=1
  stack_publish_key > /dev/null  # $CLUSTER_DIR/publish.key, the hosts' one key

  galera start
  redis_start
  if [ "$PHOTO_STORE" = s3 ]; then
    s3_start
  else
    mkdir -p "$SHARED_UPLOAD_DIR"
    [ ! -L "$SHARED_UPLOAD_DIR" ] || die "$SHARED_UPLOAD_DIR must not be a link"
    chown -h www-data:www-data "$SHARED_UPLOAD_DIR"; chmod 0755 "$SHARED_UPLOAD_DIR"
  fi
  host_start 1
  host_start 2
  front_start
  check_front
  log "Galera    : $(galera nodes) ($GALERA_DIR; scripts/galera.sh sql $GALERA_DIR $GALERA_PORT 1)"
  log "Redis     : 127.0.0.1:$REDIS_PORT ($REDIS_DIR)"
  local photos="$SHARED_UPLOAD_DIR"
  [ "$PHOTO_STORE" = s3 ] && photos="the bucket of $S3_DIR/s3.url (S3 server on 127.0.0.1:$S3_PORT)"
  log "app hosts : 127.0.0.1:${HOST_PORTS[0]}, 127.0.0.1:${HOST_PORTS[1]} (logs $CLUSTER_DIR/host{1,2}/ireporter.log), photos in $photos"
  log "web client: http://127.0.0.1:$FRONT_PORT/"
  echo "$FRONT_URL"
}

# Both hosts answer through the front (a stream each, nginx alternating).
check_front() {
  local i code seen=""
  for ((i = 0; i < 40; i++)); do
    code="$(curl -s -o /dev/null -D - --max-time 10 -X POST -d command=stream "$FRONT_URL" \
              | tr -d '\r' | awk 'NR == 1 {print $2} tolower($1) == "x-upstream:" {print $2}' | paste -sd ' ')"
    case "$code" in 200\ *) seen+=" ${code#200 }" ;; esac
    [[ "$seen" == *":${HOST_PORTS[0]}"* && "$seen" == *":${HOST_PORTS[1]}"* ]] && return 0
    sleep 0.25
  done
  tail -n 10 "$FRONT_DIR/error.log" >&2 2> /dev/null
  die "the front did not reach both app hosts (answers from:${seen:- none}; last: $code)"
}

cluster_down() {
  nginx_stop "front nginx" "$FRONT_DIR"
  host_stop 1
  host_stop 2
  redis_stop
  s3_stop
  [ -d "$GALERA_DIR" ] && galera stop
  return 0
}

cluster_status() {
  local rc=0 n
  if nginx_running "$FRONT_DIR"; then
    echo "front     running (pid $(pidfile_pid "$FRONT_DIR/nginx.pid")) on 127.0.0.1:$FRONT_PORT"
  else echo "front     not running"; rc=3; fi
  for n in 1 2; do
    echo "-- app host $n"
    host_env "$n"
    stack_status || rc=3
  done
  if alive "$REDIS_PID" "$REDIS_PATTERN"; then
    echo "redis     running (pid $(pidfile_pid "$REDIS_PID")) on 127.0.0.1:$REDIS_PORT"
  else echo "redis     not running"; rc=3; fi
  if alive "$S3_PID" "$S3_PATTERN"; then
    echo "S3        running (pid $(pidfile_pid "$S3_PID")) on 127.0.0.1:$S3_PORT"
  elif [ "$PHOTO_STORE" = s3 ]; then echo "S3        not running"; rc=3; fi
  galera status || rc=3
  return "$rc"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cluster_env
  case "${1:-}" in
    up)            cluster_up ;;
    down)          cluster_down ;;
    status)        cluster_status ;;
    stop-host)     [[ "${2:-}" =~ ^[12]$ ]] || die "stop-host 1|2"; host_stop "$2" ;;
    start-host)    [[ "${2:-}" =~ ^[12]$ ]] || die "start-host 1|2"; need_root; host_start "$2" ;;
    restart-redis) need_root; redis_stop; redis_start ;;
    render-front)  need_root; front_render ;;
    start-s3)      need_root; s3_start ;;
    stop-s3)       s3_stop ;;
    *)             echo "usage: $0 up|down|status|restart-redis|render-front|start-s3|stop-s3 | stop-host N | start-host N" >&2; exit 2 ;;
  esac
fi
