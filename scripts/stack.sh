#!/usr/bin/env bash
# stack.sh - a private iReporter stack on this machine (run as root):
#   MariaDB   scripts/mariadb.sh, $RUN_DIR/mariadb, 127.0.0.1:$DB_PORT (unless DB_URL)
#   ireporter $RUN_DIR/bin/ireporter --config $RUN_DIR/ireporter.conf, runs as
#             www-data; FastCGI socket and pid file in $RUN_DIR/ireporter/
#             (owned by www-data, like /run/ireporter/ in production, so the
#             server can write and remove them after it dropped root)
#   nginx     127.0.0.1:$PORT, deploy/nginx/ireporter.conf rendered with this
#             stack's socket and upload paths
#
#   scripts/stack.sh up      build, (re)start everything, check, print the URL.
#                            Idempotent: a second `up` restarts the server with
#                            a freshly built binary and reloads nginx.
#   scripts/stack.sh down    stop nginx, the server and MariaDB (pid files,
#                            command lines checked; nothing killed by name)
#   scripts/stack.sh status
#   scripts/stack.sh render-nginx
#                            only render nginx's configuration into
#                            $RUN_DIR/nginx (for the E2E harness,
#                            Tests/EndToEnd/servers.py, which starts it with
#                            scripts/nginx.sh); FCGI_SOCKET, when set, is the
#                            server's socket instead of the stack's own
#
# Environment:
#   RUN_DIR     (/tmp/ireporter)          everything runtime lives here
#   PORT        (8080)                    nginx on 127.0.0.1:PORT
#   DB_PORT     (3309)                    private MariaDB's TCP port
#   DB_URL      (unset)                   use this database; start no MariaDB
#   UPLOAD_DIR  ($RUN_DIR/upload)         photos and thumbnails
#   SESSION_DIR ($RUN_DIR/sessions)       session files
#   WORKERS     (4)                       server worker threads
#   STREAM_ANSWER (1)                     0: no stream_answer_file, nginx asks the server for
#                                         every stream (deploy/nginx/ireporter-stream-answer.conf)
#   SKIP_BUILD  (unset)                   1: don't run `swift build`
#   BINARY      (.build/release/ireporter) the binary to install and run
#   REAL_IP_FROM, LIVE_REDIS_URL, S3_URL  (unset) see stack_render_nginx
#                                         (scripts/cluster.sh sets them)
#
# Logs: $RUN_DIR/ireporter.log (server stderr), $RUN_DIR/nginx/error.log,
# $RUN_DIR/mariadb/error.log, $RUN_DIR/build.log.
#
# It runs as root in a predictable path: RUN_DIR, its bin/ and nginx/ are
# root's (made 0711/0755; an existing one owned by anyone else is refused),
# and where the daemons' users own a folder (the socket's, nginx's temp
# folders) root never follows a link (chown -h, files replaced by rename).
# The private MariaDB's password is random (scripts/mariadb.sh).
#
# Also sourced (then it only defines the stack_* functions) by scripts/test.sh,
# scripts/cluster.sh and the benchmarks with a stack of their own
# (bench/search.sh, sizes.sh, reactions.sh, search/bounds.sh).

LOG_TAG=stack
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# stack_env: (re)compute the settings from the environment.
stack_env() {
  RUN_DIR="$(absolute_dir "${RUN_DIR:-/tmp/ireporter}")"
  PORT="${PORT:-8080}"
  DB_PORT="${DB_PORT:-3309}"
  DB_URL="${DB_URL:-}"
  UPLOAD_DIR="${UPLOAD_DIR:-$RUN_DIR/upload}"
  UPLOAD_DIR="${UPLOAD_DIR%/}"
  SESSION_DIR="${SESSION_DIR:-$RUN_DIR/sessions}"
  SESSION_DIR="${SESSION_DIR%/}"
  WORKERS="${WORKERS:-4}"
  # 0: no stream_answer_file, every stream asks the server (deploy/nginx/ireporter-stream-answer.conf).
  STREAM_ANSWER="${STREAM_ANSWER:-1}"
  BINARY="${BINARY:-$IREPORTER_REPO/.build/release/ireporter}"

  HTTP_ADDR="127.0.0.1:$PORT"
  DB_DIR="$RUN_DIR/mariadb"
  NGX_DIR="$RUN_DIR/nginx"
  SRV_BIN="$RUN_DIR/bin/ireporter"
  SRV_CONF="$RUN_DIR/ireporter.conf"
  SRV_RUN="$RUN_DIR/ireporter"              # www-data's: socket and pid file
  SRV_SOCK="$SRV_RUN/fcgi.sock"
  SRV_PID="$SRV_RUN/ireporter.pid"          # written by the server once listening
  SRV_LAUNCH_PID="$RUN_DIR/ireporter.launch.pid"  # written by us before exec
  SRV_LOG="$RUN_DIR/ireporter.log"
  SRV_PATTERN="--config $SRV_CONF"
  API_URL="http://$HTTP_ADDR/iReporter/"
  # Root client of the private database (tests use it to inspect and reset it).
  MYSQL_ROOT_CMD="mariadb --defaults-file=$DB_DIR/my.cnf -u root iReport"
  [[ "$PORT" =~ ^[0-9]+$ && "$DB_PORT" =~ ^[0-9]+$ && "$WORKERS" =~ ^[0-9]+$ ]] \
    || die "PORT, DB_PORT and WORKERS must be numbers"
}

# stack_private RUN_DIR PORT DB_PORT: the settings of a stack of its own (the
# test run's, a benchmark's) in RUN_DIR, nginx on PORT and a private MariaDB
# on DB_PORT; `make up`'s DB_URL, UPLOAD_DIR and SESSION_DIR are ignored.
stack_private() {
  export RUN_DIR="$1" PORT="$2" DB_PORT="$3"
  unset DB_URL UPLOAD_DIR SESSION_DIR
  stack_env
}

# stack_wipe: stop whatever a previous run left in RUN_DIR, then remove it
# (database, photos, sessions, logs): for a stack made anew every run.
stack_wipe() {
  case "$RUN_DIR" in
    /|/tmp|/root|/home|/var|/usr|/etc) die "refusing to wipe RUN_DIR=$RUN_DIR" ;;
  esac
  if [ -e "$RUN_DIR" ] || [ -L "$RUN_DIR" ]; then
    [ -d "$RUN_DIR" ] && [ ! -L "$RUN_DIR" ] && [ "$(stat -c %u "$RUN_DIR")" = 0 ] \
      || die "$RUN_DIR is not root's own directory: refusing to use it"
  fi
  stack_down > /dev/null
  rm -rf "$RUN_DIR"
}

stack_build() {
  if [ "${SKIP_BUILD:-}" = 1 ]; then
    log "SKIP_BUILD=1: using $BINARY as it is"
  else
    command -v swift >/dev/null 2>&1 || die "swift is not on PATH"
    log "swift build -c release (log: $RUN_DIR/build.log)"
    if ! (cd "$IREPORTER_REPO" && swift build -c release) > "$RUN_DIR/build.log" 2>&1; then
      cat "$RUN_DIR/build.log" >&2
      die "swift build -c release failed"
    fi
    local nwarn
    nwarn="$(grep -c ': warning: ' "$RUN_DIR/build.log" || true)"
    log "build ok${nwarn:+ ($nwarn warning lines)}"
  fi
  [ -x "$BINARY" ] || die "no executable at $BINARY"
}

# Render deploy/nginx/ireporter.conf for this stack: only the two literal
# paths an operator would edit are replaced, and with REAL_IP_FROM
# (scripts/cluster.sh: the front's address) the realip lines are on, as
# the snippet tells an app host behind a front to do.
stack_render_nginx() {
  nginx_folder "$NGX_DIR"
  local realip=()
  [ -z "${REAL_IP_FROM:-}" ] || realip=(
      -e "s|^#set_real_ip_from 127\.0\.0\.1;|set_real_ip_from $REAL_IP_FROM;|"
      -e "s|^#\(real_ip_header X-Forwarded-For;\)|\1|"
      -e "s|^#\(real_ip_recursive off;\)|\1|")
  sed -e "s#/run/ireporter/fcgi\.sock#$SRV_SOCK#g" \
      -e "s#/var/www/iReporter/upload/#$UPLOAD_DIR/#g" "${realip[@]}" \
      "$IREPORTER_REPO/deploy/nginx/ireporter.conf" | write_file "$NGX_DIR/ireporter.conf"
  grep -qF "unix:$SRV_SOCK;" "$NGX_DIR/ireporter.conf" && grep -qF "alias $UPLOAD_DIR/" "$NGX_DIR/ireporter.conf" \
    || die "rendering deploy/nginx/ireporter.conf did not replace its socket / upload paths"
  # Its http-level upstream (kept FastCGI connections), from its header.
  sed -n -e 's/^#   \(upstream ireporter_fcgi .*\)$/\1/p' "$NGX_DIR/ireporter.conf" | write_file "$NGX_DIR/ireporter-upstream.conf"
  grep -qF "server unix:$SRV_SOCK;" "$NGX_DIR/ireporter-upstream.conf" \
    || die "rendering deploy/nginx/ireporter.conf's upstream did not replace its socket path"
  [ -z "${REAL_IP_FROM:-}" ] || { grep -qxF "set_real_ip_from $REAL_IP_FROM;" "$NGX_DIR/ireporter.conf" \
      && grep -qx 'real_ip_header X-Forwarded-For;' "$NGX_DIR/ireporter.conf" \
      && grep -qx 'real_ip_recursive off;' "$NGX_DIR/ireporter.conf"; } \
    || die "rendering deploy/nginx/ireporter.conf did not switch on its realip lines"
  sed -e "s#/run/ireporter/fcgi\.sock#$SRV_SOCK#g" \
      "$IREPORTER_REPO/deploy/nginx/ireporter-mastodon.conf" | write_file "$NGX_DIR/ireporter-mastodon.conf"
  grep -qF "unix:$SRV_SOCK;" "$NGX_DIR/ireporter-mastodon.conf" \
    || die "rendering deploy/nginx/ireporter-mastodon.conf did not replace its socket path"
  # Flickr's paths at the host's root (REST, and photos where its clients build their URLs).
  sed -e "s#/run/ireporter/fcgi\.sock#$SRV_SOCK#g" \
      "$IREPORTER_REPO/deploy/nginx/flickr-host.conf" | write_file "$NGX_DIR/flickr-host.conf"
  grep -qF "unix:$SRV_SOCK;" "$NGX_DIR/flickr-host.conf" \
    || die "rendering deploy/nginx/flickr-host.conf did not replace its socket path"
  # The snippet says `include fastcgi_params;`, which nginx resolves next to
  # the main config file.
  write_file "$NGX_DIR/fastcgi_params" < /etc/nginx/fastcgi_params
  # The browser client: a copy of web/ that nginx's workers can read.
  rm -rf "$RUN_DIR/web"
  cp -r "$IREPORTER_REPO/web" "$RUN_DIR/web"
  chmod -R a+rX "$RUN_DIR/web"
  sed -e "s#/usr/share/ireporter/web#$RUN_DIR/web#g" \
      "$IREPORTER_REPO/deploy/nginx/ireporter-web.conf" | write_file "$NGX_DIR/ireporter-web.conf"
  # The publisher location's key (the server's live_publish_key), in a file
  # only root reads, as the snippet's header says.
  printf 'set $ireporter_publish_key "%s";\n' "$(stack_publish_key)" | write_file "$NGX_DIR/ireporter-publish-key.conf"
  chmod 600 "$NGX_DIR/ireporter-publish-key.conf"
  local key_file="s#/etc/nginx/ireporter-publish-key\.conf#$NGX_DIR/ireporter-publish-key.conf#"
  # LIVE_REDIS_URL (scripts/cluster.sh): the snippet's two Redis lines on,
  # so that the live channel is shared by every app host.
  if [ -n "${LIVE_REDIS_URL:-}" ]; then
    sed -e "s|^#nchan_redis_url redis://127.0.0.1:6379;|nchan_redis_url $LIVE_REDIS_URL;|" \
        -e "s|^#nchan_use_redis on;|nchan_use_redis on;|" -e "$key_file" \
        "$IREPORTER_REPO/deploy/nginx/ireporter-live.conf" | write_file "$NGX_DIR/ireporter-live.conf"
    grep -q '^nchan_use_redis on;' "$NGX_DIR/ireporter-live.conf" \
      || die "rendering deploy/nginx/ireporter-live.conf did not switch on its Redis lines"
  else
    sed -e "$key_file" "$IREPORTER_REPO/deploy/nginx/ireporter-live.conf" | write_file "$NGX_DIR/ireporter-live.conf"
  fi
  grep -qF "include $NGX_DIR/ireporter-publish-key.conf;" "$NGX_DIR/ireporter-live.conf" \
    || die "rendering deploy/nginx/ireporter-live.conf did not replace its key file's path"
  write_file "$NGX_DIR/ireporter-live-limits.conf" < "$IREPORTER_REPO/deploy/nginx/ireporter-live-limits.conf"
  # S3_URL (scripts/cluster.sh with PHOTO_STORE=s3): the photos' URLs go to
  # the server behind nginx's cache (deploy/nginx/ireporter-s3.conf), whose
  # http-level line (its header's fastcgi_cache_path) gets a folder here.
  if [ -n "${S3_URL:-}" ]; then
    sed -e "s#/run/ireporter/fcgi\.sock#$SRV_SOCK#g" \
        "$IREPORTER_REPO/deploy/nginx/ireporter-s3.conf" | write_file "$NGX_DIR/ireporter-s3.conf"
    sed -n -e "s#^\#  *\(fastcgi_cache_path\) /var/cache/nginx/ireporter #\1 $NGX_DIR/cache #p" \
        "$IREPORTER_REPO/deploy/nginx/ireporter-s3.conf" | write_file "$NGX_DIR/s3-cache-zone.conf"
    grep -qF "unix:$SRV_SOCK;" "$NGX_DIR/ireporter-s3.conf" && grep -qF "$NGX_DIR/cache " "$NGX_DIR/s3-cache-zone.conf" \
      || die "rendering deploy/nginx/ireporter-s3.conf did not replace its socket / cache paths"
    chmod 644 "$NGX_DIR/ireporter-s3.conf" "$NGX_DIR/s3-cache-zone.conf"
  else
    rm -f "$NGX_DIR/ireporter-s3.conf" "$NGX_DIR/s3-cache-zone.conf"
  fi
  # nginx answers the plain stream from the server's file (STREAM_ANSWER=0: not).
  if [ "$STREAM_ANSWER" != 0 ]; then
    write_file "$NGX_DIR/ireporter-stream-answer.lua" < "$IREPORTER_REPO/deploy/nginx/ireporter-stream-answer.lua"
    sed -e "s#/etc/nginx/ireporter-stream-answer\.lua#$NGX_DIR/ireporter-stream-answer.lua#g" \
        -e "s#/run/ireporter/stream-answer#$SRV_RUN/stream-answer#g" \
        "$IREPORTER_REPO/deploy/nginx/ireporter-stream-answer.conf" | write_file "$NGX_DIR/ireporter-stream-answer.conf"
    grep -qF "\"$NGX_DIR/ireporter-stream-answer.lua\"" "$NGX_DIR/ireporter-stream-answer.conf" \
      && grep -qF "\"$SRV_RUN/stream-answer\"" "$NGX_DIR/ireporter-stream-answer.conf" \
      || die "rendering deploy/nginx/ireporter-stream-answer.conf did not replace its script / file paths"
    chmod 644 "$NGX_DIR/ireporter-stream-answer.lua" "$NGX_DIR/ireporter-stream-answer.conf"
  else
    rm -f "$NGX_DIR/ireporter-stream-answer.lua" "$NGX_DIR/ireporter-stream-answer.conf"
  fi
  sed -e "s#@RUN_DIR@#$RUN_DIR#g" -e "s#@HTTP_ADDR@#$HTTP_ADDR#g" \
      "$IREPORTER_REPO/deploy/nginx/nginx-private.conf.in" | write_file "$NGX_DIR/nginx.conf"
  chmod 644 "$NGX_DIR/ireporter.conf" "$NGX_DIR/ireporter-upstream.conf" "$NGX_DIR/ireporter-mastodon.conf" "$NGX_DIR/flickr-host.conf" "$NGX_DIR/fastcgi_params" "$NGX_DIR/nginx.conf" "$NGX_DIR/ireporter-live.conf"
}

# The live stream publisher's key, made once for this RUN_DIR (root's, 0600).
stack_publish_key() {
  local file="$RUN_DIR/publish.key"
  if [ ! -s "$file" ]; then
    head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' | write_file "$file"
    chmod 600 "$file"
  fi
  cat "$file"
}

stack_write_config() {
  local db_url="$DB_URL"
  [ -n "$db_url" ] || db_url="$("$IREPORTER_REPO/scripts/mariadb.sh" url "$DB_DIR")"
  write_file "$SRV_CONF" <<EOF
# iReporter server configuration for the private stack in $RUN_DIR
# (written by scripts/stack.sh up; keys: docs/CONFIGURATION.md).
listen = $SRV_SOCK
# Created as root, then chowned to the user below: nginx's workers (www-data) connect.
listen_mode = 0660
workers = $WORKERS
db_url = $db_url
upload_dir = $UPLOAD_DIR
session_dir = $SESSION_DIR
pid_file = $SRV_PID
user = www-data
# nginx's Nchan publisher location (deploy/nginx/ireporter-live.conf).
live_publish_url = http://$HTTP_ADDR/ireporter-publish
live_publish_key = $(stack_publish_key)
# One line per request (Tests/EndToEnd/test_logs.py reads it).
access_log = $RUN_DIR/access.log
$([ "$STREAM_ANSWER" = 0 ] || printf '%s' "# nginx answers the plain stream from it (deploy/nginx/ireporter-stream-answer.conf).
stream_answer_file = $SRV_RUN/stream-answer")
${STACK_EXTRA_CONFIG:-}
EOF
  # The workers (www-data) append to it.
  touch "$RUN_DIR/access.log" && chown www-data "$RUN_DIR/access.log" && chmod 640 "$RUN_DIR/access.log"
  if [ -n "${S3_URL:-}" ]; then
    printf 'photo_store = s3\ns3_url = %s\n' "$S3_URL" >> "$SRV_CONF"
  fi
  # It may hold a database password.
  # Read again on SIGUSR2 by the server, which runs as www-data by then.
  chown root:www-data "$SRV_CONF"
  chmod 640 "$SRV_CONF"
}

# SIGTERM lets the server finish the requests in flight (it waits up to 30 s);
# SIGKILL only after that.
stack_stop_server() {
  if alive "$SRV_PID" "$SRV_PATTERN"; then
    stop_pidfile ireporter "$SRV_PID" "$SRV_PATTERN" TERM 35
  elif alive "$SRV_LAUNCH_PID" "$SRV_PATTERN"; then
    # Started, but hung before it wrote its own pid file.
    stop_pidfile ireporter "$SRV_LAUNCH_PID" "$SRV_PATTERN" TERM 35
  fi
  # Normally the server removes its socket and pid file itself.
  rm -f "$SRV_PID" "$SRV_LAUNCH_PID"
  [ -S "$SRV_SOCK" ] && rm -f "$SRV_SOCK"
  return 0
}

stack_start_server() {
  local i pid
  stack_stop_server
  # Install a copy (not a link into .build): www-data must be able to exec
  # it, and a rebuild must not change the binary under a running server.
  root_dir "$RUN_DIR/bin" 0755
  [ -e "$SRV_RUN" ] || mkdir "$SRV_RUN"
  [ -d "$SRV_RUN" ] && [ ! -L "$SRV_RUN" ] || die "$SRV_RUN is not a directory"
  chown -h www-data:www-data "$SRV_RUN"
  chmod 0755 "$SRV_RUN"
  cp "$BINARY" "$SRV_BIN.new"
  chmod 755 "$SRV_BIN.new"
  mv -f "$SRV_BIN.new" "$SRV_BIN"

  # The server lets IREPORTER_* environment variables override its config
  # file: start it without any, so that $SRV_CONF is the whole truth.
  local v scrub=()
  for v in $(compgen -e); do [[ "$v" == IREPORTER_* ]] && scrub+=(-u "$v"); done
  local cmd=(env "${scrub[@]}" "$SRV_BIN" --config "$SRV_CONF")
  "${cmd[@]}" --check-config > /dev/null || die "$SRV_CONF: the server rejects this configuration"

  log "starting ireporter ($WORKERS workers) on $SRV_SOCK"
  printf -- '---- %s stack.sh up: starting %s ----\n' "$(date '+%F %T')" "$SRV_BIN" >> "$SRV_LOG"
  spawn_detached "$SRV_LAUNCH_PID" "$SRV_LOG" "${cmd[@]}" || die "could not start $SRV_BIN"
  pid="$(pidfile_pid "$SRV_LAUNCH_PID")"
  for ((i = 0; i < 300; i++)); do
    if ! proc_alive "$pid"; then
      tail -n 30 "$SRV_LOG" >&2
      die "ireporter exited during startup (log: $SRV_LOG)"
    fi
    [ -S "$SRV_SOCK" ] && [ -s "$SRV_PID" ] && break
    sleep 0.1
  done
  if ! [ -S "$SRV_SOCK" ] || ! [ -s "$SRV_PID" ]; then
    tail -n 30 "$SRV_LOG" >&2
    die "ireporter did not create $SRV_SOCK and $SRV_PID within 30s (log: $SRV_LOG)"
  fi
  [ "$(pidfile_pid "$SRV_PID")" = "$pid" ] \
    || warn "pid file $SRV_PID says $(cat "$SRV_PID"), launched pid was $pid"
  # nginx's workers run as www-data: make sure they can connect (the server
  # chowns the socket it creates to its `user` already).
  chown -h www-data:www-data "$SRV_SOCK"
}

stack_start_nginx() {
  stack_render_nginx
  nginx_start nginx "$NGX_DIR" "$HTTP_ADDR"
}

stack_check() {
  local i code=000
  for ((i = 0; i < 40; i++)); do
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST -d command=stream "$API_URL" || true)"
    [ "$code" = 200 ] && return 0
    sleep 0.25
  done
  tail -n 20 "$SRV_LOG" >&2
  tail -n 10 "$NGX_DIR/error.log" >&2 2>/dev/null
  die "POST command=stream to $API_URL answered HTTP $code"
}

# stack_serve: the folders the server writes, its configuration, the server
# and nginx, started and checked (the database is up).
stack_serve() {
  mkdir -p "$UPLOAD_DIR" "$SESSION_DIR"
  [ ! -L "$UPLOAD_DIR" ] && [ ! -L "$SESSION_DIR" ] || die "UPLOAD_DIR and SESSION_DIR must not be links"
  chown -h www-data:www-data "$UPLOAD_DIR" "$SESSION_DIR"
  chmod 0755 "$UPLOAD_DIR"
  chmod 0700 "$SESSION_DIR"
  runuser -u www-data -- test -w "$UPLOAD_DIR" -a -x "$UPLOAD_DIR" \
    || die "www-data cannot write $UPLOAD_DIR (check its parent directories' permissions)"
  runuser -u www-data -- test -w "$SESSION_DIR" -a -x "$SESSION_DIR" \
    || die "www-data cannot write $SESSION_DIR (check its parent directories' permissions)"
  stack_write_config
  stack_start_server
  stack_start_nginx
  stack_check
}

# port_taken PORT: something listens on 127.0.0.1:PORT.
port_taken() { (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }

stack_up() {
  need_root "starts daemons that switch to the mysql / www-data users"
  # `make up` and `make cluster-up` both default to 127.0.0.1:8080.
  if port_taken "$PORT" && ! nginx_running "$NGX_DIR"; then
    die "127.0.0.1:$PORT is taken by something else (make cluster-up's front? stop it with make cluster-down, or choose PORT=...)"
  fi
  mkdir -p "$(dirname "$RUN_DIR")"
  # www-data (nginx, the server) and mysql traverse it; no one lists it.
  root_dir "$RUN_DIR" 0711
  "$IREPORTER_REPO/scripts/deps.sh"
  stack_build

  if [ -n "$DB_URL" ]; then
    log "DB_URL is set: using that database, no private MariaDB"
  else
    "$IREPORTER_REPO/scripts/mariadb.sh" start "$DB_DIR" "$DB_PORT"
  fi

  stack_serve

  log "ireporter : $SRV_SOCK (pid $(pidfile_pid "$SRV_PID")), config $SRV_CONF, log $SRV_LOG"
  log "nginx     : $HTTP_ADDR (pid $(pidfile_pid "$NGX_DIR/nginx.pid"))"
  if [ -n "$DB_URL" ]; then
    log "database  : $(printf '%s' "$DB_URL" | sed -E 's#^([a-z]+://[^:@/]*):[^@/]*@#\1:***@#')"
  else
    log "MariaDB   : $DB_DIR/mysqld.sock, 127.0.0.1:$DB_PORT; root client: $MYSQL_ROOT_CMD"
  fi
  log "web client: http://$HTTP_ADDR/"
  echo "$API_URL"
}

stack_down() {
  nginx_stop nginx "$NGX_DIR"
  stack_stop_server
  if [ -e "$DB_DIR/mariadbd.pid" ]; then
    "$IREPORTER_REPO/scripts/mariadb.sh" stop "$DB_DIR"
  fi
  return 0
}

stack_status() {
  local rc=0
  if nginx_running "$NGX_DIR"; then
    echo "nginx     running (pid $(pidfile_pid "$NGX_DIR/nginx.pid")) on $HTTP_ADDR"
  else echo "nginx     not running"; rc=3; fi
  if alive "$SRV_PID" "$SRV_PATTERN"; then
    echo "ireporter running (pid $(pidfile_pid "$SRV_PID")) on $SRV_SOCK"
  else echo "ireporter not running"; rc=3; fi
  if [ -z "$DB_URL" ]; then
    "$IREPORTER_REPO/scripts/mariadb.sh" status "$DB_DIR" || rc=3
  fi
  return "$rc"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  stack_env
  case "${1:-}" in
    up)     stack_up ;;
    down)   stack_down ;;
    status) stack_status ;;
    render-nginx)
            need_root "the nginx folder is root's"
            SRV_SOCK="${FCGI_SOCKET:-$SRV_SOCK}"
            stack_render_nginx ;;
    *)      echo "usage: $0 up|down|status|render-nginx" >&2; exit 2 ;;
  esac
fi
