#!/usr/bin/env bash
# Issue 25: the mock's hot paths against the framework's own limit. In each
# round, on fresh servers: the bare-axum control (perf-control: a fixed body
# for GET and POST), the mock with the text log, and the mock with
# --log-format json, each GET status and POST initiate; the request log goes
# to MOCK_LOG (default /dev/null, as in scripts/load.sh) so only its
# writing is measured, not a disk. Ratios are of medians in one run, rounds
# alternating, so the machine's drift hits every column alike.
#
#   scripts/bench-hotpath.sh                           # 3 rounds x 10 s
#   LOAD_DURATION=3 LOAD_RUNS=1 scripts/bench-hotpath.sh   # smoke
#
# The instructions per request are scripts/bench-profile.sh's (callgrind).
# Environment: LOAD_DURATION (10), LOAD_RUNS (3), LOAD_CONNECTIONS (50),
# SERVER_CPU, CLIENT_CPU, MOCK_LOG, LOAD_OUT.
set -euo pipefail
source "$(dirname "$0")/bench-common.sh"

OUT=${LOAD_OUT:-$TARGET/perf/hotpath}
rm -rf "$OUT"
mkdir -p "$OUT"
LOG=$OUT/runs.log
started=$(date +%s)

machine_header
echo "# $RUNS round(s) x ${DURATION}s, $CONNS connections, server on cpu $SERVER_CPU, wrk -t1 on cpu $CLIENT_CPU"
need_wrk
(cd "$ROOT" && cargo build --release --quiet -p payments-mock-server-cli -p payments-perf)
MOCK=$BIN/payments-mock-server
WRK=$ROOT/perf/wrk
json_field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
INITIATE_BODY='{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60","referenceNo":"HOT-REF-1","amount":1050,"productCode":"TOPUP","storeId":"S1","payerId":"60123456789"}'

# mock_round LABEL RUN FLAGS...: GET status and POST initiate on a fresh mock.
mock_round() {
  local label=$1 run=$2
  shift 2
  start_server "$OUT/$label-$run.out" "$MOCK" --port 0 "$@"
  curl -sf -H 'content-type: application/json' "$BASE/api/payments/initiate" -d "$INITIATE_BODY" >"$OUT/initiate-body.json"
  local id
  id=$(json_field transactionId <"$OUT/initiate-body.json")
  [ -n "$id" ] || die "initiate failed on $label: $(cat "$OUT/initiate-body.json")"
  curl -sf "$BASE/api/payments/$id/status" >"$OUT/status-body.json"
  wrk_once "${label}_get" "$BASE/api/payments/$id/status" "$WRK/get.lua" "$LOG"
  WRK_TAG="$label-$run-$$" wrk_once "${label}_post" "$BASE" "$WRK/initiate.lua" "$LOG"
  stop_server
}

for run in $(seq 1 "$RUNS"); do
  mock_round text "$run"
  mock_round json "$run" --log-format json
  start_server "$OUT/control-$run.out" "$BIN/perf-control" \
    --get-body "$OUT/status-body.json" --post-body "$OUT/initiate-body.json"
  wrk_once control_get "$BASE/api/payments/x/status" "$WRK/get.lua" "$LOG"
  WRK_TAG="control-$run-$$" wrk_once control_post "$BASE" "$WRK/initiate.lua" "$LOG"
  stop_server
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
{
  echo
  echo "| figure | value | goal |"
  echo "|---|---|---|"
  for s in get post; do
    c=$(med "$LOG" "control_$s" rps)
    t=$(med "$LOG" "text_$s" rps)
    j=$(med "$LOG" "json_$s" rps)
    goal="≥ 0.7"
    [ "$s" = post ] && goal="≥ 0.55"
    echo "| $s: mock (text log) / control, req/s | $(printf %.0f "$t") / $(printf %.0f "$c") = $(ratio "$t" "$c") | $goal |"
    echo "| $s: --log-format json / text, req/s | $(printf %.0f "$j") / $(printf %.0f "$t") = $(ratio "$j" "$t") | ≥ 0.95 |"
    echo "| $s: p50 / p99 µs, text; json; control | $(med "$LOG" "text_$s" p50_us) / $(med "$LOG" "text_$s" p99_us); $(med "$LOG" "json_$s" p50_us) / $(med "$LOG" "json_$s" p99_us); $(med "$LOG" "control_$s" p50_us) / $(med "$LOG" "control_$s" p99_us) | — |"
  done
  echo
  echo "bench-hotpath.sh took $(( $(date +%s) - started )) s; raw output in $OUT"
} | tee "$OUT/summary.md"
