#!/usr/bin/env bash
# Issue #7, item 1: throughput and latency of the mock server against a
# control (a minimal axum server answering a fixed JSON body of the same
# size), each pinned to one core and driven by wrk pinned to the other.
#
#   scripts/load.sh                                 # measured: 3 runs x 10 s, 50 connections
#   LOAD_DURATION=2 LOAD_RUNS=1 scripts/load.sh     # smoke test
#
# Environment: LOAD_DURATION (s, 10), LOAD_RUNS (3), LOAD_CONNECTIONS (50),
# LOAD_ONLY (all; \`status\` runs only the status scenarios and the control),
# SERVER_CPU (0), CLIENT_CPU (1), MOCK_LOG (where the request log goes,
# /dev/null), CONFIRM_POOL (transactions pre-initiated per confirm run;
# default 2 x the initiate rate x LOAD_DURATION: confirms run faster than initiates), LOAD_OUT (raw output).
#
# Scenarios: GET status by id, GET status by reference, POST initiate
# (unique references), POST confirm (a fresh pre-initiated pool per run, so
# every confirm is a first confirm), POST confirm of an already confirmed
# pool (TRANSACTION_ALREADY_CONFIRMED, reported separately), and the control
# for GET and for POST. Each scenario starts a fresh server. Prints the
# medians over the runs and the ratios to the control; BENCHMARKS.md keeps
# the figures.
set -euo pipefail
source "$(dirname "$0")/bench-common.sh"

OUT=${LOAD_OUT:-$TARGET/perf/load}
rm -rf "$OUT"
mkdir -p "$OUT"
LOG=$OUT/runs.log
started=$(date +%s)

machine_header
echo "# $RUNS run(s) x ${DURATION}s, $CONNS connections, server on cpu $SERVER_CPU, wrk -t1 on cpu $CLIENT_CPU"
need_wrk
command -v curl >/dev/null || die "curl is needed"
(cd "$ROOT" && cargo build --release --quiet -p payments-mock-server-cli -p payments-perf)
MOCK=$BIN/payments-mock-server
WRK=$ROOT/perf/wrk

json_field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }

# --- status by id and by reference -----------------------------------------
start_server "$OUT/mock-status.out" "$MOCK" --port 0
curl -sf -H 'content-type: application/json' "$BASE/api/payments/initiate" \
  -d '{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60","referenceNo":"LOAD-REF-1","amount":1050,"productCode":"TOPUP","storeId":"S1","payerId":"60123456789"}' \
  >"$OUT/initiate-body.json"
ID=$(json_field transactionId <"$OUT/initiate-body.json")
[ -n "$ID" ] || die "initiate failed: $(cat "$OUT/initiate-body.json")"
curl -sf "$BASE/api/payments/$ID/status" >"$OUT/status-body.json"
echo "# status body $(wc -c <"$OUT/status-body.json") bytes, initiate body $(wc -c <"$OUT/initiate-body.json") bytes"
for run in $(seq 1 "$RUNS"); do
  wrk_once status_id "$BASE/api/payments/$ID/status" "$WRK/get.lua" "$LOG"
  wrk_once status_ref "$BASE/api/payments/reference/LOAD-REF-1/status" "$WRK/get.lua" "$LOG"
done
stop_server

# --- control: same core, same runtime, fixed bodies of the same size --------
start_server "$OUT/control.out" "$BIN/perf-control" \
  --get-body "$OUT/status-body.json" --post-body "$OUT/initiate-body.json"
for run in $(seq 1 "$RUNS"); do
  wrk_once control_get "$BASE/api/payments/$ID/status" "$WRK/get.lua" "$LOG"
  WRK_TAG="control-$run-$$" wrk_once control_post "$BASE" "$WRK/initiate.lua" "$LOG"
done
stop_server

if [ "${LOAD_ONLY:-all}" = all ]; then
# --- initiate ----------------------------------------------------------------
start_server "$OUT/mock-initiate.out" "$MOCK" --port 0
for run in $(seq 1 "$RUNS"); do
  WRK_TAG="load-$run-$$" wrk_once initiate "$BASE" "$WRK/initiate.lua" "$LOG"
done
stop_server

# --- confirm: a fresh pool per run; then the same pools again ---------------
POOL=${CONFIRM_POOL:-$(awk -v r="$(med "$LOG" initiate rps)" -v d="$DURATION" 'BEGIN { printf "%d", r * d * 2 + 1000 }')}
start_server "$OUT/mock-confirm.out" "$MOCK" --port 0
for run in $(seq 1 "$RUNS"); do
  taskset -c "$CLIENT_CPU" timeout 300 "$BIN/perf-preload" --base "$BASE" --count "$POOL" \
    --tag "pool-$run" --out "$OUT/pool-$run.txt" | sed 's/^/# /'
  WRK_POOL="$OUT/pool-$run.txt" wrk_once confirm "$BASE" "$WRK/confirm.lua" "$LOG"
done
# A separate pool, initiated and confirmed once by perf-preload, so every
# confirm here is answered 400 TRANSACTION_ALREADY_CONFIRMED.
taskset -c "$CLIENT_CPU" timeout 300 "$BIN/perf-preload" --base "$BASE" --count 10000 \
  --tag confirmed --confirm 1 --out "$OUT/pool-confirmed.txt" | sed 's/^/# /'
for run in $(seq 1 "$RUNS"); do
  WRK_POOL="$OUT/pool-confirmed.txt" wrk_once confirm_again "$BASE" "$WRK/confirm.lua" "$LOG"
done
stop_server
fi

# --- summary -----------------------------------------------------------------
ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
verdict() { awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN { ok = (op == ">=") ? v >= t : v <= t; print ok ? "pass" : "FAIL" }'; }
ctl_get=$(med "$LOG" control_get rps)
ctl_post=$(med "$LOG" control_post rps)
{
  echo
  echo "| scenario | req/s (median) | p50 ms | p99 ms | server CPU % | non-2xx (sum) | control req/s | ratio | ratio target | p99 target |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  row() { # label control_rps ratio_target
    local rps p50 p99 cpu bad r rt pt
    rps=$(med "$LOG" "$1" rps); p50=$(med "$LOG" "$1" p50_us); p99=$(med "$LOG" "$1" p99_us)
    cpu=$(med "$LOG" "$1" server_cpu); bad=$(field "$LOG" "$1" non2xx | awk '{ s += $1 } END { print s + 0 }')
    if [ -n "$2" ]; then
      r=$(ratio "$rps" "$2")
      if [ -n "$3" ]; then rt="≥ $3 $(verdict "$r" ">=" "$3")"; else rt="—"; fi
    else r="—"; rt="—"; fi
    pt="≤ 5 $(verdict "$(ms "$p99")" "<=" 5)"
    echo "| $1 | $(printf %.0f "$rps") | $(ms "$p50") | $(ms "$p99") | $cpu | $bad | ${2:+$(printf %.0f "$2")} | $r | $rt | $pt |"
  }
  row status_id "$ctl_get" 0.7
  row status_ref "$ctl_get" 0.7
  if [ "${LOAD_ONLY:-all}" = all ]; then
    row initiate "$ctl_post" 0.5
    row confirm "$ctl_post" ""
    row confirm_again "$ctl_post" ""
  fi
  row control_get "" ""
  row control_post "" ""
  echo
  [ "${LOAD_ONLY:-all}" != all ] || echo "confirm: a fresh pool of $POOL pre-initiated transactions per run (non-2xx 0 = every confirm was a first confirm). confirm_again: 10,000 transactions confirmed beforehand, confirmed again: every answer 400 TRANSACTION_ALREADY_CONFIRMED (all counted in non-2xx)."
  echo "load.sh took $(( $(date +%s) - started )) s; raw wrk output in $OUT"
} | tee "$OUT/summary.md"
