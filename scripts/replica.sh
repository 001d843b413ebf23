#!/usr/bin/env bash
# replica.sh - a private MariaDB primary with one GTID read replica on
# loopback, for iReporter's tests and for operators trying `db_replicas`.
#
#   scripts/replica.sh start  DIR PORT   start both (scripts/mariadb.sh each):
#                                        the primary on PORT (binary log,
#                                        server_id 1), the replica on PORT+1
#                                        (server_id 2, read_only), replicating
#                                        from the primary's GTID position at
#                                        its first start (MASTER_USE_GTID =
#                                        slave_pos). Waits, bounded, until the
#                                        replica's threads run. Idempotent.
#   scripts/replica.sh stop   DIR        stop both
#   scripts/replica.sh sql    DIR PORT primary|replica [MARIADB ARGS...]
#                                        root client on database iReport
#   scripts/replica.sh url    DIR PORT   the server's db_url (the primary, TCP)
#   scripts/replica.sh replicas DIR PORT the server's db_replicas
#
# Layout: DIR/primary and DIR/replica (scripts/mariadb.sh's, each), and
# DIR/repl.password (the replication user's, 0600).
set -euo pipefail
LOG_TAG=replica
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Seconds the replica may take to connect and run both threads.
START_TIMEOUT="${REPLICA_START_TIMEOUT:-60}"

usage() { echo "usage: $0 start|url|replicas DIR PORT | stop DIR | sql DIR PORT primary|replica [ARGS...]" >&2; exit 2; }
dir_port_args 3360 "$@"; set -- "${MORE[@]}"
MARIADB="$IREPORTER_REPO/scripts/mariadb.sh"
REPL_PASSFILE="$DIR/repl.password"

root_sql() { # primary|replica [ARGS...]
  local which="$1"; shift
  mariadb --defaults-file="$DIR/$which/my.cnf" -u root "$@"
}

repl_password() { secret_file "$REPL_PASSFILE"; }

# One field of SHOW SLAVE STATUS on the replica ("" when not replicating).
slave_field() {
  root_sql replica -e 'SHOW SLAVE STATUS\G' 2>/dev/null | awk -v f="$1:" '$1 == f { print $2 }'
}

do_start() {
  need_root "MariaDB runs as user mysql"
  mkdir -p "$DIR"; chmod 755 "$DIR"
  MARIADB_EXTRA_CNF="
# The primary (scripts/replica.sh): a binary log with GTIDs for the replica.
server_id        = 1
log_bin          = binlog
binlog_format    = ROW
gtid_strict_mode = 1" "$MARIADB" start "$DIR/primary" "$PORT"
  local password
  password="$(repl_password)"
  root_sql primary <<SQL
CREATE USER IF NOT EXISTS 'repl'@'127.0.0.1' IDENTIFIED BY '${password}';
ALTER USER 'repl'@'127.0.0.1' IDENTIFIED BY '${password}';
GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1';
SQL
  # The same application user and password on both: the server reaches the
  # replica with db_url's credentials.
  mkdir -p "$DIR/replica"
  [ -s "$DIR/replica/ireport.password" ] || cp "$DIR/primary/ireport.password" "$DIR/replica/ireport.password"
  # The replica's schema is made by the same scripts as the primary's (it
  # keeps no binary log: only what it applies counts), then it follows the
  # primary from the GTID position they both stand at. read_only: only
  # replication and root change it.
  MARIADB_EXTRA_CNF="
# The replica (scripts/replica.sh).
server_id        = 2
gtid_strict_mode = 1
read_only        = ON
relay_log        = relay" "$MARIADB" start "$DIR/replica" "$((PORT + 1))"
  if [ -z "$(slave_field Master_Host)" ]; then
    local position
    position="$(root_sql primary -N -B -e 'SELECT @@gtid_binlog_pos')"
    log "the replica follows the primary from GTID position '${position}'"
    root_sql replica <<SQL
SET GLOBAL gtid_slave_pos = '${position}';
CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = ${PORT}, MASTER_USER = 'repl',
  MASTER_PASSWORD = '${password}', MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1;
SQL
  fi
  root_sql replica -e 'START SLAVE'
  local deadline=$((SECONDS + START_TIMEOUT))
  until [ "$(slave_field Slave_IO_Running)" = Yes ] && [ "$(slave_field Slave_SQL_Running)" = Yes ]; do
    if ((SECONDS >= deadline)); then
      root_sql replica -e 'SHOW SLAVE STATUS\G' >&2 || true
      die "the replica does not replicate after ${START_TIMEOUT}s (log: $DIR/replica/error.log)"
    fi
    sleep 0.5
  done
  log "ready: primary 127.0.0.1:$PORT, replica 127.0.0.1:$((PORT + 1)) at GTID $(root_sql replica -N -B -e 'SELECT @@gtid_slave_pos')"
}

case "$CMD" in
  start)    do_start ;;
  stop)     "$MARIADB" stop "$DIR/replica"; "$MARIADB" stop "$DIR/primary" ;;
  sql)      which="${1:-}"; [[ "$which" =~ ^(primary|replica)$ ]] || usage; shift; root_sql "$which" iReport "$@" ;;
  url)      printf 'mysql://ireport:%s@127.0.0.1:%s/iReport\n' "$(cat "$DIR/primary/ireport.password")" "$PORT" ;;
  replicas) echo "127.0.0.1:$((PORT + 1))" ;;
  *)        usage ;;
esac
