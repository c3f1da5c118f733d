#!/usr/bin/env bash
# Several builds of the mock against the bare-axum control, paired round by
# round: the way to tell a small regression from this machine's drift. In
# each round every build and the control serve the same load once, in an
# order that rotates from round to round; a build's figure for the round is
# its req/s over the control's in that same round, and the figure against
# the first build is its req/s over the first build's in that round. Each
# figure is reported as the median of the rounds with the lowest and the
# highest, so a difference within the spread is seen as one, and as the
# geometric mean with its 95 % interval (mean of the logarithms ± 1.96
# standard errors). The order rotates, so each server takes every place
# in turn but always follows the same one: an effect that carried over
# from one server to the next would stay with its neighbour.
#
#   scripts/bench-compare.sh before=/tmp/mock-old after=target/release/payments-mock-server
#   COMPARE_PATH=post LOAD_RUNS=15 scripts/bench-compare.sh a=BIN b=BIN c=BIN
#
# COMPARE_PATH: get (GET status by id, the default) or post (POST initiate).
# COMPARE_RULES_<LABEL>=N: that build serves with N fault rules installed
# that match nothing (issue 42; COMPARE_RULE_MATCH says how they miss).
# The control is $TARGET/release/perf-control unless CONTROL names another.
# Environment as bench-hotpath.sh: LOAD_DURATION (10), LOAD_RUNS (3),
# LOAD_CONNECTIONS (50), SERVER_CPU, CLIENT_CPU, MOCK_LOG, LOAD_OUT.
set -euo pipefail
source "$(dirname "$0")/bench-common.sh"

[ "$#" -ge 1 ] || die "usage: $0 LABEL=MOCK_BINARY..."
PATH_KIND=${COMPARE_PATH:-get}
case "$PATH_KIND" in get | post) ;; *) die "COMPARE_PATH must be get or post, not $PATH_KIND" ;; esac
CONTROL=${CONTROL:-$BIN/perf-control}
[ -x "$CONTROL" ] || die "no control binary at $CONTROL (cargo build --release -p payments-perf)"
labels=()
declare -A binary
for arg in "$@"; do
  label=${arg%%=*}
  bin=${arg#*=}
  [ -n "$label" ] && [ "$label" != "$arg" ] || die "not LABEL=BINARY: $arg"
  [[ $label =~ ^[A-Za-z0-9_-]+$ ]] || die "a label is letters, digits, _ and -: $label"
  [ "$label" != control ] || die "the label control is the bare-axum control's"
  [ -z "${binary[$label]:-}" ] || die "the label $label is given twice"
  [ -x "$bin" ] || die "not an executable: $bin"
  labels+=("$label")
  binary[$label]=$bin
done

OUT=${LOAD_OUT:-$TARGET/perf/compare}
rm -rf "$OUT"
mkdir -p "$OUT"
LOG=$OUT/runs.log
started=$(date +%s)
machine_header
echo "# $RUNS round(s) x ${DURATION}s of $PATH_KIND, $CONNS connections, server on cpu $SERVER_CPU, wrk -t1 on cpu $CLIENT_CPU"
for label in "${labels[@]}"; do echo "# $label: ${binary[$label]} ($(sha256sum "${binary[$label]}" | cut -c1-12))"; done
need_wrk
WRK=$ROOT/perf/wrk
json_field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
INITIATE_BODY='{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60","referenceNo":"HOT-REF-1","amount":1050,"productCode":"TOPUP","storeId":"S1","payerId":"60123456789"}'

# The control answers with the bodies a mock gave, so one mock is asked first.
start_server "$OUT/bodies.out" "${binary[${labels[0]}]}" --port 0
curl -sf -H 'content-type: application/json' "$BASE/api/payments/initiate" -d "$INITIATE_BODY" >"$OUT/initiate-body.json" \
  || die "${labels[0]} did not answer the initiate"
id=$(json_field transactionId <"$OUT/initiate-body.json")
[ -n "$id" ] || die "initiate failed: $(cat "$OUT/initiate-body.json")"
curl -sf "$BASE/api/payments/$id/status" >"$OUT/status-body.json" || die "${labels[0]} did not answer the status"
stop_server

# install_rules LABEL: COMPARE_RULES_<LABEL> (dashes as underscores) fault
# rules that match none of the load's requests, installed before it
# (issue 42): COMPARE_RULE_MATCH is their match object with {n} for the
# rule's number (by default another order's reference, so a status read by
# id looks its transaction up for them).
install_rules() {
  local var="COMPARE_RULES_${1//-/_}" i
  local match=${COMPARE_RULE_MATCH:-'{"referenceNo":"NEVER-{n}"}'}
  for i in $(seq 1 "${!var:-0}"); do
    curl -sf -H 'content-type: application/json' "$BASE/_mock/faults" \
      -d "{\"match\":${match//\{n\}/$i},\"fault\":\"internal-error\",\"times\":0}" >/dev/null \
      || die "$1 did not take fault rule $i"
  done
}

# serve LABEL RUN: one run of LABEL's server under the load.
serve() {
  local label=$1 run=$2
  if [ "$label" = control ]; then
    start_server "$OUT/control-$run.out" "$CONTROL" \
      --get-body "$OUT/status-body.json" --post-body "$OUT/initiate-body.json"
    # The same request as the mocks get: a transaction id is 36 bytes of
    # the path hyper parses and checks (~600 instructions a request). Until
    # 2026-11-30 the control was asked `/x/status`; CONTROL_SHORT_PATH=1
    # asks that again, to compare with figures from before.
    local url=$BASE/api/payments/$id/status
    [ -z "${CONTROL_SHORT_PATH:-}" ] || url=$BASE/api/payments/x/status
  else
    start_server "$OUT/$label-$run.out" "${binary[$label]}" --port 0
    local body id
    body=$(curl -sf -H 'content-type: application/json' "$BASE/api/payments/initiate" -d "$INITIATE_BODY") \
      || die "$label did not answer the initiate"
    id=$(echo "$body" | json_field transactionId)
    [ -n "$id" ] || die "$label answered the initiate without an id: $body"
    local url=$BASE/api/payments/$id/status
    install_rules "$label"
  fi
  if [ "$PATH_KIND" = get ]; then
    wrk_once "$label" "$url" "$WRK/get.lua" "$LOG.$run" >/dev/null
  else
    WRK_TAG="$label-$run-$$" wrk_once "$label" "$BASE" "$WRK/initiate.lua" "$LOG.$run" >/dev/null
  fi
  stop_server
  # Only answers the path meant to give count: a 404 measures something else.
  local bad
  bad=$(field "$LOG.$run" "$label" non2xx)
  [ "$bad" = 0 ] || die "$label answered $bad requests of round $run with another status than 2xx"
}

all=(control "${labels[@]}")
n=${#all[@]}
for run in $(seq 1 "$RUNS"); do
  line="round $run:"
  for k in $(seq 0 $((n - 1))); do
    label=${all[$(((k + run - 1) % n))]}
    serve "$label" "$run"
  done
  for label in "${all[@]}"; do
    rps=$(field "$LOG.$run" "$label" rps)
    echo "$label run=$run $(grep "^$label " "$LOG.$run" | cut -d' ' -f2-)" >>"$LOG"
    line="$line $label $(printf %.0f "$rps")"
  done
  echo "$line"
done

# spread LABEL OVER: LABEL's req/s over OVER's, round by round, as
# "median (lowest–highest); geometric mean, 95 % interval".
spread() {
  local r
  for r in $(seq 1 "$RUNS"); do
    awk -v a="$(field "$LOG.$r" "$1" rps)" -v b="$(field "$LOG.$r" "$2" rps)" 'BEGIN { printf "%.4f\n", a / b }'
  done >"$OUT/ratios.$1.$2"
  printf "%.2f (%.2f–%.2f); %s" "$(median <"$OUT/ratios.$1.$2")" \
    "$(sort -g "$OUT/ratios.$1.$2" | head -1)" "$(sort -g "$OUT/ratios.$1.$2" | tail -1)" \
    "$(awk '{ l[NR] = log($1); s += l[NR] } END {
      m = s / NR; v = 0; for (i = 1; i <= NR; i++) v += (l[i] - m) ^ 2
      e = NR > 1 ? 1.96 * sqrt(v / (NR - 1) / NR) : 0
      printf "%.2f, %.2f–%.2f", exp(m), exp(m - e), exp(m + e) }' "$OUT/ratios.$1.$2")"
}
first=${labels[0]}
{
  echo
  echo "| build | req/s, median of $RUNS | / control, same round: median (range); geometric mean, 95 % | / $first, same round: the same |"
  echo "|---|---|---|---|"
  echo "| control | $(printf %.0f "$(med "$LOG" control rps)") | — | — |"
  for label in "${labels[@]}"; do
    against_first="—"
    [ "$label" = "$first" ] || against_first=$(spread "$label" "$first")
    echo "| $label | $(printf %.0f "$(med "$LOG" "$label" rps)") | $(spread "$label" control) | $against_first |"
  done
  echo
  echo "bench-compare.sh took $(( $(date +%s) - started )) s; raw output in $OUT"
} | tee "$OUT/summary.md"
