#!/usr/bin/env bash
# schemathesis against the OpenAPI document the mock serves (issue 19):
# a keyed payments-mock-server binary on a free loopback port, every check,
# every phase, a fixed seed (scripts/schemathesis/schemathesis.toml and
# hooks.py). Fails on any failure or error.
#
#   scripts/schemathesis.sh              # the run CI does
#   ST_ARGS="--max-examples 5" scripts/schemathesis.sh   # quicker, locally
#
# Installs the pinned schemathesis from PyPI when missing. The injected-fault
# header is pinned to `delay=0` for the run: faults are 5xx answers and
# dropped connections by design (their grammar and behaviour have their own
# tests in payments-mock-server-cli/tests/).
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS="schemathesis==4.32.5"
KEY="sk_schemathesis"

if ! st --version 2>/dev/null | grep -q "${SCHEMATHESIS#*==}"; then
    echo "schemathesis.sh: installing $SCHEMATHESIS" >&2
    python3 -m pip install --quiet --disable-pip-version-check "$SCHEMATHESIS"
    hash -r
fi

cargo build --quiet --locked -p payments-mock-server-cli
target="${CARGO_TARGET_DIR:-target}"
out="$(mktemp -d)"
trap 'kill "$mock" 2>/dev/null || true; wait "$mock" 2>/dev/null || true; rm -rf "$out"' EXIT
"$target/debug/payments-mock-server" --port 0 --api-key "$KEY" >"$out/banner" 2>"$out/log" &
mock=$!
for _ in $(seq 1 100); do
    [ -s "$out/banner" ] && break
    sleep 0.1
done
base="$(sed -n 's/^listening on //p' "$out/banner")"
if [ -z "$base" ]; then
    echo "schemathesis.sh: the mock did not start" >&2
    cat "$out/log" >&2
    exit 1
fi
echo "schemathesis.sh: $(st --version) against $base/openapi.json"

export MOCK_BASE_URL="$base" MOCK_API_KEY="$KEY"
export SCHEMATHESIS_HOOKS=hooks
export PYTHONPATH="$PWD/scripts/schemathesis${PYTHONPATH:+:$PYTHONPATH}"
# shellcheck disable=SC2086 # ST_ARGS is a list of flags.
st --config-file scripts/schemathesis/schemathesis.toml run "$base/openapi.json" \
    --checks all \
    --phases examples,coverage,fuzzing,stateful \
    --header "Authorization: Bearer $KEY" \
    --header "X-Mock-Fault: delay=0" \
    --request-timeout 10 \
    --generation-database none \
    --no-color \
    ${ST_ARGS:-}
