#!/usr/bin/env bash
# Fuzz/php-diff.sh - differential check against PHP itself (the reference
# implementation): replays the seed and working corpora of the strings, json
# and urlencoded harnesses with FUZZ_DUMP=1 and has php-diff.php recompute
# urldecode(), (int), json_encode() and parse_str() on the same inputs.
# Needs `php` (php-cli) and the harnesses built by run.sh. Not part of CI:
# the remaining differences are known and listed in docs/FUZZING.md.
set -uo pipefail
FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$FUZZ_DIR"
WORK="${FUZZ_WORK:-$FUZZ_DIR/.work}"
CONFIG="${FUZZ_CONFIG:-debug}"
command -v php >/dev/null || { echo "php-diff: php is not installed (apt-get install php-cli)"; exit 2; }
BIN="$(swift build -c "$CONFIG" --sanitize fuzzer --sanitize address --show-bin-path 2>/dev/null)"
export SWIFT_BACKTRACE=enable=no FUZZ_DUMP=1 FUZZ_SPOOL_DIR="$(mktemp -d)"
trap 'rm -rf "$FUZZ_SPOOL_DIR"' EXIT
for pair in strings:FuzzStrings json:FuzzJSON urlencoded:FuzzURLEncoded; do
  h="${pair%%:*}"
  find "Corpus/$h" "$WORK/corpus/$h" -type f 2>/dev/null | xargs -r -n 500 "$BIN/${pair#*:}" -runs=1 2>/dev/null
done | php "$FUZZ_DIR/php-diff.php"
