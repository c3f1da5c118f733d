#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a while (issue #8, item 2).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]    (default 180 s, all targets)
#
# Needs a nightly toolchain (libFuzzer and the sanitizers are nightly-only)
# and cargo-fuzz; installs cargo-fuzz when missing. Not part of .ci/run:
# fuzzing is open-ended and release-built. Crashes land in
# fuzz/artifacts/<target>/ and the corpus grows in fuzz/corpus/<target>/
# (both git-ignored).
set -euo pipefail

seconds="${1:-180}"
shift || true
cd "$(dirname "$0")/../fuzz"

if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "fuzz.sh: no nightly toolchain; installing one (rustup toolchain install nightly)" >&2
    if ! rustup toolchain install nightly --profile minimal; then
        echo "fuzz.sh: FAILED: cargo-fuzz needs a nightly toolchain and none could be installed here." >&2
        echo "fuzz.sh: the proptest suites (cargo test --workspace) still cover the same decoders on stable." >&2
        exit 2
    fi
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz" >&2
    cargo install --locked cargo-fuzz
fi

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

cargo +nightly fuzz build
status=0
for target in "${targets[@]}"; do
    echo "== $target: ${seconds}s"
    log="$(mktemp)"
    if cargo +nightly fuzz run "$target" -- -max_total_time="$seconds" -print_final_stats=1 2>"$log"; then
        runs="$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')"
        echo "== $target: ok, ${runs:-?} runs in ${seconds}s"
    else
        status=1
        tail -n 40 "$log"
        echo "== $target: FAILED (see fuzz/artifacts/$target/)"
    fi
    rm -f "$log"
done
exit "$status"
