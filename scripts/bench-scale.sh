#!/usr/bin/env bash
# Issue #7, item 2: the mock at scale. For 1,000 and for 1,000,000
# transactions pre-loaded through the library API (perf-scale, the mock
# in-process, pinned to one core): RSS per transaction above the empty
# server, GET status latency by random id (wrk pinned to the other core),
# and GET /_mock/transactions paging (first page, and a page after an id in
# the middle), timed by curl.
#
#   scripts/bench-scale.sh                                  # measured
#   SCALE_COUNTS="1000 20000" LOAD_DURATION=2 LOAD_RUNS=1 scripts/bench-scale.sh   # smoke
#
# Environment as scripts/load.sh, plus SCALE_COUNTS ("1000 1000000"; the
# first is the baseline, the last the scale point) and PAGE_SAMPLES (10).
set -euo pipefail
source "$(dirname "$0")/bench-common.sh"

OUT=${LOAD_OUT:-$TARGET/perf/scale}
rm -rf "$OUT"
mkdir -p "$OUT"
LOG=$OUT/runs.log
COUNTS=${SCALE_COUNTS:-1000 1000000}
SAMPLES=${PAGE_SAMPLES:-10}
started=$(date +%s)

machine_header
echo "# $RUNS run(s) x ${DURATION}s, $CONNS connections, server on cpu $SERVER_CPU, wrk -t1 and curl on cpu $CLIENT_CPU"
need_wrk
(cd "$ROOT" && cargo build --release --quiet -p payments-perf)

# page_ms URL: median of SAMPLES curl timings of URL, in ms; checks 200.
page_ms() {
  local i
  for i in $(seq 1 "$SAMPLES"); do
    taskset -c "$CLIENT_CPU" curl -s -o "$OUT/page.json" -w '%{http_code} %{time_total}\n' "$1"
  done | awk '$1 != 200 { print "bad status " $1 > "/dev/stderr"; exit 1 } { print $2 * 1000 }' | median
}

for count in $COUNTS; do
  echo "# pre-loading $count transactions"
  start_server "$OUT/scale-$count.out" "$BIN/perf-scale" --count "$count" --sample 1000 --ids-out "$OUT/ids-$count.txt"
  sed -n '/^[a-z_]*=/p' "$OUT/scale-$count.out" | sed 's/^/# /'
  for run in $(seq 1 "$RUNS"); do
    WRK_IDS="$OUT/ids-$count.txt" wrk_once "status_$count" "$BASE" "$ROOT/perf/wrk/status_ids.lua" "$LOG"
  done
  middle=$(awk '{ id[NR] = $1 } END { print id[int((NR + 1) / 2)] }' "$OUT/ids-$count.txt")
  first=$(page_ms "$BASE/_mock/transactions?limit=100")
  after=$(page_ms "$BASE/_mock/transactions?limit=100&after=$middle")
  full=$(page_ms "$BASE/_mock/transactions?limit=1000&after=$middle")
  items=$(grep -o '"transactionId"' "$OUT/page.json" | wc -l)
  echo "paging_$count first_100_ms=$first after_middle_100_ms=$after after_middle_1000_ms=$full last_page_items=$items" | tee -a "$LOG"
  # The web console's transactions page (issue 16): 100 rows, newest first,
  # and 100 rows older than the middle id; HTML rendered from templates.
  ui_first=$(page_ms "$BASE/_mock/ui/?limit=100")
  ui_before=$(page_ms "$BASE/_mock/ui/?limit=100&before=$middle")
  rows=$(grep -o 'data-label="Transaction"' "$OUT/page.json" | wc -l)
  echo "console_$count first_100_ms=$ui_first before_middle_100_ms=$ui_before last_page_rows=$rows" | tee -a "$LOG"
  echo "rss_$count $(sed -n 's/^\(rss_empty_kib\|rss_loaded_kib\|bytes_per_transaction\|record_inline_bytes\|load_seconds\)=\(.*\)/\1=\2/p' "$OUT/scale-$count.out" | tr '\n' ' ')" | tee -a "$LOG"
  stop_server
done

set -- $COUNTS
small=$1
big=${!#}
ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }
verdict() { awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN { ok = (op == ">=") ? v >= t : v <= t; print ok ? "pass" : "FAIL" }'; }
{
  echo
  echo "| figure | $small | $big | target | result |"
  echo "|---|---|---|---|---|"
  bpt=$(field "$LOG" "rss_$big" bytes_per_transaction)
  echo "| RSS above the empty server, bytes per transaction | $(field "$LOG" "rss_$small" bytes_per_transaction) | $bpt | ≤ 600 at $big | $(verdict "$bpt" "<=" 600) |"
  echo "| RSS empty / loaded, KiB | $(field "$LOG" "rss_$small" rss_empty_kib) / $(field "$LOG" "rss_$small" rss_loaded_kib) | $(field "$LOG" "rss_$big" rss_empty_kib) / $(field "$LOG" "rss_$big" rss_loaded_kib) | — | — |"
  echo "| stored record, inline bytes (size_of_val) | $(field "$LOG" "rss_$small" record_inline_bytes) | $(field "$LOG" "rss_$big" record_inline_bytes) | — | — |"
  echo "| pre-load time, s | $(field "$LOG" "rss_$small" load_seconds) | $(field "$LOG" "rss_$big" load_seconds) | — | — |"
  p_small=$(med "$LOG" "status_$small" p99_us); p_big=$(med "$LOG" "status_$big" p99_us)
  pr=$(awk -v a="$p_big" -v b="$p_small" 'BEGIN { printf "%.2f", a / b }')
  echo "| GET status by random id, req/s (median) | $(printf %.0f "$(med "$LOG" "status_$small" rps)") | $(printf %.0f "$(med "$LOG" "status_$big" rps)") | — | — |"
  echo "| GET status by random id, p50 ms | $(ms "$(med "$LOG" "status_$small" p50_us)") | $(ms "$(med "$LOG" "status_$big" p50_us)") | — | — |"
  echo "| GET status by random id, p99 ms | $(ms "$p_small") | $(ms "$p_big") | ratio $pr ≤ 1.2 | $(verdict "$pr" "<=" 1.2) |"
  for k in first_100_ms after_middle_100_ms after_middle_1000_ms; do
    v=$(field "$LOG" "paging_$big" "$k")
    case $k in *_100_ms) t="≤ 5 at $big"; res=$(verdict "$v" "<=" 5) ;; *) t="—"; res="—" ;; esac
    echo "| /_mock/transactions $k (median of $SAMPLES) | $(field "$LOG" "paging_$small" "$k") | $v | $t | $res |"
  done
  for k in first_100_ms before_middle_100_ms; do
    v=$(field "$LOG" "console_$big" "$k")
    json=$(field "$LOG" "paging_$big" "$([ "$k" = first_100_ms ] && echo first_100_ms || echo after_middle_100_ms)")
    echo "| /_mock/ui/ (console) $k (median of $SAMPLES) | $(field "$LOG" "console_$small" "$k") | $v | ≤ the JSON page ($json) at $big | $(verdict "$v" "<=" "$json") |"
  done
  echo
  echo "bench-scale.sh took $(( $(date +%s) - started )) s; raw output in $OUT"
} | tee "$OUT/summary.md"
