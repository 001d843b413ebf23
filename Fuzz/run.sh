#!/usr/bin/env bash
# Fuzz/run.sh - build the libFuzzer harnesses (ASan + coverage) and run each
# one for a while; exits non-zero if any harness finds a crash, a hang, a
# leak or a broken oracle. CI calls `Fuzz/run.sh 15`. See docs/FUZZING.md.
#
#   Fuzz/run.sh [SECONDS_PER_HARNESS] [HARNESS...]     (default 30 s, all)
#
# Harnesses: multipart urlencoded cookies session strings json jsonrpc images flickr.
#
# Environment:
#   FUZZ_JOBS=N      harnesses run side by side (default 2: the machine's cores)
#   FUZZ_WORK=DIR    working corpora, crash artifacts and logs (default
#                    Fuzz/.work, git-ignored; kept between runs, so a later
#                    run starts from what earlier ones found)
#   FUZZ_CONFIG=C    debug (default: quickest to build, what CI runs) or
#                    release (-O, about 3x the executions per second; for
#                    long runs). Both keep Swift's overflow and bounds traps.
#   FUZZ_ARGS="..."  extra libFuzzer flags (e.g. -use_value_profile=1)
#   SKIP_BUILD=1     use the binaries already built
#
# Before fuzzing, every saved crash in Fuzz/Crashes/<harness>/ is replayed:
# they must all pass (each is a fixed bug; see docs/FUZZING.md).
set -uo pipefail

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$FUZZ_DIR"
SECONDS_PER="${1:-30}"
shift || true
ALL=(multipart urlencoded cookies session strings json jsonrpc images flickr)
if [ "$#" -gt 0 ]; then HARNESSES=("$@"); else HARNESSES=("${ALL[@]}"); fi
JOBS="${FUZZ_JOBS:-2}"
WORK="${FUZZ_WORK:-$FUZZ_DIR/.work}"
CONFIG="${FUZZ_CONFIG:-debug}"
case "$CONFIG" in debug|release) ;; *) echo "run.sh: FUZZ_CONFIG must be debug or release" >&2; exit 2 ;; esac

case "$SECONDS_PER" in ''|*[!0-9]*) echo "usage: Fuzz/run.sh [SECONDS_PER_HARNESS] [HARNESS...]" >&2; exit 2 ;; esac

target() {
  case "$1" in
    multipart) echo FuzzMultipart ;; urlencoded) echo FuzzURLEncoded ;; cookies) echo FuzzCookies ;;
    session) echo FuzzSession ;; strings) echo FuzzStrings ;; json) echo FuzzJSON ;; jsonrpc) echo FuzzJSONRPC ;; images) echo FuzzImages ;; flickr) echo FuzzFlickr ;;
    *) return 1 ;;
  esac
}
max_len() { case "$1" in multipart) echo 8192 ;; *) echo 4096 ;; esac; }

for h in "${HARNESSES[@]}"; do
  target "$h" >/dev/null || { echo "run.sh: unknown harness '$h' (have: ${ALL[*]})" >&2; exit 2; }
done

# The Swift runtime's own crash backtracer takes the signal before libFuzzer
# (which does not replace an installed SA_SIGINFO handler) and then hangs
# under ASan: turn it off so that libFuzzer reports and saves the crash.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}"

# `--sanitize fuzzer` makes SwiftPM link libFuzzer's main; the driver keeps
# only the last -sanitize= it is given, so the combined flag is repeated
# through -Xswiftc (otherwise Swift code gets ASan but no coverage).
# ld.gold drops the coverage counters' registration: link with lld.
BUILD=(swift build -c "$CONFIG" --sanitize fuzzer --sanitize address
       -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld)
mkdir -p "$WORK"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "fuzz: building harnesses (${BUILD[*]})"
  start=$(date +%s)
  # The main package is a path dependency: SwiftPM keeps its build plan (the
  # list of its source files) until this package's manifest changes, so a
  # file added there since the last build ("cannot find 'X' in scope") is
  # missed. Planning again costs about a second.
  rm -f "$FUZZ_DIR/.build/$CONFIG.yaml" "$FUZZ_DIR"/.build/*/"$CONFIG"/description.json
  if ! "${BUILD[@]}" >"$WORK/build.log" 2>&1; then
    grep -E "error:|warning: unable" "$WORK/build.log" | head -40
    tail -20 "$WORK/build.log"
    echo "fuzz: BUILD FAILED (full log: $WORK/build.log)"
    exit 1
  fi
  echo "fuzz: built in $(( $(date +%s) - start )) s"
fi
BIN="$(swift build -c "$CONFIG" --sanitize fuzzer --sanitize address --show-bin-path 2>/dev/null || echo "$FUZZ_DIR/.build/$CONFIG")"

SPOOL_ROOT="$(mktemp -d "$( [ -w /dev/shm ] && echo /dev/shm || echo /tmp )/ireporter-fuzz.XXXXXX")"
trap 'rm -rf "$SPOOL_ROOT"' EXIT

failures=()

# 1. Replay the saved crashes.
for h in "${HARNESSES[@]}"; do
  dir="$FUZZ_DIR/Crashes/$h"
  [ -d "$dir" ] || continue
  files=("$dir"/*)
  [ -e "${files[0]}" ] || continue
  log="$WORK/logs/$h-replay.log"
  mkdir -p "$WORK/logs"
  if FUZZ_SPOOL_DIR="$SPOOL_ROOT/$h-replay" "$BIN/$(target "$h")" -runs=1 "${files[@]}" >"$log" 2>&1; then
    echo "fuzz: $h: ${#files[@]} saved crash(es) replayed, all pass"
  else
    echo "fuzz: $h: a saved crash fails again (regression):"
    grep -E "Running:|FUZZ ORACLE|ERROR: AddressSanitizer|SUMMARY|Fatal error|Test unit written" "$log" | head -10 | sed 's/^/    /'
    failures+=("$h (replay)")
  fi
done

# 2. Fuzz, FUZZ_JOBS harnesses at a time.
run_one() { # HARNESS
  local h="$1" t corpus artifacts log
  t="$(target "$h")"
  corpus="$WORK/corpus/$h"; artifacts="$WORK/artifacts/$h"; log="$WORK/logs/$h.log"
  mkdir -p "$corpus" "$artifacts" "$WORK/logs"
  local dict=()
  [ -f "$FUZZ_DIR/Dictionaries/$h.dict" ] && dict=(-dict="$FUZZ_DIR/Dictionaries/$h.dict")
  # New inputs go to the working corpus (first directory); the seeds in
  # Fuzz/Corpus/<harness> are only read.
  # shellcheck disable=SC2086
  FUZZ_SPOOL_DIR="$SPOOL_ROOT/$h" "$BIN/$t" \
    -max_total_time="$SECONDS_PER" -rss_limit_mb=2048 -timeout=10 -max_len="$(max_len "$h")" \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" ${FUZZ_ARGS:-} \
    "$corpus" "$FUZZ_DIR/Corpus/$h" >"$log" 2>&1
  echo $? >"$WORK/logs/$h.rc"
}

echo "fuzz: ${#HARNESSES[@]} harness(es), ${SECONDS_PER} s each, $JOBS at a time"
running=0
for h in "${HARNESSES[@]}"; do
  rm -f "$WORK/logs/$h.rc"
  run_one "$h" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
done
wait

printf '\n%-11s %10s %8s %8s %9s  %s\n' harness executions exec/s cov features result
passed=0
for h in "${HARNESSES[@]}"; do
  log="$WORK/logs/$h.log"
  rc="$(cat "$WORK/logs/$h.rc" 2>/dev/null || echo 1)"
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  last="$(grep -E '^#[0-9]+' "$log" | grep -E ' cov: ' | tail -1)"
  cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")"
  ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")"
  if [ "$rc" = 0 ]; then
    result=ok; passed=$((passed + 1))
  else
    result="FAILED (exit $rc)"; failures+=("$h")
  fi
  printf '%-11s %10s %8s %8s %9s  %s\n' "$h" "${execs:--}" "${rate:--}" "${cov:--}" "${ft:--}" "$result"
done

for h in "${HARNESSES[@]}"; do
  rc="$(cat "$WORK/logs/$h.rc" 2>/dev/null || echo 1)"
  [ "$rc" = 0 ] && continue
  echo
  echo "---- $h (log: $WORK/logs/$h.log)"
  grep -E "FUZZ ORACLE|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|SUMMARY|Fatal error|ALARM|Test unit written|Base64" \
    "$WORK/logs/$h.log" | head -15 | sed 's/^/    /'
  echo "    minimise: $BIN/$(target "$h") -minimize_crash=1 -runs=100000 <artifact>; save it in Fuzz/Crashes/$h/"
done

echo
echo "fuzz: ${passed} passed, $(( ${#HARNESSES[@]} - passed )) failed"
[ "${#failures[@]}" -eq 0 ]
