#!/usr/bin/env bash
# What each form of upload's account guard costs MariaDB, in a stored
# procedure (no client, no protocol): a plain INSERT into photos, the
# INSERT ... SELECT FROM login of 5cc8747, and a plain INSERT followed by
# SELECT ... LOCK IN SHARE MODE (4bb456f), on the PHP era's MyISAM tables,
# then on InnoDB. A private MariaDB (scripts/mariadb.sh) on port 33999.
#   bash bench/results/2026-12-06-issue30-login-guard/run.sh [N]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"; REPO="$HERE/../../.."
N="${1:-20000}"; D=/tmp/ireporter-guard-db
bash "$REPO/scripts/mariadb.sh" start "$D" 33999 >/dev/null
trap 'bash "$REPO/scripts/mariadb.sh" stop "$D" 33999 >/dev/null; rm -rf "$D"' EXIT
sql() { bash "$REPO/scripts/mariadb.sh" sql "$D" 33999; }
sed "s|/work/main/sql/|$REPO/sql/|" "$HERE/guard.sql" | sql
run() {
  local s e; s=$(date +%s.%N); echo "CALL $1($N);" | sql; e=$(date +%s.%N)
  echo "$2 $1: $(echo "($e - $s) * 1000000 / $N" | bc) us per insert"
}
for p in plain guarded checked; do run "$p" myisam; done
echo "ALTER TABLE photos ENGINE=InnoDB; ALTER TABLE login ENGINE=InnoDB;" | sql
for p in plain guarded checked; do run "$p" innodb; done
