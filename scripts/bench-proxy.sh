#!/usr/bin/env bash
# Issue 24: what the contract proxy costs. Throughput through the proxy to
# the mock against straight to the mock (GET status, POST initiate), the
# latency it adds at a moderate fixed load, and its memory after a million
# exchanges.
#
# The control: perf-forwarder, a bare HTTP/1.1 forwarder on the same stack
# (hyper's server, the proxy's upstream client) that does nothing but
# forward, measured the same way in the same rounds. Any HTTP/1 proxy does
# both ends of each exchange on the shared core, so "through the proxy /
# through the bare forwarder" is the proxy's own cost, and "through the
# bare forwarder / straight" is the most any proxy here could reach.
#
#   scripts/bench-proxy.sh                                   # 3 rounds x 10 s
#   LOAD_DURATION=3 LOAD_RUNS=1 PROXY_MILLION=50000 scripts/bench-proxy.sh   # smoke
#
# The mock and the proxy (or the forwarder) share SERVER_CPU (the proxy's
# own work counts against the same core the mock has alone when measured
# straight); wrk is pinned to CLIENT_CPU. The same rounds also give each
# one's requests per second of its own CPU (what it would serve with a core
# to itself).
# Latency: perf-latency at LATENCY_RATE requests per
# second (open loop), straight and through the proxy, medians of LOAD_RUNS.
# Memory: the proxy's VmRSS while PROXY_MILLION initiates (each a new
# transaction for its bounded memory) pass through.
#
# Environment: LOAD_DURATION (10), LOAD_RUNS (3), LOAD_CONNECTIONS (50),
# LATENCY_RATE (1000), PROXY_MILLION (1000000), BENCH_ONLY (all | throughput
# | latency | memory), PROXY_ARGS (more flags for the proxy), SERVER_CPU,
# CLIENT_CPU, LOAD_OUT.
set -euo pipefail
source "$(dirname "$0")/bench-common.sh"

OUT=${LOAD_OUT:-$TARGET/perf/proxy}
rm -rf "$OUT"
mkdir -p "$OUT"
LOG=$OUT/runs.log
ONLY=${BENCH_ONLY:-all}
RATE=${LATENCY_RATE:-1000}
MILLION=${PROXY_MILLION:-1000000}
started=$(date +%s)

machine_header
echo "# $RUNS round(s) x ${DURATION}s, $CONNS connections; mock and proxy on cpu $SERVER_CPU, wrk -t1 on cpu $CLIENT_CPU"
need_wrk
# payments-perf: perf-latency and perf-forwarder.
(cd "$ROOT" && cargo build --release --quiet -p payments-mock-server-cli -p payments-perf)
MOCK=$BIN/payments-mock-server
WRK=$ROOT/perf/wrk
json_field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }

PROXY_PID=""
# start_in_front NAME CMD...: runs CMD (a proxy of the mock) on SERVER_CPU,
# waits for its banner; sets PROXY_PID and PROXY (its base URL).
start_in_front() {
  local name=$1
  shift
  : >"$OUT/$name.out"
  taskset -c "$SERVER_CPU" "$@" >"$OUT/$name.out" 2>>"$MOCK_LOG" &
  PROXY_PID=$!
  for _ in $(seq 1 600); do
    PROXY=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$OUT/$name.out")
    [ -n "$PROXY" ] && return 0
    kill -0 "$PROXY_PID" 2>/dev/null || die "the $name exited"
    sleep 0.05
  done
  die "the $name did not start"
}
# PROXY_ARGS: more flags for the proxy, e.g. "--junit F --sarif F" (issue 43).
# shellcheck disable=SC2086 # PROXY_ARGS is a list of flags.
start_proxy() { start_in_front proxy "$MOCK" proxy --upstream "$1" --port 0 ${PROXY_ARGS:-}; } # upstream
start_forwarder() { start_in_front forwarder "$BIN/perf-forwarder" --upstream "$1" --port 0; } # upstream
stop_proxy() {
  if [ -n "$PROXY_PID" ]; then
    kill -TERM "$PROXY_PID" 2>/dev/null || true
    wait "$PROXY_PID" 2>/dev/null || true
    PROXY_PID=""
  fi
}
trap 'stop_proxy; stop_server' EXIT

new_transaction() { # base reference
  curl -sf -H 'content-type: application/json' "$1/api/payments/initiate" \
    -d "{\"merchantId\":\"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60\",\"referenceNo\":\"$2\",\"amount\":1050,\"productCode\":\"TOPUP\",\"storeId\":\"S1\",\"payerId\":\"60123456789\"}" \
    | json_field transactionId
}

if [ "$ONLY" = all ] || [ "$ONLY" = throughput ]; then
  for run in $(seq 1 "$RUNS"); do
    start_server "$OUT/mock-$run.out" "$MOCK" --port 0
    ID=$(new_transaction "$BASE" "PROXY-BENCH-$run")
    [ -n "$ID" ] || die "initiate failed"
    wrk_once direct_get "$BASE/api/payments/$ID/status" "$WRK/get.lua" "$LOG"
    WRK_TAG="direct-$run-$$" wrk_once direct_initiate "$BASE" "$WRK/initiate.lua" "$LOG"
    start_proxy "$BASE"
    # wrk_once reads the server's CPU from SERVER_PID: the proxy's here.
    MOCK_PID=$SERVER_PID
    SERVER_PID=$PROXY_PID
    wrk_once proxy_get "$PROXY/api/payments/$ID/status" "$WRK/get.lua" "$LOG"
    WRK_TAG="proxy-$run-$$" wrk_once proxy_initiate "$PROXY" "$WRK/initiate.lua" "$LOG"
    stop_proxy
    # The control: the same two runs through the bare forwarder.
    start_forwarder "$BASE"
    SERVER_PID=$PROXY_PID
    wrk_once forwarder_get "$PROXY/api/payments/$ID/status" "$WRK/get.lua" "$LOG"
    WRK_TAG="forwarder-$run-$$" wrk_once forwarder_initiate "$PROXY" "$WRK/initiate.lua" "$LOG"
    SERVER_PID=$MOCK_PID
    stop_proxy
    stop_server
  done
fi

if [ "$ONLY" = all ] || [ "$ONLY" = latency ]; then
  start_server "$OUT/mock-latency.out" "$MOCK" --port 0
  ID=$(new_transaction "$BASE" "PROXY-LATENCY")
  start_proxy "$BASE"
  for run in $(seq 1 "$RUNS"); do
    for where in direct proxy; do
      url="$BASE/api/payments/$ID/status"
      [ "$where" = proxy ] && url="$PROXY/api/payments/$ID/status"
      result=$(taskset -c "$CLIENT_CPU" "$BIN/perf-latency" --url "$url" --rate "$RATE" --seconds "$DURATION")
      echo "latency_$where $result" | tee -a "$LOG"
    done
  done
  stop_proxy
  stop_server
fi

MEMORY_ROWS=""
if [ "$ONLY" = all ] || [ "$ONLY" = memory ]; then
  start_server "$OUT/mock-memory.out" "$MOCK" --port 0
  start_proxy "$BASE"
  rss() { awk '/^VmRSS/ { print $2 }' "/proc/$PROXY_PID/status"; }
  exchanges() { curl -sf "$PROXY/_proxy/report" | sed -n 's/.*"exchanges":\([0-9]*\).*/\1/p'; }
  echo "memory start rss_kib=$(rss)" | tee -a "$LOG"
  round=0
  while [ "$(exchanges)" -lt "$MILLION" ]; do
    round=$((round + 1))
    (cd "$ROOT" && WRK_TAG="memory-$round-$$" taskset -c "$CLIENT_CPU" \
      wrk -t1 -c"$CONNS" -d"${DURATION}s" -s "$WRK/initiate.lua" "$PROXY") >/dev/null
    echo "memory exchanges=$(exchanges) rss_kib=$(rss)" | tee -a "$LOG"
  done
  first=$(awk '/^memory exchanges=/ { sub("rss_kib=", "", $3); print $3; exit }' "$LOG")
  last=$(awk '/^memory exchanges=/ { sub("rss_kib=", "", $3); v = $3 } END { print v }' "$LOG")
  MEMORY_ROWS="| proxy VmRSS after the first wrk round / after $(exchanges) exchanges (KiB) | $first / $last | bounded: say the figure |
"
  stop_proxy
  stop_server
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
ms() { awk -v u="$1" 'BEGIN { printf "%.3f", u / 1000 }'; }
{
  echo
  echo "| figure | value | goal |"
  echo "|---|---|---|"
  if [ "$ONLY" = all ] || [ "$ONLY" = throughput ]; then
    for s in get initiate; do
      d=$(med "$LOG" "direct_$s" rps); p=$(med "$LOG" "proxy_$s" rps)
      echo "| through the proxy / straight, $s (req/s, median of $RUNS) | $(printf %.0f "$p") / $(printf %.0f "$d") = $(ratio "$p" "$d") | ≥ 0.5 |"
    done
    # The control: what a proxy that only forwards reaches on this stack.
    for s in get initiate; do
      d=$(med "$LOG" "direct_$s" rps); f=$(med "$LOG" "forwarder_$s" rps)
      echo "| through the bare forwarder / straight, $s (req/s, median of $RUNS) | $(printf %.0f "$f") / $(printf %.0f "$d") = $(ratio "$f" "$d") | (control) |"
    done
    for s in get initiate; do
      p=$(med "$LOG" "proxy_$s" rps); f=$(med "$LOG" "forwarder_$s" rps)
      echo "| through the proxy / through the bare forwarder, $s (req/s, medians) | $(printf %.0f "$p") / $(printf %.0f "$f") = $(ratio "$p" "$f") | (the proxy's own cost) |"
    done
    # The proxy shares the mock's core above. What each would serve with a
    # core of its own: its requests per second of its own CPU.
    per_cpu() { # label
      awk -v r="$(med "$LOG" "$1" rps)" -v c="$(med "$LOG" "$1" server_cpu)" 'BEGIN { printf "%.0f", r * 100 / c }'
    }
    for who in "proxy:the proxy:(a core each)" "forwarder:the bare forwarder:(control)"; do
      IFS=: read -r label name goal <<<"$who"
      for s in get initiate; do
        dk=$(per_cpu "direct_$s"); wk=$(per_cpu "${label}_$s")
        echo "| requests per CPU-second, $name / the mock straight, $s (req/s ÷ CPU share, medians) | $wk / $dk = $(ratio "$wk" "$dk") | $goal |"
      done
    done
  fi
  if [ "$ONLY" = all ] || [ "$ONLY" = latency ]; then
    for q in p50 p99; do
      d=$(med "$LOG" latency_direct "${q}_us"); p=$(med "$LOG" latency_proxy "${q}_us")
      goal="≤ 0.5"; [ "$q" = p99 ] && goal="≤ 2"
      echo "| added latency at $RATE req/s, $q (ms) | $(ms "$p") − $(ms "$d") = $(ms "$(awk -v a="$p" -v b="$d" 'BEGIN { print a - b }')") | $goal |"
    done
  fi
  printf '%s' "$MEMORY_ROWS"
  echo
  echo "bench-proxy.sh took $(( $(date +%s) - started )) s; raw output in $OUT"
} | tee "$OUT/summary.md"
