#!/usr/bin/env bash
# galera.sh - a private three-node MariaDB Galera cluster on loopback, for
# iReporter's tests and for operators trying the cluster on one machine.
#
#   scripts/galera.sh start  DIR PORT    start the nodes that are not running:
#                                        when none runs, one bootstraps a new
#                                        cluster (--wsrep-new-cluster): node 1
#                                        the first time, after that the node
#                                        holding the latest state (below); it
#                                        gets database iReport, user ireport,
#                                        the schema and migrations; the others
#                                        join by state transfer (SST by rsync
#                                        the first time, IST after). Waits,
#                                        bounded, until every node is Synced
#                                        in a cluster of three. Idempotent.
#   scripts/galera.sh start DIR PORT --partitionable N
#                                        the same, with node N (1-3) in a
#                                        network namespace of its own (below),
#                                        so that it can be cut off; remembered
#                                        in DIR for every later command
#   scripts/galera.sh partition DIR PORT cut the partitionable node's link: it
#                                        reaches none of the others and no
#                                        client reaches it (both ends down)
#   scripts/galera.sh heal DIR PORT      give it back its link
#   scripts/galera.sh start-node DIR PORT N   start node N (1-3) only, joining
#                                        the running ones, and wait until it
#                                        is Synced (a node brought back)
#   scripts/galera.sh stop   DIR [PORT]  stop every node (and remove the
#                                        partitionable node's namespace, link
#                                        and address, whatever a failed start
#                                        left of them)
#   scripts/galera.sh status DIR [PORT]  each node's state; exit 0 if all
#                                        three are running and Synced, 3 if not
#   scripts/galera.sh sql    DIR PORT N [MARIADB ARGS...]
#                                        root client on node N, database iReport
#   scripts/galera.sh nodes  DIR PORT    the server's db_nodes (host:port,...)
#   scripts/galera.sh url    DIR PORT    the server's db_url (user ireport, its
#                                        password, node 1 over TCP)
#
# Node N (1-3) listens on 127.0.0.1 (see --partitionable): SQL PORT+N-1, Galera replication
# PORT+10+N-1, incremental state transfer PORT+20+N-1, full state transfer
# (rsync) PORT+30+N-1. Layout: DIR/nodeN/{my.cnf,data,mysqld.sock,
# mariadbd.pid,error.log}, DIR/ireport.password (as scripts/mariadb.sh).
#
# With --partitionable N the nodes listen on private addresses instead of
# 127.0.0.1, so that a cut is a real network partition on one machine:
# node N runs in the network namespace DIR/nodeN/netns (a file, not a name
# under /run/netns: nothing is shared with other clusters or machines'
# runs) on 10.213.X.2, joined to the host by the veth pair gPORT-nodeN /
# gPORT-nodeN-in; the other two listen on 10.213.X.1, a /32 on lo (an
# address on the veth would vanish with the link), X = PORT/10 mod 256.
# The traffic never leaves the machine. `partition` sets both ends down
# (connects fail at once: "Network is unreachable"; established connections
# hear nothing), `heal` sets them up and puts the routes back.
# The node that bootstraps after a stop is the one whose grastate.dat says
# safe_to_bootstrap: 1 (Galera marks the last node to leave cleanly); when
# none says it (every node crashed, or the cluster lost quorum) the one with
# the highest seqno, read from grastate.dat or, after a crash (seqno -1),
# recovered from InnoDB by `mariadbd --wsrep-recover`; on a tie the lowest
# number. Every step after the bootstrap talks to a running node.
# Needs Debian's mariadb-server, galera-4 and rsync (scripts/deps.sh).
set -euo pipefail
LOG_TAG=galera
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DB_NAME=iReport
DB_USER=ireport
NODES=(1 2 3)
# Seconds a node may take to start and reach Synced (an SST included).
START_TIMEOUT="${GALERA_START_TIMEOUT:-120}"
# The server each node runs (test_galera puts a wrapper here whose first
# start of a node ends at once, as Galera's aborted starts do).
MARIADBD="${GALERA_MARIADBD:-/usr/sbin/mariadbd}"

usage() { echo "usage: $0 start|stop|status|nodes|url|partition|heal DIR PORT | start DIR PORT --partitionable N | start-node DIR PORT N | sql DIR PORT N [ARGS...]" >&2; exit 2; }
dir_port_args 3320 "$@"; set -- "${MORE[@]}"
PASSFILE="$DIR/ireport.password"

node_dir()   { echo "$DIR/node$1"; }
node_cnf()   { echo "$DIR/node$1/my.cnf"; }
node_pid()   { echo "$DIR/node$1/mariadbd.pid"; }
sql_port()   { echo $((PORT + $1 - 1)); }
group_port() { echo $((PORT + 10 + $1 - 1)); }
ist_port()   { echo $((PORT + 20 + $1 - 1)); }
sst_port()   { echo $((PORT + 30 + $1 - 1)); }
pattern()    { echo "--defaults-file=$(node_cnf "$1")"; }
client()     { local n="$1"; shift; mariadb --defaults-file="$(node_cnf "$n")" -u root "$@"; }
running()    { alive "$(node_pid "$1")" "$(pattern "$1")"; }

# ---------------------------------------------- the partitionable node
PARTITION_FILE="$DIR/partitionable-node"
# The node that lives in its own network namespace ("" when none does).
partitionable() { cat "$PARTITION_FILE" 2>/dev/null || true; }
subnet()     { echo "10.213.$((PORT / 10 % 256))"; }
HOST_SIDE="$(subnet).1"
NODE_SIDE="$(subnet).2"
netns_file() { echo "$DIR/node$1/netns"; }
host_link()  { echo "g$PORT-node$1"; }
node_link()  { echo "g$PORT-node$1-in"; }
in_netns()   { local n="$1"; shift; nsenter --net="$(netns_file "$n")" "$@"; }
netns_made() { mountpoint -q "$(netns_file "$1")" 2>/dev/null; }

# The address node N listens on.
node_host() {
  local cut
  cut="$(partitionable)"
  if [ -z "$cut" ]; then echo 127.0.0.1
  elif [ "$1" = "$cut" ]; then echo "$NODE_SIDE"
  else echo "$HOST_SIDE"; fi
}

# Both ends of the link up, with their routes (a link set down loses them).
link_up() {
  local n="$1"
  ip link set "$(host_link "$n")" up
  ip route replace "$NODE_SIDE/32" dev "$(host_link "$n")" src "$HOST_SIDE"
  in_netns "$n" ip link set "$(node_link "$n")" up
  in_netns "$n" ip route replace "$HOST_SIDE/32" dev "$(node_link "$n")" src "$NODE_SIDE"
}

link_down() {
  local n="$1"
  ip link set "$(host_link "$n")" down
  in_netns "$n" ip link set "$(node_link "$n")" down
}

# Makes what is missing of the namespace, the veth pair and the addresses.
make_network() {
  local n="$1" file
  file="$(netns_file "$n")"
  command -v nsenter >/dev/null || die "nsenter is missing (util-linux)"
  # (grep -q on a here-string: on a pipe it may exit first, and pipefail would take ip's SIGPIPE for "absent")
  grep -qF " $HOST_SIDE/32 " <<< "$(ip -o addr show dev lo)" || ip addr add "$HOST_SIDE/32" dev lo
  mkdir -p "$(node_dir "$n")"
  if ! netns_made "$n"; then
    touch "$file"
    unshare --net="$file" true || die "cannot make a network namespace at $file"
    in_netns "$n" ip link set lo up
  fi
  if ! ip link show "$(host_link "$n")" > /dev/null 2>&1; then
    ip link add "$(host_link "$n")" type veth peer name "$(node_link "$n")"
    ip link set "$(node_link "$n")" netns "$file"
    in_netns "$n" ip addr add "$NODE_SIDE/32" dev "$(node_link "$n")"
    log "node $n: in network namespace $file, $NODE_SIDE over $(host_link "$n"); the others on $HOST_SIDE"
  fi
  link_up "$n"
}

# Removes whatever exists of them (after a failed start too).
remove_network() {
  local n="$1" file
  file="$(netns_file "$n")"
  ip link del "$(host_link "$n")" 2>/dev/null || true
  if netns_made "$n"; then umount "$file" || warn "cannot unmount $file"; fi
  rm -f "$file"
  ip addr del "$HOST_SIDE/32" dev lo 2>/dev/null || true
}

# One status variable of node N ("" when it does not answer).
status_var() {
  client "$1" -N -B -e "SHOW GLOBAL STATUS LIKE '$2'" 2>/dev/null | awk '{print $2}'
}
synced() {
  [ "$(status_var "$1" wsrep_local_state_comment)" = Synced ] \
    && [ "$(status_var "$1" wsrep_cluster_status)" = Primary ] \
    && [ "$(status_var "$1" wsrep_ready)" = ON ]
}

db_password() { secret_file "$PASSFILE"; }

write_cnf() {
  local n="$1" dir members="" m
  dir="$(node_dir "$n")"
  for m in "${NODES[@]}"; do members+="${members:+,}$(node_host "$m"):$(group_port "$m")"; done
  { echo "# Galera node $n of iReporter's private cluster (written by scripts/galera.sh)."
    mariadb_cnf "$dir" "$(sql_port "$n")" "$(node_host "$n")"
    cat <<EOF

# Galera: row-based binary log format, InnoDB only, interleaved
# auto-increments (each node hands out its own ids: wsrep_auto_increment_control).
wsrep_on              = ON
wsrep_provider        = /usr/lib/galera/libgalera_smm.so
wsrep_cluster_name    = ireporter
wsrep_cluster_address = gcomm://$members
wsrep_node_name       = node$n
wsrep_node_address    = $(node_host "$n"):$(group_port "$n")
wsrep_provider_options = "gmcast.listen_addr=tcp://$(node_host "$n"):$(group_port "$n");ist.recv_addr=$(node_host "$n"):$(ist_port "$n");gcache.size=64M;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;evs.install_timeout=PT6S"
wsrep_sst_method      = rsync
wsrep_sst_receive_address = $(node_host "$n"):$(sst_port "$n")
wsrep_slave_threads   = 2
binlog_format         = ROW
default_storage_engine = InnoDB
innodb_autoinc_lock_mode = 2
EOF
  } | write_file "$(node_cnf "$n")"
  chmod 644 "$(node_cnf "$n")"
}

# Starts node N: a new cluster when BOOTSTRAP is 1, else joining the others.
launch() {
  local n="$1" bootstrap="$2" dir extra=()
  dir="$(node_dir "$n")"
  mkdir -p "$dir"; chown mysql:mysql "$dir"; chmod 755 "$dir"
  write_cnf "$n"
  [ "$bootstrap" = 1 ] && mariadb_install_db "$(node_cnf "$n")" "$dir/data" "node $n: "
  # A joiner with no datadir gets one whole by SST.
  mkdir -p "$dir/data"; chown mysql:mysql "$dir/data"
  if [ "$bootstrap" = 1 ]; then
    extra=(--wsrep-new-cluster)
    # This node is the one that holds the cluster's latest state (a fresh
    # cluster, or the last node stopped cleanly): say so to Galera.
    [ -f "$dir/data/grastate.dat" ] && sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$dir/data/grastate.dat"
  fi
  # After a crash (kill -9) grastate.dat says seqno -1: start from the last
  # committed position recovered from InnoDB (what Debian's galera_recovery
  # does for systemd), so a joiner asks for the missing writesets only (IST)
  # instead of a whole copy (SST), and a bootstrapping node carries on from it.
  if grep -qs '^seqno: *-1' "$dir/data/grastate.dat"; then
    local position
    position="$(recovered_position "$n")"
    if [ -n "$position" ]; then
      log "node $n: recovered position $position after an unclean stop"
      extra+=(--wsrep_start_position="$position")
    fi
  fi
  rm -f "$(node_pid "$n")"
  log "node $n: starting on $(node_host "$n"):$(sql_port "$n")$([ "$bootstrap" = 1 ] && echo " (bootstrapping a new cluster)")"
  local netns=()
  [ "$n" = "$(partitionable)" ] && netns=(nsenter --net="$(netns_file "$n")")
  ( cd / && exec "${netns[@]}" setsid -f "$MARIADBD" --defaults-file="$(node_cnf "$n")" "${extra[@]}" \
        >> "$dir/mariadbd.out" 2>&1 < /dev/null )
}

# Whether node N's process (or the setsid that starts it) exists.
started() { pgrep -f -- "$(pattern "$1")" > /dev/null; }

# Waits until node N is Synced; 1 at once when its process ended first.
wait_synced() {
  local n="$1" deadline=$((SECONDS + START_TIMEOUT))
  until synced "$n"; do
    started "$n" || return 1
    if ((SECONDS >= deadline)); then
      tail -30 "$(node_dir "$n")/error.log" >&2 2>/dev/null
      die "node $n is not Synced after ${START_TIMEOUT}s (log: $(node_dir "$n")/error.log)"
    fi
    sleep 0.5
  done
  log "node $n: Synced, cluster size $(status_var "$n" wsrep_cluster_size)"
}

# Starts node N (BOOTSTRAP as for launch) and waits until it is Synced,
# starting it again, twice at most, when it ends on the way: Galera 26.4
# may abort a start when the thread it has just made ends before it reads
# the thread's priority ("Failed to read thread schedparams", seen in CI).
launch_synced() {
  local n="$1" bootstrap="$2" attempt
  for attempt in 1 2 3; do
    launch "$n" "$bootstrap"
    wait_synced "$n" && return 0
    # (its log may be missing, or hold no error: nothing to show then)
    { grep -s '\[ERROR\]' "$(node_dir "$n")/error.log" || true; } | tail -3 >&2
    log "node $n: ended before it was Synced (attempt $attempt of 3; log: $(node_dir "$n")/error.log)"
  done
  die "node $n ended at each of 3 starts (log: $(node_dir "$n")/error.log)"
}

any_running() { local m; for m in "${NODES[@]}"; do running "$m" && return 0; done; return 1; }

# Node N's last committed position (uuid:seqno) as InnoDB has it, "" when
# the recovery finds none. Read with the node stopped.
recovered_position() {
  local n="$1" dir
  dir="$(node_dir "$1")"
  rm -f "$dir/recover.log"
  "$MARIADBD" --defaults-file="$(node_cnf "$n")" --wsrep-recover --log-error="$dir/recover.log" \
      > /dev/null 2>&1 < /dev/null || true
  grep -a 'WSREP: Recovered position:' "$dir/recover.log" 2>/dev/null | tail -1 | sed 's/.*Recovered position: *//'
}

# Node N's seqno: grastate.dat's, or after a crash (-1 there) InnoDB's; -1
# when it has neither (a node that never joined).
node_seqno() {
  local n="$1" state seqno
  state="$(node_dir "$n")/data/grastate.dat"
  seqno="$(sed -n 's/^seqno: *//p' "$state" 2>/dev/null | head -1)"
  if [[ ! "$seqno" =~ ^[0-9]+$ ]] && [ -d "$(node_dir "$n")/data/mysql" ]; then
    seqno="$(recovered_position "$n")"
    seqno="${seqno##*:}"
  fi
  [[ "$seqno" =~ ^[0-9]+$ ]] && echo "$seqno" || echo -1
}

# The node to bootstrap when none runs, in BOOTSTRAP: node 1 of a fresh
# cluster; the one Galera marked safe (the last to stop cleanly); else, when
# none is (they all crashed), the one with the highest seqno.
choose_bootstrap() {
  local m seqno best_seqno=-1
  BOOTSTRAP=""
  [ -d "$(node_dir 1)/data/mysql" ] || { BOOTSTRAP=1; return; }
  for m in "${NODES[@]}"; do
    grep -qs '^safe_to_bootstrap: 1' "$(node_dir "$m")/data/grastate.dat" && { BOOTSTRAP="$m"; return; }
  done
  for m in "${NODES[@]}"; do
    seqno="$(node_seqno "$m")"
    log "node $m: not marked safe to bootstrap, seqno $seqno"
    if ((seqno > best_seqno)); then BOOTSTRAP="$m"; best_seqno="$seqno"; fi
  done
  [ -n "$BOOTSTRAP" ] || die "no node has a seqno (grastate.dat nor --wsrep-recover): see the nodes' recover.log in $DIR"
  log "node $BOOTSTRAP holds the latest state (seqno $best_seqno): it bootstraps"
}

load_schema() {
  local n="$1" password
  password="$(db_password)"
  # Our servers reach a partitionable cluster from its host-side address.
  [ -z "$(partitionable)" ] || DB_USER_HOSTS="$HOST_SIDE"
  install_app_database "$password" client "$n"
}

# `start`'s --partitionable N: kept in DIR, as every later command needs it.
choose_partitionable() {
  (($# == 0)) && return 0
  [ "$1" = --partitionable ] && [[ "${2:-}" =~ ^[123]$ ]] && (($# == 2)) || usage
  local kept
  kept="$(partitionable)"
  [ -z "$kept" ] || [ "$kept" = "$2" ] || die "node $kept of $DIR is the partitionable one, not $2 (stop, remove $DIR, start again)"
  [ -n "$kept" ] || ! any_running || die "the cluster in $DIR runs on 127.0.0.1: stop it and remove $DIR to start it partitionable"
  echo "$2" > "$PARTITION_FILE"
}

# Makes the partitionable node's network (if any) before a node starts.
prepare_network() {
  local cut
  cut="$(partitionable)"
  [ -z "$cut" ] || make_network "$cut"
}

do_start() {
  need_root "MariaDB runs as user mysql"
  command -v rsync >/dev/null || die "rsync is missing (scripts/deps.sh installs it): Galera's state transfer uses it"
  [ -e /usr/lib/galera/libgalera_smm.so ] || die "galera-4 is not installed (scripts/deps.sh)"
  mkdir -p "$DIR"; chmod 755 "$DIR"
  choose_partitionable "$@"
  prepare_network
  local n
  if ! any_running; then
    choose_bootstrap
    launch_synced "$BOOTSTRAP" 1
    load_schema "$BOOTSTRAP"
  fi
  for n in "${NODES[@]}"; do
    running "$n" || launch_synced "$n" 0
  done
  for n in "${NODES[@]}"; do
    [ "$(status_var "$n" wsrep_cluster_size)" = 3 ] || die "node $n sees a cluster of $(status_var "$n" wsrep_cluster_size), not 3"
  done
  log "ready: three nodes Synced; db_nodes = $(nodes_list)"
}

do_start_node() {
  local n="${1:-}"
  [[ "$n" =~ ^[123]$ ]] || usage
  need_root "MariaDB runs as user mysql"
  running "$n" && { log "node $n already running"; return 0; }
  any_running || die "no node runs: use start to bring the cluster up"
  prepare_network
  launch_synced "$n" 0
}

do_stop() {
  local n
  # One after the other, so the last one stopped is marked safe to bootstrap.
  for n in 3 2 1; do
    stop_pidfile "Galera node $n" "$(node_pid "$n")" "$(pattern "$n")" TERM 60
  done
  local cut
  cut="$(partitionable)"
  [ -z "$cut" ] || remove_network "$cut"
}

# `partition` and `heal`: the partitionable node's link down or up.
do_link() {
  local cut
  cut="$(partitionable)"
  [ -n "$cut" ] || die "no node of $DIR is partitionable (start it with --partitionable N)"
  netns_made "$cut" || die "node $cut's network namespace is gone: start the cluster again"
  need_root "a network link is set down or up"
  if [ "$1" = partition ]; then
    link_down "$cut"
    log "node $cut cut off: $(host_link "$cut") down at both ends"
  else
    link_up "$cut"
    log "node $cut's link back up"
  fi
}

# ", cut off" or ", in its namespace" for the partitionable node.
link_state() {
  [ "$1" = "$(partitionable)" ] || return 0
  if grep -q '<[^>]*\bUP\b' <<< "$(ip link show "$(host_link "$1")" 2>/dev/null)"; then echo ", in its network namespace"
  else echo ", cut off (partition)"; fi
}

do_status() {
  local n rc=0
  for n in "${NODES[@]}"; do
    if running "$n"; then
      echo "node $n: running (pid $(pidfile_pid "$(node_pid "$n")")), $(node_host "$n"):$(sql_port "$n")$(link_state "$n"), $(status_var "$n" wsrep_local_state_comment), $(status_var "$n" wsrep_cluster_status), cluster size $(status_var "$n" wsrep_cluster_size)"
      synced "$n" || rc=3
    else
      echo "node $n: not running ($(node_dir "$n"))"; rc=3
    fi
  done
  return "$rc"
}

nodes_list() {
  local n list=""
  for n in "${NODES[@]}"; do list+="${list:+,}$(node_host "$n"):$(sql_port "$n")"; done
  echo "$list"
}

case "$CMD" in
  start)      do_start "$@" ;;
  start-node) do_start_node "${1:-}" ;;
  stop)       do_stop ;;
  status)     do_status ;;
  sql)        n="${1:-}"; [[ "$n" =~ ^[123]$ ]] || usage; shift; client "$n" "$DB_NAME" "$@" ;;
  nodes)      nodes_list ;;
  url)        printf 'mysql://%s:%s@%s:%s/%s\n' "$DB_USER" "$(db_password)" "$(node_host 1)" "$(sql_port 1)" "$DB_NAME" ;;
  partition|heal) do_link "$CMD" ;;
  *)          usage ;;
esac
