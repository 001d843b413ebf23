#!/usr/bin/env bash
# nginx.sh - start or stop a private nginx whose configuration is rendered
# in DIR (DIR/nginx.conf, its pid file DIR/nginx.pid: see lib.sh), as
# scripts/stack.sh and scripts/cluster.sh do for theirs. For the E2E harness
# (Tests/EndToEnd/servers.py), which renders with `stack.sh render-nginx` or
# `cluster.sh render-front` and adds its test's edits in between.
#
#   scripts/nginx.sh start DIR ADDR   test the configuration; reload the
#                                     nginx running on it, or start one
#                                     (listening on ADDR, for the log)
#   scripts/nginx.sh stop DIR         SIGQUIT, SIGKILL after 15 s
set -euo pipefail
LOG_TAG=nginx
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { echo "usage: $0 start DIR ADDR | stop DIR" >&2; exit 2; }
(($# >= 2)) || usage
DIR="$(absolute_dir "$2")"
case "$1" in
  start) (($# == 3)) || usage; need_root "nginx's workers switch to www-data"; nginx_start nginx "$DIR" "$3" ;;
  stop)  (($# == 2)) || usage; nginx_stop nginx "$DIR" ;;
  *)     usage ;;
esac
