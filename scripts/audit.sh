#!/usr/bin/env bash
# Checks Cargo.lock against the RustSec advisory database (issue #8, item 5).
#
#   scripts/audit.sh
#
# Installs cargo-audit when missing (cargo install --locked). The advisory
# database is a git repository on GitHub: where GitHub cannot be reached
# this script fails with exit code 3 and says so, rather than passing
# silently. That is also why .ci/run does not call it: CI must not depend on
# a network it may not have. Exit codes: 0 clean, 1 vulnerabilities or
# other audit failure, 3 advisory database unreachable.
set -uo pipefail

cd "$(dirname "$0")/.."

if ! command -v cargo-audit >/dev/null 2>&1; then
    echo "audit.sh: installing cargo-audit" >&2
    cargo install --locked cargo-audit || {
        echo "audit.sh: FAILED: cargo-audit could not be installed" >&2
        exit 1
    }
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
cargo audit --file Cargo.lock "$@" 2>&1 | tee "$log"
status="${PIPESTATUS[0]}"
if [ "$status" -ne 0 ] && grep -qiE "advisory database|fetch|clone|network|resolve|connect" "$log" \
    && ! grep -qE "^(error: )?[0-9]+ vulnerabilit(y|ies) found" "$log"; then
    echo >&2
    echo "audit.sh: FAILED: the RustSec advisory database (a git repository on GitHub) could not be fetched." >&2
    echo "audit.sh: Cargo.lock was NOT checked. Run this where GitHub is reachable." >&2
    exit 3
fi
exit "$status"
