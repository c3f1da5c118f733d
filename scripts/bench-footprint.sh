#!/usr/bin/env bash
# What a merchant compiles when they add payments-client (issue 14):
# the crates of its normal dependency tree per feature set, and a cold
# debug build of it alone (fresh target directory, dependencies already
# downloaded), as `cargo build` in their application would do.
#
#   scripts/bench-footprint.sh [RUNS]     # RUNS cold builds (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-2}"

crates() {
    cargo tree -p payments-client -e normal --prefix none --locked "$@" 2>/dev/null |
        sed 's/ (\*)//; s/ (proc-macro)//' | sort -u | wc -l
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), commit $(git rev-parse --short HEAD)"
echo
echo "| features | crates in the normal tree (the client included) |"
echo "|---|---|"
echo "| default (\`rustls\`) | $(crates) |"
echo "| \`--no-default-features\` (plain HTTP) | $(crates --no-default-features) |"
echo "| default + \`http2\` | $(crates --features http2) |"
echo "| \`native-tls\` instead of \`rustls\` | $(crates --no-default-features --features native-tls) |"
echo

cargo fetch --locked -q
target="$(mktemp -d)"
trap 'rm -rf "$target"' EXIT
echo "| cold \`cargo build -p payments-client\` (debug, default features) | seconds |"
echo "|---|---|"
for run in $(seq 1 "$runs"); do
    rm -rf "$target"/*
    start=$(date +%s.%N)
    CARGO_TARGET_DIR="$target" cargo build -q -p payments-client --locked
    end=$(date +%s.%N)
    printf '| run %s | %.1f |\n' "$run" "$(echo "$end - $start" | bc)"
done
