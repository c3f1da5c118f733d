# shellcheck shell=bash
# Shared by scripts/load.sh and scripts/bench-*.sh (issue #7, BENCHMARKS.md).
# Source it; it defines paths, the machine header, server start/stop on a
# pinned core, and one pinned wrk run with its parsed RESULT line.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
CONNS=${LOAD_CONNECTIONS:-50}
DURATION=${LOAD_DURATION:-10}
RUNS=${LOAD_RUNS:-3}
# The request log stays on; it goes here (a file keeps it for reading).
MOCK_LOG=${MOCK_LOG:-/dev/null}
CLK_TCK=$(getconf CLK_TCK)
SERVER_PID=""
BASE=""

die() { echo "error: $*" >&2; exit 1; }

sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

need_wrk() {
  command -v wrk >/dev/null 2>&1 && return 0
  echo "installing wrk" >&2
  sudo_if_needed apt-get install -y wrk >/dev/null 2>&1 \
    || { sudo_if_needed apt-get update >/dev/null && sudo_if_needed apt-get install -y wrk >/dev/null; } \
    || die "cannot install wrk"
}

machine_header() {
  echo "# $(basename "$0") $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# cores: $(nproc); cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
  echo "# load: $(cut -d' ' -f1-3 /proc/loadavg); commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
}

# start_server STDOUT_FILE CMD...: runs CMD on SERVER_CPU with stderr to
# MOCK_LOG, waits (up to 120 s, for a pre-load) for its
# "listening on http://..." line; sets SERVER_PID and BASE.
start_server() {
  local out=$1
  shift
  : >"$out"
  taskset -c "$SERVER_CPU" "$@" >"$out" 2>>"$MOCK_LOG" &
  SERVER_PID=$!
  local i
  for i in $(seq 1 2400); do
    BASE=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$out")
    [ -n "$BASE" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || die "server exited: $*"
    sleep 0.05
  done
  die "no banner from: $*"
}

stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}
trap stop_server EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# wrk_once LABEL URL SCRIPT LOGFILE: one run of wrk pinned to CLIENT_CPU
# (one thread, CONNS keep-alive connections, DURATION seconds, --latency);
# appends "LABEL <RESULT fields> server_cpu=N" to LOGFILE and prints it.
wrk_once() {
  local label=$1 url=$2 script=$3 log=$4
  local raw="$log.$label.$(date +%s%N).txt"
  local t0 t1
  t0=$(cpu_ticks "$SERVER_PID")
  (cd "$ROOT" && taskset -c "$CLIENT_CPU" timeout $((DURATION + 60)) \
    wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -s "$script" "$url") >"$raw" \
    || die "wrk failed for $label (see $raw)"
  t1=$(cpu_ticks "$SERVER_PID")
  local result cpu
  result=$(sed -n 's/^RESULT //p' "$raw")
  [ -n "$result" ] || die "no RESULT line in $raw"
  cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$CLK_TCK" -v d="$DURATION" 'BEGIN { printf "%.0f", (b - a) * 100 / hz / d }')
  echo "$label $result server_cpu=$cpu" | tee -a "$log"
}

# field LOGFILE LABEL KEY: the values of KEY on LABEL's lines, one a line.
field() { awk -v l="$2" -v k="$3" '$1 == l { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$1"; }

# median: of numbers on stdin (mean of the two middle ones for an even count).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit } if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# med LOGFILE LABEL KEY: median of KEY over LABEL's runs.
med() { field "$1" "$2" "$3" | median; }
