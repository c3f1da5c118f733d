-- Shared by every wrk script of scripts/load.sh and scripts/bench-scale.sh:
-- one machine-readable line at the end of a run (latencies in microseconds).
-- wrk's own --latency table is printed as well; this line is what the
-- scripts parse.
function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d seconds=%.3f rps=%.1f p50_us=%d p90_us=%d p99_us=%d max_us=%d non2xx=%d socket_errors=%d\n",
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.status, e.connect + e.read + e.write + e.timeout))
end
