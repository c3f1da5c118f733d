#!/usr/bin/env bash
# Soak test of the mock server (issue #8, item 6): mixed load for DURATION
# seconds (default 600), RSS and stored transactions sampled every 10 s.
# Passes when no request failed (wrk: no socket errors, no non-2xx answers;
# mock log: no 5xx) and RSS grows only with stored transactions (no growth
# beyond the per-transaction cost while the count is flat, and a bounded
# per-transaction slope).
#
# Usage: scripts/soak.sh [DURATION_SECONDS] [CONNECTIONS]
# Loopback only; the load stops by itself after DURATION.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-600}
connections=${2:-8}
out=${SOAK_OUT:-target/soak}
mkdir -p "$out"

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
command -v curl >/dev/null || { apt-get update -qq && apt-get install -y -qq curl; }

cargo build --release --locked -q -p payments-mock-server-cli
bin=${CARGO_TARGET_DIR:-target}/release/payments-mock-server

# --latency 2 keeps the store growing at a pace this machine's memory
# holds for ten minutes (~2,000 initiates/s); it is a delay, not a failure.
"$bin" --port 0 --log-format json --latency 2 >"$out/banner" 2>"$out/mock.log" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$out/banner" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$out/banner")
echo "mock at $url (pid $pid), soaking for ${duration}s with $connections connections"

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
count() { curl -s "$url/_mock/health" | sed -n 's/.*"transactions":\([0-9]*\).*/\1/p'; }

echo "seconds,rss_kib,transactions" >"$out/samples.csv"
echo "0,$(rss_kib),$(count)" >>"$out/samples.csv"
WRK_TAG="soak$$" wrk -t 2 -c "$connections" -d "${duration}s" --timeout 5s \
  -s scripts/soak.lua "$url" >"$out/wrk.txt" 2>&1 &
wrk_pid=$!
elapsed=0
while kill -0 $wrk_pid 2>/dev/null; do
  sleep 10
  elapsed=$((elapsed + 10))
  echo "$elapsed,$(rss_kib),$(count)" >>"$out/samples.csv"
done
wait $wrk_pid || true
# Idle after the load: memory must not grow while nothing is stored.
for extra in 10 20 30; do
  sleep 10
  echo "$((elapsed + extra)),$(rss_kib),$(count)" >>"$out/samples.csv"
done

cat "$out/wrk.txt"
python3 - "$out" <<'PY'
import csv, json, re, sys
out = sys.argv[1]
rows = [(int(r["seconds"]), int(r["rss_kib"]), int(r["transactions"] or 0))
        for r in csv.DictReader(open(f"{out}/samples.csv"))]
wrk = open(f"{out}/wrk.txt").read()
socket_errors = re.search(r"Socket errors:.*", wrk)
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", wrk)
server_errors = sum(1 for line in open(f"{out}/mock.log")
                    if '"status":5' in line)
base_t, base_rss = rows[0][2], rows[0][1]
last = rows[-1]
per_tx = (last[1] - base_rss) * 1024 / max(1, last[2] - base_t)
# Growth while the count stood still (the idle tail): memory must be flat.
idle = [r for r in rows if r[2] == last[2]]
idle_growth_kib = max(r[1] for r in idle) - min(r[1] for r in idle)
print(f"samples: {len(rows)}; transactions {base_t} -> {last[2]}; "
      f"RSS {base_rss} KiB -> {last[1]} KiB; {per_tx:.0f} bytes per transaction")
print(f"idle tail growth: {idle_growth_kib} KiB; wrk non-2xx: "
      f"{non2xx.group(1) if non2xx else 0}; wrk {socket_errors.group(0) if socket_errors else 'Socket errors: none'}; "
      f"mock 5xx: {server_errors}")
ok = (not non2xx) and (not socket_errors) and server_errors == 0 and idle_growth_kib <= 1024 and per_tx <= 4096
print("SOAK PASS" if ok else "SOAK FAIL")
sys.exit(0 if ok else 1)
PY
