#!/usr/bin/env bash
# deps.sh - install what building, running and testing iReporter needs, on
# Debian 12 (run as root). Idempotent and quiet: asks apt only about missing
# packages, runs `apt-get update` only when something is missing, and prints
# apt's output only when it fails.
#
#   build : libfcgi-dev libmariadb-dev libgd-dev libjpeg62-turbo-dev libargon2-dev
#           libhiredis-dev libcurl4-openssl-dev libssl-dev libxml2-dev (S3
#           storage: its requests, signatures and XML answers) pkg-config
#           (libxml2's header folder, Package.swift) (Swift itself is not
#           packaged by Debian: it must already be on PATH)
#   run   : nginx libnginx-mod-nchan (the live stream) libnginx-mod-http-lua (nginx
#           answering the plain stream from the server's file) mariadb-server mariadb-client
#           redis-server (sessions and counters shared by several hosts)
#           galera-4 rsync iproute2 (the MariaDB Galera cluster, scripts/galera.sh: its
#           provider library, and its state transfer by rsync, whose script
#           finds the rsync daemon with `ss`; `ip` makes the partitionable node's
#           network, galera.sh --partitionable)
#   test  : curl python3 + pytest, make; apache2 libapache2-mod-fcgid
#           spawn-fcgi (other FastCGI front ends), wrk imagemagick (bench,
#           test images), chromium chromium-driver firefox-esr (the web
#           client's tests; Firefox through PyPI's marionette-driver, as
#           Debian has no geckodriver), php-cli php-redis (PHP reading our
#           sessions in Redis), fail2ban (its fail2ban-regex reads a log the
#           server wrote with deploy/fail2ban's filter, test_throttle.py),
#           prometheus (scrapes a running stack with deploy/prometheus's
#           configuration, test_metrics.py), logrotate (rotates a running
#           server's log with deploy/logrotate, test_deploy_spawn.py)
#   bench : (only with `deps.sh bench`, which bench/run.sh calls) libvips-tools,
#           for the vipsthumbnail side-by-side of the thumbnail micro-benchmark;
#           libnginx-mod-http-js, for the stream answer's harnesses in
#           bench/results (njs, the module before Lua: profile-changes 30)
set -euo pipefail
LOG_TAG=deps
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PKGS=(libfcgi-dev libmariadb-dev libgd-dev libjpeg62-turbo-dev libargon2-dev libhiredis-dev
      libcurl4-openssl-dev libssl-dev libxml2-dev pkg-config
      nginx libnginx-mod-nchan libnginx-mod-http-lua mariadb-server mariadb-client redis-server galera-4 rsync iproute2
      curl python3 make
      apache2 libapache2-mod-fcgid spawn-fcgi systemd wrk imagemagick
      chromium chromium-driver firefox-esr php-cli php-redis fail2ban prometheus logrotate)
[ "${1:-}" = bench ] && PKGS+=(libvips-tools libnginx-mod-http-js)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

apt_updated=0
apt_install() {
  need_root "installs packages with apt-get"
  local out made_policy=0 rc=0
  out="$(mktemp /tmp/ireporter-deps.XXXXXX)"
  log "installing: $*"
  # Keep the distribution's own nginx / mariadb / apache2 services from being
  # started by the package scripts: our stacks run private instances. A
  # Debian container usually has this policy file already; create it only
  # for the install if it is absent.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    made_policy=1
  fi
  {
    if [ "$apt_updated" = 0 ]; then
      apt-get -o DPkg::Lock::Timeout=600 update -qq && apt_updated=1
    fi &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@"
  } > "$out" 2>&1 || rc=$?
  if [ "$made_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
  if [ "$rc" != 0 ]; then
    cat "$out" >&2; rm -f "$out"
    die "apt-get failed (exit $rc) installing: $*"
  fi
  rm -f "$out"
}

missing=()
for p in "${PKGS[@]}"; do installed "$p" || missing+=("$p"); done
((${#missing[@]} == 0)) || apt_install "${missing[@]}"

# Python modules for whichever python3 is first on PATH (the E2E suite runs
# `python3 -m pytest`): pytest, selenium for the browser tests (which drive
# Debian's chromium through its chromedriver: no browser download), and
# marionette-driver (Mozilla's client for Debian's firefox-esr).
# Debian's own python3 is "externally managed" (PEP 668): use its package
# where Debian has one; any other python3 (pyenv, a venv, ...) gets it from
# PyPI, and so does Debian's for a module Debian does not package ("-").
python_module() { # MODULE DEBIAN-PACKAGE|- PYPI-NAME
  python3 -c "import $1" >/dev/null 2>&1 && return 0
  local debian_python=0 flags=()
  python3 -c 'import sys; sys.exit(0 if sys.prefix == sys.base_prefix and sys.prefix == "/usr" else 1)' \
    && debian_python=1
  if [ "$debian_python" = 1 ] && [ "$2" != - ]; then
    apt_install "$2"
  else
    if [ "$debian_python" = 1 ]; then
      python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
      flags=(--break-system-packages)
    fi
    log "installing $3 with pip for $(command -v python3)"
    python3 -m pip install -q --disable-pip-version-check "${flags[@]}" "$3" || die "pip install $3 failed"
  fi
  python3 -c "import $1" >/dev/null 2>&1 || die "$1 still not importable by $(command -v python3)"
}
python_module pytest python3-pytest pytest
python_module selenium python3-selenium selenium
python_module marionette_driver - marionette-driver
# prometheus_client's OpenMetrics parser checks the status page's ?openmetrics.
python_module prometheus_client python3-prometheus-client prometheus-client
# moto's S3 server (scripts/s3-server.py), for the S3 storage tests.
python_module moto.server - 'moto[server]'

# flickrapi (PyPI), for the E2E test of the Flickr-compatible REST endpoint
# with a real Flickr client library; the same rule as pytest.
if ! python3 -c 'import flickrapi' >/dev/null 2>&1; then
  if python3 -c 'import sys; sys.exit(0 if sys.prefix == sys.base_prefix and sys.prefix == "/usr" else 1)'; then
    apt_install python3-flickrapi
  else
    log "installing flickrapi with pip for $(command -v python3)"
    python3 -m pip install -q --disable-pip-version-check 'flickrapi>=2.1' \
      || die "pip install flickrapi failed"
  fi
  python3 -c 'import flickrapi' >/dev/null 2>&1 || die "flickrapi still not importable by $(command -v python3)"
fi
# flickr_api (PyPI; no Debian package), the other Flickr library the E2E test
# drives: it reads getInfo's every part and loads owners with people.getInfo.
python_module flickr_api - 'flickr_api>=0.8'
# Mastodon.py and toot (PyPI; no Debian packages), the Mastodon clients the
# E2E tests of the Mastodon-compatible API drive unchanged.
python_module mastodon - Mastodon.py
python_module toot - toot

command -v swift >/dev/null 2>&1 \
  || warn "swift is not on PATH (install a Swift 6 toolchain, e.g. under /opt/swift, and add its usr/bin to PATH)"

if ((${#missing[@]})); then log "done"; fi
exit 0
