#!/usr/bin/env bash
# Issue 23: what keeping state costs. The SQLite store (durability process
# and power) against the memory store, the memory store against the bare
# axum control, PostgreSQL replicas against pgbench doing the same
# single-row insert, and a SQLite store of a million transactions: start to
# listening, and bytes on disk per transaction.
#
#   scripts/bench-store.sh                                   # 3 rounds x 10 s
#   LOAD_DURATION=3 LOAD_RUNS=1 FILL_COUNT=100000 scripts/bench-store.sh   # smoke
#
# Rounds alternate the stores (memory, sqlite process, sqlite power,
# control), each a fresh server pinned to SERVER_CPU with wrk pinned to
# CLIENT_CPU, as scripts/load.sh does; ratios are of medians in one run.
# PostgreSQL (a throwaway cluster of scripts/postgres.sh) is not pinned:
# the database, the replicas and the load share both cores, and pgbench
# runs on the same cluster and table in the same run.
#
# Environment: LOAD_DURATION (10), LOAD_RUNS (3), LOAD_CONNECTIONS (50),
# FILL_COUNT (1000000), BENCH_ONLY (all | sqlite | postgres | fill),
# SERVER_CPU, CLIENT_CPU, LOAD_OUT.
set -euo pipefail
source "$(dirname "$0")/bench-common.sh"

OUT=${LOAD_OUT:-$TARGET/perf/store}
rm -rf "$OUT"
mkdir -p "$OUT"
LOG=$OUT/runs.log
ONLY=${BENCH_ONLY:-all}
FILL=${FILL_COUNT:-1000000}
started=$(date +%s)

machine_header
echo "# $RUNS round(s) x ${DURATION}s, $CONNS connections, server on cpu $SERVER_CPU, wrk -t1 on cpu $CLIENT_CPU"
need_wrk
(cd "$ROOT" && cargo build --release --quiet -p payments-mock-server-cli -p payments-perf)
MOCK=$BIN/payments-mock-server
WRK=$ROOT/perf/wrk
json_field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
INITIATE_BODY='{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60","referenceNo":"STORE-REF-1","amount":1050,"productCode":"TOPUP","storeId":"S1","payerId":"60123456789"}'

# One store's three scenarios on a fresh server: GET status, POST
# initiate, POST confirm of a fresh pool. $1 label, the rest its flags.
store_round() {
  local label=$1 run=$2
  shift 2
  start_server "$OUT/$label-$run.out" "$MOCK" --port 0 "$@"
  curl -sf -H 'content-type: application/json' "$BASE/api/payments/initiate" -d "$INITIATE_BODY" >"$OUT/initiate-body.json"
  local id
  id=$(json_field transactionId <"$OUT/initiate-body.json")
  [ -n "$id" ] || die "initiate failed on $label: $(cat "$OUT/initiate-body.json")"
  curl -sf "$BASE/api/payments/$id/status" >"$OUT/status-body.json"
  wrk_once "${label}_get" "$BASE/api/payments/$id/status" "$WRK/get.lua" "$LOG"
  WRK_TAG="$label-$run-$$" wrk_once "${label}_initiate" "$BASE" "$WRK/initiate.lua" "$LOG"
  local pool
  pool=$(field "$LOG" "${label}_initiate" rps | tail -n 1 | awk -v d="$DURATION" '{ printf "%d", $1 * d * 2 + 1000 }')
  taskset -c "$CLIENT_CPU" timeout 600 "$BIN/perf-preload" --base "$BASE" --count "$pool" \
    --tag "pool-$label-$run" --out "$OUT/pool-$label-$run.txt" | sed 's/^/# /'
  WRK_POOL="$OUT/pool-$label-$run.txt" wrk_once "${label}_confirm" "$BASE" "$WRK/confirm.lua" "$LOG"
  stop_server
}

if [ "$ONLY" = all ] || [ "$ONLY" = sqlite ]; then
  for run in $(seq 1 "$RUNS"); do
    store_round memory "$run"
    rm -f "$OUT"/sq-*.db*
    store_round sqlite_process "$run" --store "sqlite:$OUT/sq-process-$run.db"
    store_round sqlite_power "$run" --store "sqlite:$OUT/sq-power-$run.db" --durability power
    start_server "$OUT/control-$run.out" "$BIN/perf-control" \
      --get-body "$OUT/status-body.json" --post-body "$OUT/initiate-body.json"
    wrk_once control_get "$BASE/api/payments/x/status" "$WRK/get.lua" "$LOG"
    WRK_TAG="control-$run-$$" wrk_once control_post "$BASE" "$WRK/initiate.lua" "$LOG"
    stop_server
  done
fi

# --- PostgreSQL: 1 and 3 replicas against pgbench's insert ------------------
PG_ROWS=""
if [ "$ONLY" = all ] || [ "$ONLY" = postgres ]; then
  bash "$ROOT/scripts/postgres.sh" install
  PG_DIR=$OUT/pg
  PG_URL=$(bash "$ROOT/scripts/postgres.sh" start "$PG_DIR")
  trap 'stop_server; for p in ${REPLICA_PIDS:-}; do kill "$p" 2>/dev/null || true; done; bash "$ROOT/scripts/postgres.sh" stop "$PG_DIR"' EXIT
  PSQL="psql -q -X -v ON_ERROR_STOP=1"
  PGBENCH=$(ls /usr/lib/postgresql/*/bin/pgbench | sort -V | tail -n 1)
  db_url() { echo "${PG_URL%/*}/$1"; }
  cat >"$OUT/insert.sql" <<'SQL'
INSERT INTO mock_transactions (id, merchant_id, reference_no, amount_minor, currency_code,
  currency_exponent, product_code, store_id, payer_id, initial, created_at, expires_at)
VALUES (gen_random_uuid(), '6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60', gen_random_uuid()::text,
  1050, 'MYR', 2, 'TOPUP', 'S1', '60123456789', 'INITIATED', 1795000000000, 1795000900000);
SQL
  for replicas in 1 3; do
    for run in $(seq 1 "$RUNS"); do
      db="bench_${replicas}_${run}"
      $PSQL "$PG_URL" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
      REPLICA_PIDS=""
      bases=()
      for r in $(seq 1 "$replicas"); do
        # Emptied here, not by the child's redirect: the loop below could
        # otherwise read the last round's banner (a closed port) first.
        : >"$OUT/pg-$replicas-$r.out"
        "$MOCK" --port 0 --store "$(db_url "$db")" --replica-name "r$r" >"$OUT/pg-$replicas-$r.out" 2>>"$MOCK_LOG" &
        REPLICA_PIDS="$REPLICA_PIDS $!"
        for _ in $(seq 1 600); do
          b=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$OUT/pg-$replicas-$r.out")
          [ -n "$b" ] && break
          sleep 0.05
        done
        [ -n "$b" ] || die "replica r$r did not start"
        bases+=("$b")
      done
      # wrk per replica, all at once, connections shared out; summed.
      per=$(( CONNS / replicas ))
      pids=()
      for r in $(seq 1 "$replicas"); do
        (cd "$ROOT" && WRK_TAG="pg-$replicas-$run-$r-$$" timeout $((DURATION + 60)) \
          wrk -t1 -c"$per" -d"${DURATION}s" --latency -s "$WRK/initiate.lua" "${bases[$((r - 1))]}") \
          >"$OUT/pg-wrk-$replicas-$run-$r.txt" &
        pids+=($!)
      done
      for p in "${pids[@]}"; do wait "$p"; done
      total=$(cat "$OUT"/pg-wrk-"$replicas"-"$run"-*.txt | sed -n 's/^RESULT //p' \
        | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "rps") s += kv[2] } } END { printf "%.0f", s }')
      for p in $REPLICA_PIDS; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
      REPLICA_PIDS=""
      echo "pg_mock_$replicas rps=$total" | tee -a "$LOG"
      clients=$(( 16 * replicas ))
      tps=$("$PGBENCH" -n -f "$OUT/insert.sql" -c "$clients" -j 2 -T "$DURATION" "$(db_url "$db")" 2>/dev/null \
        | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
      echo "pg_bench_$replicas rps=$tps clients=$clients" | tee -a "$LOG"
    done
    m=$(med "$LOG" "pg_mock_$replicas" rps)
    b=$(med "$LOG" "pg_bench_$replicas" rps)
    PG_ROWS="$PG_ROWS| PostgreSQL, $replicas replica(s): initiates/s / pgbench insert tps ($((16 * replicas)) connections) | $(printf %.0f "$m") / $(printf %.0f "$b") = $(awk -v a="$m" -v b="$b" 'BEGIN { printf "%.2f", a / b }') | ≥ 0.5 |
"
  done
fi

# --- SQLite with a million transactions: start to listening, bytes ----------
FILL_ROWS=""
if [ "$ONLY" = all ] || [ "$ONLY" = fill ]; then
  DB=$OUT/million.db
  rm -f "$DB"*
  "$BIN/perf-fill-store" --store "sqlite:$DB" --count "$FILL" | sed 's/^/# fill: /'
  # One clean start and stop: the WAL is checkpointed into the file.
  start_server "$OUT/fill-start.out" "$MOCK" --port 0 --store "sqlite:$DB"
  stop_server
  bytes=$(( $(stat -c %s "$DB") + $( [ -f "$DB-wal" ] && stat -c %s "$DB-wal" || echo 0) ))
  per_tx=$(awk -v b="$bytes" -v n="$FILL" 'BEGIN { printf "%.0f", b / n }')
  starts=()
  for i in 1 2 3 4 5; do
    t0=$(date +%s%N)
    "$MOCK" --port 0 --store "sqlite:$DB" >"$OUT/fill-$i.out" 2>>"$MOCK_LOG" &
    pid=$!
    until grep -q '^listening on' "$OUT/fill-$i.out" 2>/dev/null; do
      kill -0 "$pid" 2>/dev/null || die "the mock on $DB exited"
      sleep 0.002
    done
    t1=$(date +%s%N)
    kill -TERM "$pid"; wait "$pid" || true
    starts+=("$(( (t1 - t0) / 1000000 ))")
  done
  start_ms=$(printf '%s\n' "${starts[@]}" | median)
  FILL_ROWS="| SQLite with $FILL transactions: start to listening, median of 5, ms | $start_ms (runs: ${starts[*]}) | ≤ 3000 |
| bytes on disk per stored transaction at $FILL (SQLite) | $per_tx ($bytes bytes) | say the figure |
"
fi

# --- summary -----------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
{
  echo
  echo "| figure | value | goal |"
  echo "|---|---|---|"
  if [ "$ONLY" = all ] || [ "$ONLY" = sqlite ]; then
    for s in get initiate confirm; do
      mem=$(med "$LOG" "memory_$s" rps)
      echo "| memory store, $s, req/s (median of $RUNS) | $(printf %.0f "$mem") | — |"
      for d in process power; do
        v=$(med "$LOG" "sqlite_${d}_$s" rps)
        goal="—"
        case "$d-$s" in
          process-get) goal="≥ 0.9" ;;
          process-initiate | process-confirm) goal="≥ 0.6" ;;
          power-initiate) goal="≥ 0.3" ;;
        esac
        echo "| SQLite ($d) / memory, $s | $(printf %.0f "$v") / $(printf %.0f "$mem") = $(ratio "$v" "$mem") | $goal |"
      done
    done
    echo "| memory store / bare axum control, GET status | $(ratio "$(med "$LOG" memory_get rps)" "$(med "$LOG" control_get rps)") | no lower than before (0.64) |"
    echo "| memory store / bare axum control, POST initiate | $(ratio "$(med "$LOG" memory_initiate rps)" "$(med "$LOG" control_post rps)") | no lower than before (0.49) |"
  fi
  printf '%s' "$PG_ROWS"
  printf '%s' "$FILL_ROWS"
  echo
  echo "bench-store.sh took $(( $(date +%s) - started )) s; raw output in $OUT"
} | tee "$OUT/summary.md"
