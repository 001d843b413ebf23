#!/usr/bin/env bash
# mariadb.sh - a private MariaDB for iReporter's dev and test stacks.
#
#   scripts/mariadb.sh start  DIR PORT   initialise (once) and start; create
#                                        database iReport, user ireport with a
#                                        random password (@localhost,
#                                        @127.0.0.1) and load sql/schema.sql +
#                                        sql/migrations/*.sql. Idempotent.
#   scripts/mariadb.sh stop   DIR [PORT] stop it (pid file + command-line check)
#   scripts/mariadb.sh status DIR [PORT] exit 0 if running, 3 if not
#   scripts/mariadb.sh sql    DIR PORT [MARIADB ARGS...]
#                                        root client on database iReport
#                                        (stdin/args as for `mariadb`)
#   scripts/mariadb.sh url    DIR        the server's db_url (user ireport,
#                                        its password, the socket)
#
# MARIADB_EXTRA_CNF: lines added to the [mariadbd] group (scripts/replica.sh:
# server_id, the binary log, GTID settings).
# Layout: DIR/my.cnf (rendered on each start), DIR/data, DIR/mysqld.sock,
# DIR/mariadbd.pid, DIR/error.log, DIR/ireport.password (root's, 0600: made
# once from /dev/urandom, never the well-known ireport/ireport); listens on
# 127.0.0.1:PORT too. Runs as user mysql. The root account uses unix-socket auth, so the root client is
#   mariadb --defaults-file=DIR/my.cnf -u root iReport
# Modelled on the PHP reference's up.sh / down.sh.
set -euo pipefail
LOG_TAG=mariadb
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DB_NAME=iReport
DB_USER=ireport

usage() { echo "usage: $0 start|stop|status|sql DIR PORT [ARGS...] | url DIR" >&2; exit 2; }
dir_port_args "" "$@"; set -- "${MORE[@]}"
CNF="$DIR/my.cnf"
PIDFILE="$DIR/mariadbd.pid"
PASSFILE="$DIR/ireport.password"
PATTERN="--defaults-file=$CNF"
CLIENT=(mariadb --defaults-file="$CNF" -u root)

# The application user's password: random, made once, kept beside the data.
db_password() { secret_file "$PASSFILE"; }

write_cnf() {
  { echo "# Private MariaDB for iReporter (written by scripts/mariadb.sh)."
    mariadb_cnf "$DIR" "$PORT" 127.0.0.1
    cat <<EOF
# Its own place for temporary tables (a sort's files): a shared machine's
# /tmp may be cleaned under a running statement (seen: "Error on delete of
# '/tmp/#sql-temptable-…'" in a benchmark's LIKE queries).
tmpdir          = $DIR/tmp
key_buffer_size = 16M
${MARIADB_EXTRA_CNF:-}
EOF
  } | write_file "$CNF"
  chmod 644 "$CNF"
}

ping_db() { mariadb-admin --defaults-file="$CNF" -u root ping >/dev/null 2>&1; }

do_start() {
  need_root "MariaDB runs as user mysql"
  [[ "$PORT" =~ ^[0-9]+$ ]] || usage
  mkdir -p "$DIR"
  chown mysql:mysql "$DIR"; chmod 755 "$DIR"
  mkdir -p "$DIR/tmp"
  chown mysql:mysql "$DIR/tmp"; chmod 700 "$DIR/tmp"
  write_cnf

  mariadb_install_db "$CNF" "$DIR/data" ""

  if alive "$PIDFILE" "$PATTERN"; then
    log "already running (pid $(pidfile_pid "$PIDFILE")), socket $DIR/mysqld.sock"
  else
    rm -f "$PIDFILE"
    log "starting on $DIR/mysqld.sock and 127.0.0.1:$PORT"
    # setsid -f: own session, every fd redirected, so nothing keeps the
    # caller's stdout (a CI pipe, say) open.
    ( cd / && exec setsid -f /usr/sbin/mariadbd --defaults-file="$CNF" \
          >> "$DIR/mariadbd.out" 2>&1 < /dev/null )
    local i
    for ((i = 0; i < 120; i++)); do ping_db && break; sleep 0.5; done
    ping_db || { tail -20 "$DIR/error.log" >&2 2>/dev/null; die "MariaDB did not come up (log: $DIR/error.log)"; }
  fi

  local password
  password="$(db_password)"
  install_app_database "$password" "${CLIENT[@]}"
  log "ready: db $DB_NAME, user $DB_USER (password in $PASSFILE), socket $DIR/mysqld.sock, 127.0.0.1:$PORT"
}

case "$CMD" in
  start)  do_start ;;
  stop)   stop_pidfile MariaDB "$PIDFILE" "$PATTERN" TERM 60 ;;
  status)
    if alive "$PIDFILE" "$PATTERN"; then
      echo "MariaDB running (pid $(pidfile_pid "$PIDFILE")), socket $DIR/mysqld.sock"
    else
      echo "MariaDB not running ($DIR)"; exit 3
    fi ;;
  sql)    exec "${CLIENT[@]}" "$DB_NAME" "$@" ;;
  url)    password="$(db_password)"
          printf 'mysql://%s:%s@localhost/%s?socket=%s\n' "$DB_USER" "$password" "$DB_NAME" "$DIR/mysqld.sock" ;;
  *)      usage ;;
esac
