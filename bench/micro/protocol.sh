#!/usr/bin/env bash
# protocol.sh - micro-benchmark of the protocol's hot paths: the streaming
# multipart parser on 640x640 and 12 MP upload bodies (64 KiB feeds, file
# parts spooled to disk), the urlencoded parser on a login form, and the JSON
# of a 50-row stream (Tests/UnitTests/Protocol/ProtocolBenchmarkTests.swift,
# off unless IREPORTER_PROTOCOL_BENCH is set). Release build, own scratch path.
#   N=200 bench/micro/protocol.sh      # iterations (x50 for the small ones)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export PATH="/opt/swift/usr/bin:$PATH"
cd "$ROOT"
IREPORTER_PROTOCOL_BENCH=1 IREPORTER_PROTOCOL_BENCH_N="${N:-200}" \
  swift test -c release -Xswiftc -enable-testing \
    --scratch-path "${SCRATCH:-/tmp/ireporter-bench-build}" \
    --filter ProtocolBenchmarkTests 2>&1 | grep -E '^protocol |✘|error:|passed|failed'
