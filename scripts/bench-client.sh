#!/usr/bin/env bash
# Issue #7, item 4: client overhead. Runs the divan bench
# payments-client/benches/client.rs (each call through payments-client and
# as bare reqwest + serde against one in-process mock; envelope decoding)
# and prints client / bare per call from the medians.
#
#   scripts/bench-client.sh                # measured (BENCH_ARGS below)
#   BENCH_ARGS="--max-time 0.5" scripts/bench-client.sh   # smoke
set -euo pipefail
source "$(dirname "$0")/bench-common.sh"
ARGS=${BENCH_ARGS:---sample-count 1000 --sample-size 10}
OUT=${LOAD_OUT:-$TARGET/perf/client}
mkdir -p "$OUT"
started=$(date +%s)
machine_header
# shellcheck disable=SC2086
(cd "$ROOT" && cargo bench --quiet -p payments-client --bench client -- $ARGS) | tee "$OUT/divan.txt"
python3 - "$OUT/divan.txt" <<'PY'
import re, sys
unit = {"ns": 1e-3, "µs": 1.0, "ms": 1e3, "s": 1e6}
group, med = None, {}
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.search(r"[├╰]─ (\w+)", line)
    if not m:
        continue
    times = re.findall(r"([0-9.]+) (ns|µs|ms|s)\b", line)
    if not times:
        group = m.group(1)
        continue
    value, u = times[2]  # fastest, slowest, median, mean
    med[(group, m.group(1))] = float(value) * unit[u]
print()
print("| call | client median µs | bare reqwest + serde median µs | client / bare | target | result |")
print("|---|---|---|---|---|---|")
for call in ["status_by_id", "status_by_reference", "initiate", "confirm"]:
    c, b = med[(call, "client")], med[(call, "bare")]
    r = c / b
    print(f"| {call} | {c:.2f} | {b:.2f} | {r:.3f} | ≤ 1.1 | {'pass' if r <= 1.1 else 'FAIL'} |")
c, b = med[("status_by_id", "client")], med[("status_by_id", "bare_minimal")]
print(f"| status_by_id against a bare request without User-Agent and X-Request-Id | {c:.2f} | {b:.2f} | {c/b:.3f} | — | — |")
c, b = med[("decode", "client")], med[("decode", "bare")]
print(f"| decode of a status envelope | {c:.3f} ({1/c:.2f} M envelopes/s) | {b:.3f} ({1/b:.2f} M/s) | {c/b:.2f} | — | — |")
PY
echo
echo "bench-client.sh took $(( $(date +%s) - started )) s; divan output in $OUT/divan.txt"
