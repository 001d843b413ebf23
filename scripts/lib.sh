# scripts/lib.sh - helpers shared by the iReporter scripts (sourced, not run).
#
# Processes are only ever found through pid files, and a pid is only signalled
# after its command line has been checked against what we started: nothing is
# killed by name. A daemon we started is reparented when its launcher exits,
# and in a container whose PID 1 does not reap, it can linger as a zombie
# after it died; so "running" means /proc/PID/stat says a state other than Z
# (kill -0 succeeds on zombies).

IREPORTER_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# A toolchain unpacked in /opt/swift but not on PATH (a fresh login shell)
# is used as it is.
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
  export PATH="/opt/swift/usr/bin:$PATH"
fi

log() { printf '[%s] %s\n' "${LOG_TAG:-ireporter}" "$*"; }
warn() { printf '[%s] WARNING: %s\n' "${LOG_TAG:-ireporter}" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "${LOG_TAG:-ireporter}" "$*" >&2; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "run as root (${1:-starts daemons that switch to other users})"; }

# absolute_dir DIR: DIR from the current folder when relative, without a
# trailing slash.
absolute_dir() {
  local dir="$1"
  case "$dir" in /*) ;; *) dir="$(pwd)/$dir" ;; esac
  printf '%s\n' "${dir%/}"
}

# dir_port_args DEFAULT_PORT ARGS...: the command line "COMMAND DIR [PORT]
# [MORE...]" of the database scripts (mariadb.sh, galera.sh, replica.sh):
# sets CMD, DIR (absolute_dir), PORT (DEFAULT_PORT when not given; a number
# when set) and the array MORE. Calls the script's usage when it is off.
dir_port_args() {
  local default="$1"; shift
  (($# >= 2)) || usage
  CMD="$1"; DIR="$(absolute_dir "$2")"; PORT="${3:-$default}"
  MORE=("${@:4}")
  [ -z "$PORT" ] || [[ "$PORT" =~ ^[0-9]+$ ]] || usage
}

# root_dir DIR MODE: DIR as a directory of root's, mode MODE. Made if it is
# missing (its parent must exist); an existing one must be a real directory
# (not a link) owned by root, else we stop: these scripts run as root in
# predictable /tmp paths, and a folder someone else made there could hold
# links that make root overwrite or chmod any file.
root_dir() {
  local dir="$1" mode="$2"
  if [ ! -e "$dir" ] && [ ! -L "$dir" ]; then
    mkdir -m "$mode" "$dir" || die "cannot create $dir"
  fi
  [ -d "$dir" ] && [ ! -L "$dir" ] || die "$dir is not a directory (a link, or a file): refusing to use it"
  [ "$(stat -c %u "$dir")" = 0 ] || die "$dir belongs to $(stat -c %U "$dir"), not root: refusing to use it (remove it, or choose another folder)"
  chmod "$mode" "$dir"
}

# write_file PATH: stdin into PATH, which is replaced, never followed: the
# content goes to a new file beside it, renamed over PATH.
write_file() {
  local path="$1" tmp
  tmp="$(mktemp "$path.XXXXXX")" || die "cannot write next to $path"
  cat > "$tmp" && mv -fT "$tmp" "$path" || { rm -f "$tmp"; die "cannot write $path"; }
}

# proc_alive PID: the process exists and is not a zombie.
proc_alive() {
  local pid="$1" stat state
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || return 1
  [ -n "$stat" ] || return 1
  state="${stat##*) }"      # the field after "(comm) ", comm may hold spaces or parens
  state="${state%% *}"
  [ "$state" != Z ] && [ "$state" != X ]
}

# pid_matches PID PATTERN: PID is alive and its command line contains PATTERN.
pid_matches() {
  local pid="$1" pattern="$2"
  proc_alive "$pid" || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pattern"
}

# pidfile_pid PIDFILE: print the pid stored in PIDFILE (fails if none).
pidfile_pid() {
  local pid
  [ -s "$1" ] || return 1
  pid="$(tr -d ' \n\t' < "$1")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  printf '%s\n' "$pid"
}

# alive PIDFILE PATTERN: the pid in PIDFILE runs and its command line contains PATTERN.
alive() {
  local pid
  pid="$(pidfile_pid "$1")" || return 1
  pid_matches "$pid" "$2"
}

# stop_pidfile NAME PIDFILE PATTERN SIGNAL TIMEOUT_S
# Signal the process in PIDFILE (if it is ours), wait for it to go away, and
# SIGKILL it after TIMEOUT_S seconds. Removes a stale pid file.
stop_pidfile() {
  local name="$1" pidfile="$2" pattern="$3" sig="$4" timeout="$5" pid i
  if ! pid="$(pidfile_pid "$pidfile")"; then
    rm -f "$pidfile"
    return 0
  fi
  if ! pid_matches "$pid" "$pattern"; then
    log "$name: pid $pid from $pidfile is not ours (or gone), leaving it"
    rm -f "$pidfile"
    return 0
  fi
  log "$name: sending SIG$sig to pid $pid"
  kill "-$sig" "$pid" 2>/dev/null || true
  for ((i = 0; i < timeout * 10; i++)); do
    proc_alive "$pid" || { log "$name: stopped"; rm -f "$pidfile"; return 0; }
    sleep 0.1
  done
  warn "$name: still running after ${timeout}s, sending SIGKILL to pid $pid"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    proc_alive "$pid" || break
    sleep 0.1
  done
  rm -f "$pidfile"
}

# Detach CMD... into its own session with every fd redirected (so nothing
# keeps the caller's stdout, e.g. a CI pipe, open) and write its pid to
# PIDFILE before it execs (the pid stays the same across exec).
#   spawn_detached PIDFILE LOGFILE CMD...
spawn_detached() {
  local pidfile="$1" logfile="$2"; shift 2
  rm -f "$pidfile"
  ( cd / && exec setsid -f /bin/sh -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$@" \
        >> "$logfile" 2>&1 < /dev/null )
  local i
  for ((i = 0; i < 50; i++)); do [ -s "$pidfile" ] && return 0; sleep 0.02; done
  return 1
}

# secret_file FILE: a password kept in FILE, root's own, mode 0600: 32 random
# hex digits, made the first time and read back every time after.
secret_file() {
  local file="$1"
  if [ ! -s "$file" ]; then
    od -An -tx1 -N16 /dev/urandom | tr -d ' \n' | write_file "$file"
  fi
  [ ! -L "$file" ] && [ "$(stat -c %u "$file")" = 0 ] || die "$file is not root's own file"
  chmod 600 "$file"
  cat "$file"
}

# mariadb_cnf DIR PORT ADDRESS: what every private MariaDB's my.cnf
# (mariadb.sh, each Galera node of galera.sh) says, ending in its
# [mariadbd] group, for the server of folder DIR (data, socket, pid file and
# error log there) on ADDRESS:PORT. Read with --defaults-file, so nothing
# from /etc/mysql is used.
mariadb_cnf() {
  local dir="$1" port="$2" address="$3"
  cat <<EOF
[client]
socket = $dir/mysqld.sock
port   = $port
# Only clients reading this file (the mariadb CLI of scripts and tests) use
# it: they see the latin1 columns' bytes exactly as the server stored them.
default-character-set = latin1

[mariadbd]
user          = mysql
datadir       = $dir/data
socket        = $dir/mysqld.sock
pid-file      = $dir/mariadbd.pid
log-error     = $dir/error.log
port          = $port
bind-address  = $address
skip-name-resolve
max_connections = 200

# Server charset latin1, as MySQL 5.5 (the 2012 original's database) had it:
# the tables' text columns are latin1 anyway, and iReporter sets its own
# connection charset (db_charset = latin1).
character-set-server = latin1
collation-server     = latin1_swedish_ci

# sql_mode is deliberately NOT set: MariaDB 10.11's default (strict,
# STRICT_TRANS_TABLES ...) applies, and iReporter must behave like the PHP
# original under it (the reference stack uses sql_mode = "" instead).

# Small private instance.
innodb_buffer_pool_size = 64M
innodb_log_file_size    = 32M
performance_schema      = OFF
# Dev/test data: flush the InnoDB log once a second, not at every commit
# (the 2012 MyISAM tables never synced either).
innodb_flush_log_at_trx_commit = 2
EOF
}

# mariadb_install_db CNF DATADIR LABEL: a new data directory for the
# private MariaDB of CNF (root by unix socket, no test database), once; its
# log beside DATADIR.
mariadb_install_db() {
  local cnf="$1" datadir="$2" label="$3" out
  [ -d "$datadir/mysql" ] && return 0
  out="$(dirname "$datadir")/install-db.log"
  log "${label}initialising datadir $datadir"
  mariadb-install-db --defaults-file="$cnf" --user=mysql --datadir="$datadir" \
      --auth-root-authentication-method=socket --skip-test-db > "$out" 2>&1 \
    || { cat "$out" >&2; die "mariadb-install-db failed"; }
}

# install_app_database PASSWORD CLIENT...: through the root client command
# CLIENT... (words of a command or function), database DB_NAME, the
# application user DB_USER on both loopback forms and on the addresses of
# DB_USER_HOSTS, if set (the password set again each time: a data directory
# may predate it), and sql/schema.sql with every migration (each one
# idempotent).
install_app_database() {
  local password="$1" migration host
  shift
  {
    echo "CREATE DATABASE IF NOT EXISTS \`${DB_NAME}\`;"
    for host in localhost 127.0.0.1 ${DB_USER_HOSTS:-}; do
      echo "CREATE USER IF NOT EXISTS '${DB_USER}'@'${host}' IDENTIFIED BY '${password}';"
      echo "ALTER USER '${DB_USER}'@'${host}' IDENTIFIED BY '${password}';"
      echo "GRANT ALL PRIVILEGES ON \`${DB_NAME}\`.* TO '${DB_USER}'@'${host}';"
    done
  } | "$@"
  "$@" "$DB_NAME" < "$IREPORTER_REPO/sql/schema.sql"
  for migration in "$IREPORTER_REPO"/sql/migrations/*.sql; do
    "$@" "$DB_NAME" < "$migration"
  done
}

# A private nginx lives in one folder DIR: DIR/nginx.conf (its `pid` is
# DIR/nginx.pid, its `error_log` DIR/error.log) and DIR/tmp/ (the temporary
# folders, www-data's). It is found by that pid file and the "-c
# DIR/nginx.conf" of its command line.

# nginx_in DIR ARGS...: nginx on DIR's configuration (-t, -s reload, ...).
nginx_in() {
  local dir="$1"; shift
  /usr/sbin/nginx -p "$dir/" -e "$dir/error.log" -c "$dir/nginx.conf" "$@"
}

nginx_running() { alive "$1/nginx.pid" "-c $1/nginx.conf"; }

# nginx_folder DIR: DIR, root's (0755), with the temporary folders.
nginx_folder() {
  root_dir "$1" 0755
  mkdir -p "$1"/tmp/{client_body,fastcgi,proxy,uwsgi,scgi}
  chown -hR www-data:www-data "$1/tmp"
}

# nginx_start NAME DIR ADDR: test DIR's configuration, then reload the nginx
# running on it, or start one and wait (bounded) for its pid file.
nginx_start() {
  local name="$1" dir="$2" addr="$3" i
  nginx_in "$dir" -t -q || die "nginx config test failed ($dir/nginx.conf)"
  if nginx_running "$dir"; then
    log "$name running (pid $(pidfile_pid "$dir/nginx.pid")), reloading its config"
    nginx_in "$dir" -s reload
    return
  fi
  rm -f "$dir/nginx.pid"
  log "starting $name on $addr"
  ( cd / && nginx_in "$dir" >> "$dir/nginx.out" 2>&1 < /dev/null ) \
    || { tail -n 20 "$dir/error.log" >&2; die "$name did not start"; }
  # The master writes its pid file after the starting process has left.
  for ((i = 0; i < 100; i++)); do nginx_running "$dir" && return 0; sleep 0.1; done
  die "$name did not write $dir/nginx.pid"
}

# nginx_reload DIR: reload the nginx of DIR and wait (bounded, 10 s) until
# its old workers have left. A reload is asynchronous: until they leave,
# they still take new connections and answer them with the old
# configuration. Fails if they have not left by then (a worker holding a
# long-lived connection, a live subscriber, stays until it closes).
nginx_reload() {
  local dir="$1" master old
  master="$(pidfile_pid "$dir/nginx.pid")" && proc_alive "$master" || die "no nginx runs from $dir"
  old="$(pgrep -P "$master" | tr '\n' ' ')"
  nginx_in "$dir" -s reload
  children_replaced "$master" "$old" 1
}

# children_replaced MASTER "OLD PIDS" COUNT: waits (bounded, 10 s) until
# none of MASTER's children OLD PIDS is left and COUNT or more run; fails
# if that has not happened by then.
children_replaced() {
  local now w left i
  for ((i = 0; i < 100; i++)); do
    sleep 0.1
    now=" $(pgrep -P "$1" | tr '\n' ' ')"
    left=0
    for w in $2; do [[ "$now" == *" $w "* ]] && left=1; done
    [ "$left" = 0 ] && [ "$(wc -w <<< "$now")" -ge "$3" ] && return 0
  done
  return 1
}

# nginx_stop NAME DIR: a graceful stop (SIGQUIT: the requests in flight end).
nginx_stop() { stop_pidfile "$1" "$2/nginx.pid" "-c $2/nginx.conf" QUIT 15; }

# reload_server PIDFILE WORKERS: SIGUSR2 to the ireporter of PIDFILE, which
# reads its configuration again and replaces every worker (the new ones
# first); waits, bounded (10 s), until none of the old workers is left and
# WORKERS run.
reload_server() {
  local master old
  master="$(pidfile_pid "$1")" && proc_alive "$master" || die "no server runs from $1"
  old="$(pgrep -P "$master" | tr '\n' ' ')"
  kill -USR2 "$master"
  children_replaced "$master" "$old" "$2" || die "the server of $1 did not replace its workers after SIGUSR2"
}

# bench_results NAME: RES, a benchmark's results folder, made: as given, or
# bench/results/<UTC date>-NAME.
bench_results() {
  RES="${RES:-$IREPORTER_REPO/bench/results/$(date -u +%F)-$1}"
  mkdir -p "$RES"
}
