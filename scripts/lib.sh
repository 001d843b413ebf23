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
