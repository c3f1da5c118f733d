#!/usr/bin/env bash
# Issue 42: what sandboxes cost (BENCHMARKS.md, "Sandboxes").
#
# 1. GET status spread over SANDBOXES live sandboxes (one transaction
#    each, the reads in turn over all of them) against the same load on
#    the root (as many transactions, the reads in turn over them: the
#    same paths but the prefix, so the two differ by the sandboxes' own
#    work, not by how many records the reads touch), alternating rounds
#    on one server: the ratio of each pair. Goal: at or above 0.9.
# 2. Making a sandbox: POST /_mock/sandboxes on one connection (unloaded
#    latency), p50 and p99. Goal: p50 at or under 1 ms in memory.
# 3. An idle sandbox's memory: VmRSS before and after making IDLE more,
#    divided by IDLE. Goal: at or under 16 KiB.
# 4. With PAYMENTS_BENCH_POSTGRES_URL (a database this may empty), making
#    a sandbox on PostgreSQL, as 2. Goal: p50 at or under 20 ms.
#
#   scripts/bench-sandboxes.sh                  # 10 rounds x 5 s
#   LOAD_RUNS=2 LOAD_DURATION=2 scripts/bench-sandboxes.sh   # smoke
#
# Environment: LOAD_RUNS (10 rounds), LOAD_DURATION (5), LOAD_CONNECTIONS
# (50), SANDBOXES (200), IDLE (10000), SERVER_CPU, CLIENT_CPU, LOAD_OUT.
set -euo pipefail
LOAD_RUNS=${LOAD_RUNS:-10}
LOAD_DURATION=${LOAD_DURATION:-5}
source "$(dirname "$0")/bench-common.sh"

OUT=${LOAD_OUT:-$TARGET/perf/sandboxes}
rm -rf "$OUT"
mkdir -p "$OUT"
LOG=$OUT/runs.log
COUNT=${SANDBOXES:-200}
IDLE=${IDLE:-10000}
started=$(date +%s)

machine_header | tee "$LOG"
need_wrk
(cd "$ROOT" && cargo build --release --quiet -p payments-mock-server-cli)
MOCK=$BIN/payments-mock-server
WRK=$ROOT/perf/wrk
json_field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
initiate() { # base reference
  curl -sf -H 'content-type: application/json' "$1/api/payments/initiate" \
    -d "{\"merchantId\":\"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60\",\"referenceNo\":\"$2\",\"amount\":1050,\"productCode\":\"TOPUP\",\"storeId\":\"S1\",\"payerId\":\"60123456789\"}" \
    | json_field transactionId
}
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$SERVER_PID/status"; }

# 1. Spread over sandboxes against the root, alternating.
start_server "$OUT/mock.out" "$MOCK" --port 0 --max-sandboxes 1000000
: >"$OUT/root-path.txt"
: >"$OUT/paths.txt"
for i in $(seq 1 "$COUNT"); do
  root_id=$(initiate "$BASE" "ROOT-$i")
  [ -n "$root_id" ] || die "initiate at the root failed"
  echo "/api/payments/$root_id/status" >>"$OUT/root-path.txt"
  sandbox=$(curl -sf -X POST "$BASE/_mock/sandboxes" | json_field baseUrl)
  [ -n "$sandbox" ] || die "no sandbox"
  id=$(initiate "$sandbox" "SBX-$i")
  [ -n "$id" ] || die "initiate in $sandbox failed"
  echo "${sandbox#"$BASE"}/api/payments/$id/status" >>"$OUT/paths.txt"
done
for run in $(seq 1 "$RUNS"); do
  if [ $((run % 2)) -eq 1 ]; then order="root spread"; else order="spread root"; fi
  for which in $order; do
    if [ "$which" = root ]; then
      # The same script as the spread (wrk's Lua request() per request),
      # over the root's transactions.
      WRK_PATHS="$OUT/root-path.txt" wrk_once "root_$run" "$BASE" "$WRK/paths.lua" "$LOG" >/dev/null
    else
      WRK_PATHS="$OUT/paths.txt" wrk_once "spread_$run" "$BASE" "$WRK/paths.lua" "$LOG" >/dev/null
    fi
  done
done
stop_server

# 2. Making a sandbox, one connection.
start_server "$OUT/mock-create.out" "$MOCK" --port 0 --max-sandboxes 1000000
(cd "$ROOT" && taskset -c "$CLIENT_CPU" wrk -t1 -c1 -d"${DURATION}s" --latency \
  -s "$WRK/sandbox_create.lua" "$BASE/_mock/sandboxes") | grep '^RESULT' | sed 's/^RESULT/create/' | tee -a "$LOG"
stop_server

# 4. Making a sandbox on PostgreSQL, one connection (run before 3., whose
# server must be the last).
if [ -n "${PAYMENTS_BENCH_POSTGRES_URL:-}" ]; then
  start_server "$OUT/mock-create-pg.out" "$MOCK" --port 0 --max-sandboxes 1000000 \
    --store "$PAYMENTS_BENCH_POSTGRES_URL" --fresh
  (cd "$ROOT" && taskset -c "$CLIENT_CPU" wrk -t1 -c1 -d"${DURATION}s" --latency \
    -s "$WRK/sandbox_create.lua" "$BASE/_mock/sandboxes") | grep '^RESULT' | sed 's/^RESULT/create_pg/' | tee -a "$LOG"
  stop_server
fi

# 3. An idle sandbox's memory.
start_server "$OUT/mock-idle.out" "$MOCK" --port 0 --max-sandboxes 1000000
for _ in $(seq 1 100); do curl -sf -X POST "$BASE/_mock/sandboxes" >/dev/null; done
before=$(rss)
# wrk itself in the background (not a subshell around it), so the kill
# below stops it: a wrk left running would load the next run.
cd "$ROOT"
taskset -c "$CLIENT_CPU" wrk -t1 -c4 -d30s -s "$WRK/sandbox_create.lua" \
  "$BASE/_mock/sandboxes" >/dev/null &
wrk_pid=$!
live() { curl -sf "$BASE/metrics" | awk '/^payments_mock_sandboxes[{ ]/ { print $NF }'; }
while [ "$(live)" -lt $((IDLE + 100)) ]; do sleep 0.2; done
kill "$wrk_pid" 2>/dev/null || true
wait "$wrk_pid" 2>/dev/null || true
made=$(live)
after=$(rss)
echo "idle sandboxes=$made rss_before_kib=$before rss_after_kib=$after" | tee -a "$LOG"
stop_server

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
{
  echo
  echo "| figure | value | goal |"
  echo "|---|---|---|"
  pairs=""
  for run in $(seq 1 "$RUNS"); do
    r=$(field "$LOG" "root_$run" rps | head -1)
    s=$(field "$LOG" "spread_$run" rps | head -1)
    pairs="$pairs $(ratio "$s" "$r")"
  done
  echo "| GET status over $COUNT sandboxes / on the root, same round (each round's ratio) |$pairs | ≥ 0.9 |"
  sorted=$(tr ' ' '\n' <<<"$pairs" | sed '/^$/d' | sort -n)
  echo "| the same, median (min-max) of $RUNS rounds | $(median <<<"$sorted") ($(head -1 <<<"$sorted")-$(tail -1 <<<"$sorted")) | ≥ 0.9 |"
  root_med=$(for run in $(seq 1 "$RUNS"); do field "$LOG" "root_$run" rps; done | median)
  spread_med=$(for run in $(seq 1 "$RUNS"); do field "$LOG" "spread_$run" rps; done | median)
  echo "| GET over sandboxes / on the root, req/s (medians) | $spread_med / $root_med | — |"
  c50=$(awk '/^create / { for (i = 2; i <= NF; i++) if ($i ~ /^p50_us=/) { sub("p50_us=", "", $i); print $i } }' "$LOG")
  c99=$(awk '/^create / { for (i = 2; i <= NF; i++) if ($i ~ /^p99_us=/) { sub("p99_us=", "", $i); print $i } }' "$LOG")
  echo "| making a sandbox, one connection: p50 / p99 (µs) | $c50 / $c99 | p50 ≤ 1000 |"
  if grep -q '^create_pg ' "$LOG"; then
    p50=$(awk '/^create_pg / { for (i = 2; i <= NF; i++) if ($i ~ /^p50_us=/) { sub("p50_us=", "", $i); print $i } }' "$LOG")
    p99=$(awk '/^create_pg / { for (i = 2; i <= NF; i++) if ($i ~ /^p99_us=/) { sub("p99_us=", "", $i); print $i } }' "$LOG")
    echo "| making a sandbox on PostgreSQL, one connection: p50 / p99 (µs) | $p50 / $p99 | p50 ≤ 20000 |"
  fi
  awk -v idle="$IDLE" '/^idle / { split($2, m, "="); split($3, b, "="); split($4, a, "=");
    printf "| an idle sandbox: (VmRSS after - before) / sandboxes made | (%d - %d) KiB / %d = %.1f KiB | ≤ 16 KiB |\n", a[2], b[2], m[2] - 100, (a[2] - b[2]) / (m[2] - 100) }' "$LOG"
  echo
  echo "bench-sandboxes.sh took $(( $(date +%s) - started )) s; raw output in $OUT"
} | tee "$OUT/summary.md"
