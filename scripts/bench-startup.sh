#!/usr/bin/env bash
# Issue #7, item 3: process start to the first successful /_mock/health
# answer of the release mock binary (`--port 0`, banner read from stdout,
# health polled every 0.1 ms), median over STARTUP_RUNS starts (20).
# Not pinned: the binary starts as a developer would start it.
#
#   scripts/bench-startup.sh
set -euo pipefail
source "$(dirname "$0")/bench-common.sh"
RUNS_STARTUP=${STARTUP_RUNS:-20}
started=$(date +%s)
machine_header
(cd "$ROOT" && cargo build --release --quiet -p payments-mock-server-cli -p payments-perf)
OUT=${LOAD_OUT:-$TARGET/perf/startup}
mkdir -p "$OUT"
"$BIN/perf-startup" --bin "$BIN/payments-mock-server" --runs "$RUNS_STARTUP" | tee "$OUT/startup.log"
median=$(sed -n 's/^median_ms=//p' "$OUT/startup.log")
verdict=$(awk -v m="$median" 'BEGIN { print (m <= 20) ? "pass" : "FAIL" }')
echo
echo "| figure | value | target | result |"
echo "|---|---|---|---|"
echo "| start to first health answer, median of $RUNS_STARTUP, ms | $median (min $(sed -n 's/^min_ms=//p' "$OUT/startup.log"), max $(sed -n 's/^max_ms=//p' "$OUT/startup.log")) | ≤ 20 | $verdict |"
echo
echo "bench-startup.sh took $(( $(date +%s) - started )) s"
