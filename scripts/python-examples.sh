#!/usr/bin/env bash
# The black-box examples in other languages (issue 42): examples/python,
# Python's standard library alone, against the mock's binary over HTTP.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --quiet --locked -p payments-mock-server-cli
target="${CARGO_TARGET_DIR:-target}"
out="$(mktemp -d)"
trap 'kill "$mock" 2>/dev/null || true; wait "$mock" 2>/dev/null || true; rm -rf "$out"' EXIT
"$target/debug/payments-mock-server" --port 0 --fault-seed 42 >"$out/banner" 2>"$out/log" &
mock=$!
for _ in $(seq 1 100); do
    [ -s "$out/banner" ] && break
    sleep 0.1
done
base="$(sed -n 's/^listening on //p' "$out/banner")"
if [ -z "$base" ]; then
    echo "python-examples.sh: the mock did not start" >&2
    cat "$out/log" >&2
    exit 1
fi
echo "python-examples.sh: $(python3 --version) against $base"
MOCK_BASE_URL="$base" python3 -m unittest discover -s examples/python -v
