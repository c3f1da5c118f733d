#!/usr/bin/env bash
# Issues #7 and #25, profile: where the mock spends instructions on its hot
# paths. `perf stat -e instructions` is not supported on this VM, so this
# uses valgrind's callgrind (exact instruction counts, user space, every
# thread: the log writer's included, independent of load).
#
# For each of: status GET by id, initiate (the six fields of
# perf/wrk/initiate.lua, and every field of the document's section 2.2,
# perf/wrk/initiate_full.lua), each with the text log and with
# --log-format json, the 6-field initiate on a fresh SQLite store
# (initiate_sqlite: the writer thread's share), and the bare-axum control
# GET and POST, and the contract proxy and the bare forwarder in front of
# the mock (proxy_status, proxy_initiate, forwarder_status,
# forwarder_initiate: only the one in front is under callgrind): starts the
# server under callgrind (pinned to SERVER_CPU), warms it up with wrk for
# PROFILE_WARMUP seconds (2), zeroes the counters (callgrind_control -z),
# drives it with wrk (pinned to CLIENT_CPU; PROFILE_CONNECTIONS, 4,
# PROFILE_SECONDS, 10), dumps the counters of that window
# (callgrind_control -d), stops it, and writes the window's callgrind file
# plus inclusive and exclusive top lists. Prints instructions per request
# of the measured window (its Ir / its requests). The shutdown is not in
# it: it frees every transaction the warm-up and the window created, which
# added about 1k instructions per initiate to a count that included it.
#
#   scripts/bench-profile.sh
#   PROFILE_ONLY="status status_json" scripts/bench-profile.sh
set -euo pipefail
source "$(dirname "$0")/bench-common.sh"
SECONDS_PROFILE=${PROFILE_SECONDS:-10}
WARMUP=${PROFILE_WARMUP:-2}
CONNS_PROFILE=${PROFILE_CONNECTIONS:-4}
ONLY=${PROFILE_ONLY:-}
OUT=${LOAD_OUT:-$TARGET/perf/profile}
rm -rf "$OUT"
mkdir -p "$OUT"
started=$(date +%s)
machine_header
need_wrk
command -v valgrind >/dev/null || sudo_if_needed apt-get install -y valgrind >/dev/null
(cd "$ROOT" && cargo build --release --quiet -p payments-mock-server-cli -p payments-perf)
MOCK=$BIN/payments-mock-server
WRK=$ROOT/perf/wrk

wanted() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }

# status_path BASE: initiates one transaction there; prints its status path.
status_path() {
  curl -sf -H 'content-type: application/json' "$1/api/payments/initiate" \
    -d '{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60","referenceNo":"PROFILE-1","amount":1050,"productCode":"TOPUP","storeId":"S1","payerId":"60123456789"}' \
    >"$OUT/initiate-body.json"
  echo "/api/payments/$(sed -n 's/.*"transactionId":"\([^"]*\)".*/\1/p' "$OUT/initiate-body.json")/status"
}

# profile NAME URL_PATH SCRIPT CMD...: one callgrind session.
profile() {
  local name=$1 path=$2 script=$3
  shift 3
  wanted "$name" || return 0
  start_server "$OUT/$name.out" valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.$name" "$@"
  if [[ $name == status* ]]; then
    path=$(status_path "$BASE")
  fi
  window "$name" "$path" "$script"
}

# profile_front NAME URL_PATH SCRIPT CMD...: CMD (the contract proxy or
# the bare forwarder; `--upstream URL --port 0` are appended) under
# callgrind, in front of a mock that runs as it is (on SERVER_CPU too):
# only CMD's instructions are counted. URL_PATH "status" reads a
# transaction initiated straight at the mock.
profile_front() {
  local name=$1 path=$2 script=$3
  shift 3
  wanted "$name" || return 0
  start_server "$OUT/$name.mock.out" "$MOCK" --port 0
  FRONT_MOCK_PID=$SERVER_PID
  local upstream=$BASE
  [ "$path" = status ] && path=$(status_path "$upstream")
  start_server "$OUT/$name.out" valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.$name" "$@" --upstream "$upstream" --port 0
  window "$name" "$path" "$script"
  SERVER_PID=$FRONT_MOCK_PID
  FRONT_MOCK_PID=""
  stop_server
}
FRONT_MOCK_PID=""
trap 'stop_server; [ -z "$FRONT_MOCK_PID" ] || kill -TERM "$FRONT_MOCK_PID" 2>/dev/null || true' EXIT

# window NAME URL_PATH SCRIPT: warms up the server under callgrind
# (SERVER_PID, BASE), counts one wrk window, stops it, annotates.
window() {
  local name=$1 path=$2 script=$3
  (cd "$ROOT" && WRK_TAG="warm-$$" taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS_PROFILE" -d"${WARMUP}s" -s "$script" "$BASE$path") >"$OUT/$name.warmup.wrk"
  callgrind_control -z "$SERVER_PID" >/dev/null
  (cd "$ROOT" && WRK_TAG="profile-$$" taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS_PROFILE" -d"${SECONDS_PROFILE}s" -s "$script" "$BASE$path") >"$OUT/$name.wrk"
  callgrind_control -d "$SERVER_PID" >/dev/null
  stop_server
  # The window's dump; the file without a number holds the shutdown.
  mv "$OUT/callgrind.$name" "$OUT/callgrind.$name.shutdown"
  mv "$(ls "$OUT/callgrind.$name".[0-9]* | head -1)" "$OUT/callgrind.$name"
  local requests ir
  requests=$(sed -n 's/^RESULT requests=\([0-9]*\).*/\1/p' "$OUT/$name.wrk")
  ir=$(sed -n 's/^summary: //p' "$OUT/callgrind.$name" | head -1)
  callgrind_annotate --inclusive=yes "$OUT/callgrind.$name" >"$OUT/$name.inclusive.txt" 2>/dev/null
  callgrind_annotate "$OUT/callgrind.$name" >"$OUT/$name.exclusive.txt" 2>/dev/null
  echo "profile_$name requests=$requests ir=$ir ir_per_request=$(awk -v i="$ir" -v r="$requests" 'BEGIN { printf "%.0f", i / r }')" | tee -a "$OUT/summary.log"
}

profile status "" "$WRK/get.lua" "$MOCK" --port 0
profile status_json "" "$WRK/get.lua" "$MOCK" --port 0 --log-format json
profile initiate "/api/payments/initiate" "$WRK/initiate.lua" "$MOCK" --port 0
profile initiate_json "/api/payments/initiate" "$WRK/initiate.lua" "$MOCK" --port 0 --log-format json
profile initiate_full "/api/payments/initiate" "$WRK/initiate_full.lua" "$MOCK" --port 0
rm -f "$OUT"/sqlite.db*
profile initiate_sqlite "/api/payments/initiate" "$WRK/initiate.lua" "$MOCK" --port 0 --store "sqlite:$OUT/sqlite.db"
[ -f "$OUT/initiate-body.json" ] || printf '{"isSuccess":true}' >"$OUT/initiate-body.json"
# The control is asked the same request as the mock (a status path with a
# transaction id: hyper parses and checks every byte of it); until
# 2026-11-30 it was asked `/`.
profile control_get "/api/payments/01970000-0000-7000-8000-000000000000/status" "$WRK/get.lua" "$BIN/perf-control" --get-body "$OUT/initiate-body.json" --post-body "$OUT/initiate-body.json"
profile control_post "/api/payments/initiate" "$WRK/initiate.lua" "$BIN/perf-control" --get-body "$OUT/initiate-body.json" --post-body "$OUT/initiate-body.json"
# The contract proxy in front of the mock, and the bare forwarder
# (scripts/bench-proxy.sh's control) likewise: the proxy's own cost is
# the difference.
profile_front proxy_status status "$WRK/get.lua" "$MOCK" proxy
profile_front proxy_initiate "/api/payments/initiate" "$WRK/initiate.lua" "$MOCK" proxy
profile_front forwarder_status status "$WRK/get.lua" "$BIN/perf-forwarder"
profile_front forwarder_initiate "/api/payments/initiate" "$WRK/initiate.lua" "$BIN/perf-forwarder"

for name in status status_json initiate initiate_json initiate_full initiate_sqlite proxy_status proxy_initiate; do
  echo
  echo "## $name: top functions by exclusive instructions"
  [ -f "$OUT/$name.exclusive.txt" ] || continue
  grep -E '^ *[0-9,]+ \([ 0-9.]+%\) ' "$OUT/$name.exclusive.txt" | sed -n '2,26p' || true
done
echo
echo "bench-profile.sh took $(( $(date +%s) - started )) s; callgrind files and annotations in $OUT"
