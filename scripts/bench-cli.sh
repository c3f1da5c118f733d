#!/usr/bin/env bash
# Issue #7, item 5: the `payments` CLI against the mock binary (pinned to
# SERVER_CPU; the CLI, curl and hyperfine pinned to CLIENT_CPU).
#
# 1. Wall time of one `payments status ID -o json` against one `curl` of the
#    same URL (hyperfine, no shell, warm-up 10, CLI_SINGLE_RUNS runs).
# 2. `payments status --from-file` of CLI_BULK (10,000) ids, `-o json` to
#    /dev/null, at --concurrency 32 against --concurrency 1 (hyperfine,
#    CLI_BULK_RUNS runs each).
#
#   scripts/bench-cli.sh
set -euo pipefail
source "$(dirname "$0")/bench-common.sh"
SINGLE_RUNS=${CLI_SINGLE_RUNS:-100}
BULK=${CLI_BULK:-10000}
BULK_RUNS=${CLI_BULK_RUNS:-5}
OUT=${LOAD_OUT:-$TARGET/perf/cli}
rm -rf "$OUT"
mkdir -p "$OUT"
started=$(date +%s)
machine_header
if ! command -v hyperfine >/dev/null 2>&1; then
  sudo_if_needed apt-get install -y hyperfine >/dev/null 2>&1 \
    || { sudo_if_needed apt-get update >/dev/null && sudo_if_needed apt-get install -y hyperfine >/dev/null; } \
    || die "cannot install hyperfine"
fi
(cd "$ROOT" && cargo build --release --quiet -p payments-mock-server-cli -p payments-perf -p payments-cli)
PAYMENTS=$BIN/payments
# No stray profile or environment changes what is measured.
export XDG_CONFIG_HOME=$OUT/config
unset PAYMENTS_BASE_URL PAYMENTS_API_KEY PAYMENTS_MERCHANT_ID PAYMENTS_PROFILE PAYMENTS_OUTPUT PAYMENTS_CONFIG

start_server "$OUT/mock.out" "$BIN/payments-mock-server" --port 0
taskset -c "$CLIENT_CPU" "$BIN/perf-preload" --base "$BASE" --count "$BULK" --tag cli --out "$OUT/pool.txt" | sed 's/^/# /'
cut -d' ' -f1 "$OUT/pool.txt" >"$OUT/ids.txt"
ID=$(head -1 "$OUT/ids.txt")
"$PAYMENTS" --base-url "$BASE" -o json status "$ID" >/dev/null || die "payments status failed"

# hyperfine_median JSON INDEX: median seconds of command INDEX.
hyperfine_median() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]["median"])' "$1" "$2"; }

taskset -c "$CLIENT_CPU" hyperfine -N --warmup 10 --runs "$SINGLE_RUNS" --export-json "$OUT/single.json" \
  -n payments "$PAYMENTS --base-url $BASE -o json status $ID" \
  -n curl "curl -s $BASE/api/payments/$ID/status"
# hyperfine sends the commands' stdout to /dev/null (its default --output=null).
taskset -c "$CLIENT_CPU" hyperfine -N --warmup 1 --runs "$BULK_RUNS" --export-json "$OUT/bulk.json" \
  -n c32 "$PAYMENTS --base-url $BASE -o json status --from-file $OUT/ids.txt --concurrency 32" \
  -n c1 "$PAYMENTS --base-url $BASE -o json status --from-file $OUT/ids.txt --concurrency 1"
# CPU the CLI spends per look-up at --concurrency 32 (user + system, bash's
# `time`), median of 3: with the CLI's core saturated, c1's wall time per
# look-up divided by this bounds the speed-up.
cpu_runs=()
for _ in 1 2 3; do
  { TIMEFORMAT='%U %S'; time taskset -c "$CLIENT_CPU" "$PAYMENTS" --base-url "$BASE" -o json status \
      --from-file "$OUT/ids.txt" --concurrency 32 >/dev/null 2>&1; } 2>"$OUT/cpu.txt"
  cpu_runs+=("$(awk '{ printf "%.6f", $1 + $2 }' "$OUT/cpu.txt")")
done
cpu32=$(printf '%s\n' "${cpu_runs[@]}" | sort -n | sed -n 2p)
stop_server

single_cli=$(hyperfine_median "$OUT/single.json" 0)
single_curl=$(hyperfine_median "$OUT/single.json" 1)
c32=$(hyperfine_median "$OUT/bulk.json" 0)
c1=$(hyperfine_median "$OUT/bulk.json" 1)
r1=$(awk -v a="$single_cli" -v b="$single_curl" 'BEGIN { printf "%.2f", a / b }')
speedup=$(awk -v a="$c1" -v b="$c32" 'BEGIN { printf "%.1f", a / b }')
rate32=$(awk -v n="$BULK" -v t="$c32" 'BEGIN { printf "%.0f", n / t }')
rate1=$(awk -v n="$BULK" -v t="$c1" 'BEGIN { printf "%.0f", n / t }')
ok() { awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN { ok = (op == ">=") ? v >= t : v <= t; print ok ? "pass" : "FAIL" }'; }
msf() { awk -v s="$1" 'BEGIN { printf "%.2f", s * 1000 }'; }
echo
echo "| figure | value | target | result |"
echo "|---|---|---|---|"
echo "| one \`payments status ID\`, median ms | $(msf "$single_cli") | — | — |"
echo "| one \`curl\` of the same URL, median ms | $(msf "$single_curl") | — | — |"
echo "| payments / curl | $r1 | ≤ 1.5 | $(ok "$r1" "<=" 1.5) |"
echo "| --from-file $BULK ids, --concurrency 32, median s | $(awk -v s="$c32" 'BEGIN { printf "%.3f", s }') ($rate32 look-ups/s) | ≥ 5000 look-ups/s | $(ok "$rate32" ">=" 5000) |"
echo "| --from-file $BULK ids, --concurrency 1, median s | $(awk -v s="$c1" 'BEGIN { printf "%.3f", s }') ($rate1 look-ups/s) | — | — |"
echo "| concurrency 32 speed-up over 1 | ${speedup}x | ≥ 10x | $(ok "$speedup" ">=" 10) |"
echo "| CLI CPU per look-up at concurrency 32 (user + system), µs | $(awk -v c="$cpu32" -v n="$BULK" 'BEGIN { printf "%.1f", c / n * 1e6 }') | — | — |"
echo "| bound on the speed-up: c1 wall per look-up ÷ that CPU | $(awk -v w="$c1" -v c="$cpu32" 'BEGIN { printf "%.1f", w / c }')x | — | — |"
echo
echo "bench-cli.sh took $(( $(date +%s) - started )) s; hyperfine JSON in $OUT"
