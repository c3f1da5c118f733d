#!/usr/bin/env bash
# Issue 44: what --otlp-endpoint costs the mock's hot paths (BENCHMARKS.md,
# "Server spans over OTLP (issue 44)").
#
# The release mock binary on one core, without and with --otlp-endpoint
# (to perf-otlp-sink, which takes every export and discards it, on the
# client's core), a fresh server per round, alternating which goes first:
# GET status by id and POST initiate, the ratio with / without of each
# round. Goal: at or above 0.8. Without the flag no span layer is
# installed (the serving path is the build's without the feature); the
# control perf-control (bare axum, the same bodies) runs in each round
# too, for the goals without the flag (GET at or above 0.85, POST 0.65 of
# it).
#
#   scripts/bench-otlp.sh                                  # 6 rounds x 5 s
#   LOAD_RUNS=2 LOAD_DURATION=2 scripts/bench-otlp.sh      # smoke
#
# Environment: LOAD_RUNS (6 rounds), LOAD_DURATION (5), LOAD_CONNECTIONS
# (50), SERVER_CPU, CLIENT_CPU, LOAD_OUT.
set -euo pipefail
LOAD_RUNS=${LOAD_RUNS:-6}
LOAD_DURATION=${LOAD_DURATION:-5}
source "$(dirname "$0")/bench-common.sh"

OUT=${LOAD_OUT:-$TARGET/perf/otlp}
rm -rf "$OUT"
mkdir -p "$OUT"
LOG=$OUT/runs.log
started=$(date +%s)

machine_header | tee "$LOG"
need_wrk
(cd "$ROOT" && cargo build --release --quiet -p payments-mock-server-cli -p payments-perf)
MOCK=$BIN/payments-mock-server
WRK=$ROOT/perf/wrk
json_field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }

# The sink, on the client's core: its work is not the mock's.
: >"$OUT/sink.out"
taskset -c "$CLIENT_CPU" "$BIN/perf-otlp-sink" --port 0 >"$OUT/sink.out" 2>"$OUT/sink.err" &
SINK_PID=$!
stop_sink() { kill -TERM "$SINK_PID" 2>/dev/null || true; wait "$SINK_PID" 2>/dev/null || true; }
trap 'stop_server; stop_sink' EXIT
SINK=""
for _ in $(seq 1 200); do
  SINK=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$OUT/sink.out")
  [ -n "$SINK" ] && break
  sleep 0.05
done
[ -n "$SINK" ] || die "no banner from perf-otlp-sink"

# The control's bodies: what the mock answers.
start_server "$OUT/mock-bodies.out" "$MOCK" --port 0
curl -sf -H 'content-type: application/json' "$BASE/api/payments/initiate" \
  -d '{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60","referenceNo":"BODY-1","amount":1050,"productCode":"TOPUP","storeId":"S1","payerId":"60123456789"}' \
  >"$OUT/initiate-body.json"
curl -sf "$BASE/api/payments/$(json_field transactionId <"$OUT/initiate-body.json")/status" >"$OUT/status-body.json"
stop_server

for run in $(seq 1 "$RUNS"); do
  case $((run % 3)) in
    1) order="plain otlp control" ;;
    2) order="otlp control plain" ;;
    *) order="control plain otlp" ;;
  esac
  for which in $order; do
    if [ "$which" = control ]; then
      start_server "$OUT/control-$run.out" "$BIN/perf-control" \
        --get-body "$OUT/status-body.json" --post-body "$OUT/initiate-body.json"
      wrk_once "control_get_$run" "$BASE/api/payments/x/status" "$WRK/get.lua" "$LOG" >/dev/null
      WRK_TAG="control-$run-$(date +%s)" wrk_once "control_post_$run" "$BASE" "$WRK/initiate.lua" "$LOG" >/dev/null
      stop_server
      continue
    fi
    if [ "$which" = otlp ]; then
      start_server "$OUT/mock-$which-$run.out" "$MOCK" --port 0 --otlp-endpoint "$SINK"
    else
      start_server "$OUT/mock-$which-$run.out" "$MOCK" --port 0
    fi
    id=$(curl -sf -H 'content-type: application/json' "$BASE/api/payments/initiate" \
      -d '{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60","referenceNo":"BENCH-1","amount":1050,"productCode":"TOPUP","storeId":"S1","payerId":"60123456789"}' \
      | json_field transactionId)
    [ -n "$id" ] || die "initiate failed"
    wrk_once "${which}_get_$run" "$BASE/api/payments/$id/status" "$WRK/get.lua" "$LOG" >/dev/null
    WRK_TAG="$which-$run-$(date +%s)" wrk_once "${which}_post_$run" "$BASE" "$WRK/initiate.lua" "$LOG" >/dev/null
    stop_server
  done
done
stop_sink
echo "sink: $(cat "$OUT/sink.err")" | tee -a "$LOG"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
{
  echo
  echo "| figure | value | goal |"
  echo "|---|---|---|"
  for what in get post; do
    pairs=""
    for run in $(seq 1 "$RUNS"); do
      p=$(field "$LOG" "plain_${what}_$run" rps | head -1)
      o=$(field "$LOG" "otlp_${what}_$run" rps | head -1)
      pairs="$pairs $(ratio "$o" "$p")"
    done
    sorted=$(tr ' ' '\n' <<<"$pairs" | sed '/^$/d' | sort -n)
    name=$([ "$what" = get ] && echo "GET status by id" || echo "POST initiate")
    echo "| $name, with / without --otlp-endpoint (each round) |$pairs | ≥ 0.8 |"
    echo "| the same, median (min-max) of $RUNS rounds | $(median <<<"$sorted") ($(head -1 <<<"$sorted")-$(tail -1 <<<"$sorted")) | ≥ 0.8 |"
    pm=$(for run in $(seq 1 "$RUNS"); do field "$LOG" "plain_${what}_$run" rps; done | median)
    om=$(for run in $(seq 1 "$RUNS"); do field "$LOG" "otlp_${what}_$run" rps; done | median)
    echo "| $name req/s, with / without (medians) | $om / $pm | — |"
    cpairs=""
    for run in $(seq 1 "$RUNS"); do
      p=$(field "$LOG" "plain_${what}_$run" rps | head -1)
      c=$(field "$LOG" "control_${what}_$run" rps | head -1)
      cpairs="$cpairs $(ratio "$p" "$c")"
    done
    csorted=$(tr ' ' '\n' <<<"$cpairs" | sed '/^$/d' | sort -n)
    goal=$([ "$what" = get ] && echo "≥ 0.85" || echo "≥ 0.65")
    cm=$(for run in $(seq 1 "$RUNS"); do field "$LOG" "control_${what}_$run" rps; done | median)
    echo "| $name without the flag / bare axum (perf-control), median (min-max) | $(median <<<"$csorted") ($(head -1 <<<"$csorted")-$(tail -1 <<<"$csorted")); control $cm req/s | $goal |"
  done
  echo
  echo "took $(( $(date +%s) - started )) s"
} | tee -a "$LOG"
