#!/usr/bin/env bash
# Every measurement of issue #7 in order, each script's output kept in
# $CARGO_TARGET_DIR/perf/<name>.txt (or target/perf/). BENCHMARKS.md
# records one such run. Run when the machine is otherwise idle.
#
#   scripts/bench-all.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=${CARGO_TARGET_DIR:-target}/perf
mkdir -p "$out"
for s in load bench-scale bench-startup bench-cli bench-client bench-profile; do
  echo "== scripts/$s.sh ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
  start=$(date +%s)
  "scripts/$s.sh" >"$out/$s.txt" 2>&1 || { echo "scripts/$s.sh failed, see $out/$s.txt"; exit 1; }
  echo "   $(( $(date +%s) - start )) s"
done
