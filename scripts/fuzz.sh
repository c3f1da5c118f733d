#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a while (issue #8, item 2).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]    (default 180 s, all targets)
#
# libFuzzer's instrumentation and the sanitizers are unstable rustc flags
# (-Zsanitizer): a nightly toolchain is used when one is installed, else
# the stable one with RUSTC_BOOTSTRAP=1, which lets it take them (set
# FUZZ_TOOLCHAIN=stable to choose that anyway). Installs cargo-fuzz when
# missing (`cargo install --locked cargo-fuzz`, a minute or two). Not part
# of .ci/run: fuzzing is open-ended and release-built. Crashes land in
# fuzz/artifacts/<target>/ and the corpus grows in fuzz/corpus/<target>/
# (both git-ignored).
set -euo pipefail

seconds="${1:-180}"
shift || true
cd "$(dirname "$0")/../fuzz"

toolchain="${FUZZ_TOOLCHAIN:-}"
if [ -z "$toolchain" ]; then
    if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
        toolchain=nightly
    else
        toolchain=stable
    fi
fi
if [ "$toolchain" != nightly ]; then
    echo "fuzz.sh: building with $toolchain and RUSTC_BOOTSTRAP=1 (no nightly toolchain, or FUZZ_TOOLCHAIN)" >&2
    export RUSTC_BOOTSTRAP=1
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz" >&2
    cargo install --locked cargo-fuzz
fi
# The fuzz crate is its own workspace: it starts from the workspace's
# lock file, so it is built with the versions the tests ran.
if [ ! -f Cargo.lock ]; then
    cp ../Cargo.lock Cargo.lock
fi

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo "+$toolchain" fuzz list)
fi

cargo "+$toolchain" fuzz build
status=0
for target in "${targets[@]}"; do
    echo "== $target: ${seconds}s"
    log="$(mktemp)"
    if cargo "+$toolchain" fuzz run "$target" -- -max_total_time="$seconds" -print_final_stats=1 2>"$log"; then
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
