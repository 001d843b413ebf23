#!/usr/bin/env bash
# test.sh - run every test suite against an isolated, freshly created stack
# (`make test`, and CI through .ci/run). Run as root.
#
#   1. scripts/deps.sh
#   2. wipe and start the test stack (scripts/stack.sh functions): RUN_DIR
#      /tmp/ireporter-test, nginx 127.0.0.1:8090, a new MariaDB on
#      127.0.0.1:3310 (datadir wiped each run), the release build
#   3. swift test --no-parallel            (unit + integration tests, one at
#                                          a time: some fork workers, see
#                                          Tests/TestSupport/ChildProcess.swift)
#   4. python3 -m pytest -q Tests/EndToEnd (HTTP through nginx and Apache)
#   5. bench/smoke.sh                      (the benchmark scenarios, seconds)
#   6. faults/run.py --duration 20         (fault injection, own stack)
#   7. Fuzz/run.sh 15                      (libFuzzer, 15 s a harness)
#   8. stop the test stack (always, also on failure or Ctrl-C), print a
#      summary, exit non-zero if anything failed.
#
# Environment:
#   TEST_RUN_DIR, TEST_PORT, TEST_DB_PORT  override the defaults above
#   SKIP_BUILD=1, BINARY=path  as for stack.sh (test a binary built
#                              elsewhere; `swift test` still builds its own)
#   KEEP_STACK=1               leave the stack running afterwards (stop it with
#                              RUN_DIR=/tmp/ireporter-test scripts/stack.sh down)
#   SUITES="swift pytest ..."  run only these of swift, pytest, smoke, faults,
#                              fuzz (default: all; the others say "not run")
#   PYTEST_ARGS="..."          what pytest runs (default: Tests/EndToEnd), for
#                              example "Tests/EndToEnd/test_web.py -k journey"
#   SWIFT_TEST_ARGS="..."      added to `swift test`, for example
#                              "--filter IntegrationTests.SecurityIntegrationTests"
#   TEST_FAULTS_PORT, TEST_FAULTS_DB_PORT, TEST_FAULTS_RUN_DIR
#                              the fault-injection stack's (default 8092, 3313,
#                              /tmp/ireporter-faults)
# Two checkouts testing at once on one machine: give the second its own
# TEST_RUN_DIR, TEST_PORT, TEST_DB_PORT, TEST_FAULTS_*, and the deployment
# tests' IREPORTER_DEPLOY_PORT_BASE, IREPORTER_DEPLOY_DB_PORT and
# IREPORTER_SWAP_PORT (Tests/EndToEnd/servers.py, test_swap.py). The PHP
# reference (ports 8081 and 3307) is one for the machine.
# The stack variables of `make up` (PORT, DB_URL, UPLOAD_DIR, ...) are ignored.
# Logs stay in the run directory until the next run.
#
# The differential E2E test starts the PHP reference itself (its up.sh, ports
# 8081 and 3307) when ../shared/reference exists next to the repository.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/stack.sh"
LOG_TAG=test
REPO="$IREPORTER_REPO"
cd "$REPO"
need_root "starts the test stack's daemons"

stack_private "${TEST_RUN_DIR:-/tmp/ireporter-test}" "${TEST_PORT:-8090}" "${TEST_DB_PORT:-3310}"

stage="deps"
swift_rc=-1
pytest_rc=-1
smoke_rc=-1
faults_rc=-1
fuzz_rc=-1
stack_state="not started"

ALL_SUITES="swift pytest smoke faults fuzz"
SUITES="${SUITES:-$ALL_SUITES}"
wanted() { case " $SUITES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

banner() { printf '\n==================== %s ====================\n' "$*"; }

result() { # NAME RC
  case "$2" in
    -1) printf '  %-12s: not run\n' "$1" ;;
    0)  printf '  %-12s: PASS\n' "$1" ;;
    *)  printf '  %-12s: FAIL (exit %s)\n' "$1" "$2" ;;
  esac
}

finish() {
  local rc=$?
  trap - EXIT INT TERM
  if [ "$stage" != deps ] && [ "${KEEP_STACK:-}" != 1 ]; then
    banner "stopping the test stack"
    stack_down
  fi
  banner "summary"
  printf '  %-12s: %s\n' "stack" "$stack_state"
  result "swift test" "$swift_rc"
  if [ -s "$RUN_DIR/swift-test.log" ]; then
    # XCTest's and swift-testing's closing lines (the last of each kind)
    { grep -E '^[[:space:]]*Executed [0-9]+ tests?' "$RUN_DIR/swift-test.log" | tail -n 1
      grep -E 'Test run with [0-9]+ tests?' "$RUN_DIR/swift-test.log" | tail -n 1
    } | sed -e 's/^[[:space:]]*//' -e 's/^/                 /'
  fi
  result "pytest E2E" "$pytest_rc"
  if [ -s "$RUN_DIR/pytest.log" ]; then
    grep -v '^[[:space:]]*$' "$RUN_DIR/pytest.log" | tail -n 1 | sed 's/^/                 /'
  fi
  [ "$pytest_rc" = 5 ] && echo "                 (pytest exit 5: no tests were collected in Tests/EndToEnd)"
  result "bench smoke" "$smoke_rc"
  result "faults" "$faults_rc"
  [ -s "$RUN_DIR/faults.log" ] && grep -E '^(RESULT|invariants)' "$RUN_DIR/faults.log" | tail -n 2 | sed 's/^/                 /'
  result "fuzz" "$fuzz_rc"
  printf '  %-12s: %s\n' "logs" "$RUN_DIR/{build,swift-test,pytest,ireporter}.log, $RUN_DIR/nginx/error.log"
  [ "${KEEP_STACK:-}" = 1 ] && [ "$stack_state" = up ] && echo "  stack left running (KEEP_STACK=1): $API_URL"

  for suite_rc in "$swift_rc" "$pytest_rc" "$smoke_rc" "$faults_rc" "$fuzz_rc"; do
    [ "$rc" = 0 ] && [ "$suite_rc" != 0 ] && [ "$suite_rc" != -1 ] && rc=1
  done
  if [ "$rc" = 0 ] && [ "$SUITES" != "$ALL_SUITES" ]; then
    echo "PASSED (only: $SUITES)"
  elif [ "$rc" = 0 ]; then
    echo "ALL PASSED"
  elif [ "$stage" = done ]; then
    echo "FAILED"
  else
    echo "FAILED (interrupted or aborted during: $stage)"
  fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ------------------------------------------------------------------- deps --
banner "dependencies"
"$REPO/scripts/deps.sh" || die "scripts/deps.sh failed"
command -v swift >/dev/null 2>&1 || die "swift is not on PATH"

# ------------------------------------------------------------- test stack --
stage="stack"
banner "test stack in $RUN_DIR"
# A fresh stack every run.
stack_wipe
# The suite's phones and browsers register well over a network's hundred an
# hour from 127.0.0.1; test_throttle.py reads the limit from the stack's file.
# Its Mastodon clients call without a token from there too (the per-network
# rate limit: test_mastodon_oauth.py reads it from the headers).
# Every module starts from a fresh schema (IdUser from 1 again) while the
# server's hourly counters go on: the same IdUser's uploads, comments, votes
# and follows add up over the whole run, so those limits are raised too (the
# integration tests check each limit on a store of their own).
export STACK_EXTRA_CONFIG="registration_limit = 400
mastodon_rate_limit = 5000
upload_rate_limit = 5000
comment_rate_limit = 5000
vote_rate_limit = 5000
follow_rate_limit = 5000"
stack_state="failed to start"
# (in a subshell with errexit: the stack functions rely on it, as in stack.sh)
( set -euo pipefail; stack_up )
[ $? = 0 ] || die "the test stack did not come up"
stack_state="up"

# Every suite gets the same description of the stack.
export IREPORTER_MYSQL_ROOT="$MYSQL_ROOT_CMD"
REF_DIR="$REPO/../shared/reference"
if [ -d "$REF_DIR" ]; then
  export IREPORTER_REFERENCE_DIR="$(cd "$REF_DIR" && pwd)"
fi

# ------------------------------------------------------------- swift test --
stage="swift test"
if wanted swift; then
banner "swift test"
IREPORTER_TEST_DB_URL="$("$REPO/scripts/mariadb.sh" url "$DB_DIR")" \
IREPORTER_TEST_MYSQL_ROOT="$MYSQL_ROOT_CMD" \
IREPORTER_REQUIRE_SERVICES=1 \
  swift test --no-parallel ${SWIFT_TEST_ARGS:-} 2>&1 | tee "$RUN_DIR/swift-test.log"
swift_rc=${PIPESTATUS[0]}
fi

# ----------------------------------------------------------------- pytest --
stage="pytest"
if wanted pytest; then
banner "pytest ${PYTEST_ARGS:-Tests/EndToEnd}"
IREPORTER_BASE_URL="$API_URL" \
IREPORTER_UPLOAD_DIR="$UPLOAD_DIR" \
IREPORTER_SESSION_DIR="$SESSION_DIR" \
IREPORTER_RUN_DIR="$RUN_DIR" \
IREPORTER_BINARY="$SRV_BIN" \
IREPORTER_CONFIG="$SRV_CONF" \
  python3 -m pytest -q ${PYTEST_ARGS:-Tests/EndToEnd} 2>&1 | tee "$RUN_DIR/pytest.log"
pytest_rc=${PIPESTATUS[0]}
fi

# ------------------------------------------------------------ bench smoke --
stage="bench smoke"
if wanted smoke; then
banner "bench/smoke.sh (no thresholds: every answer checked)"
bench/smoke.sh "$API_URL" 2>&1 | tee "$RUN_DIR/bench-smoke.log"
smoke_rc=${PIPESTATUS[0]}
fi

# ----------------------------------------------------------------- faults --
stage="faults"
if wanted faults; then
banner "faults/run.py --duration 20 --clients 8"
python3 faults/run.py --duration 20 --clients 8 --binary "$SRV_BIN" --port "${TEST_FAULTS_PORT:-8092}" \
  --db-port "${TEST_FAULTS_DB_PORT:-3313}" --run-dir "${TEST_FAULTS_RUN_DIR:-/tmp/ireporter-faults}" 2>&1 | tee "$RUN_DIR/faults.log"
faults_rc=${PIPESTATUS[0]}
fi

# ------------------------------------------------------------------- fuzz --
stage="fuzz"
if wanted fuzz; then
banner "Fuzz/run.sh 15"
Fuzz/run.sh 15 2>&1 | tee "$RUN_DIR/fuzz.log"
fuzz_rc=${PIPESTATUS[0]}
fi

stage="done"
exit 0   # finish() turns a failed suite into a non-zero exit
