#!/usr/bin/env bash
# The black-box examples in other languages (issue 42): examples/python,
# Python's standard library alone, against the mock's binary over HTTP.
# Each test works in a sandbox of its own (POST /_mock/sandboxes), so they
# run at once (examples/python/run_parallel.py); the exit status is
# non-zero when a test fails or leaves its sandbox behind.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --quiet --locked -p payments-mock-server-cli
target="${CARGO_TARGET_DIR:-target}"
binary="$(cd "$target/debug" && pwd)/payments-mock-server"
out="$(mktemp -d)"
mock=
cleanup() {
    if [ -n "$mock" ]; then
        kill "$mock" 2>/dev/null || true
        wait "$mock" 2>/dev/null || true
    fi
    rm -rf "$out"
}
trap cleanup EXIT
"$binary" --host 127.0.0.1 --port 0 --fault-seed 42 >"$out/banner" 2>"$out/log" &
mock=$!
# The banner is printed once the port is bound; stop waiting if the mock exits.
for _ in $(seq 1 300); do
    grep -q '^listening on ' "$out/banner" && break
    kill -0 "$mock" 2>/dev/null || break
    sleep 0.1
done
base="$(sed -n 's/^listening on //p' "$out/banner")"
if [ -z "$base" ]; then
    echo "python-examples.sh: the mock did not start" >&2
    cat "$out/log" >&2
    exit 1
fi
echo "python-examples.sh: $(python3 --version) against $base"
# No __pycache__ in the tree; MOCK_BINARY lets a test start a mock of its own
# (the --max-sandboxes test).
if ! PYTHONDONTWRITEBYTECODE=1 MOCK_BASE_URL="$base" MOCK_BINARY="$binary" \
    python3 examples/python/run_parallel.py; then
    echo "python-examples.sh: failed; the mock's last log lines:" >&2
    tail -n 40 "$out/log" >&2
    exit 1
fi
