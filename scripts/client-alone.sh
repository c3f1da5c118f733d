#!/usr/bin/env bash
# payments-client in an application of its own (scripts/client-alone/),
# outside the workspace: Cargo unifies features per build, so only there
# does serde_json lack `arbitrary_precision`, as in a merchant's
# application. Checks that the client does not turn the feature on (it
# would change the application's own serde types) and still reads and
# writes amounts exactly without it. Then scripts/client-reqwest-defaults/:
# an application whose own reqwest has its default features (native-tls
# on); the client must still speak rustls, whose errors it knows. Both start
# from the workspace's lock file, so the versions are the tested ones; the
# first fetches nothing, the second only what reqwest's defaults add.
set -euo pipefail
cd "$(dirname "$0")/.."
app=scripts/client-alone
target=${CARGO_TARGET_DIR:-target}/client-alone
cp Cargo.lock "$app/Cargo.lock"
trap 'rm -f "$app/Cargo.lock"' EXIT
if cargo tree --offline --manifest-path "$app/Cargo.toml" -e normal,features -i serde_json \
    | grep -q 'feature "arbitrary_precision"'; then
  echo "payments-client turns on serde_json's arbitrary_precision for the application" >&2
  exit 1
fi
CARGO_TARGET_DIR="$target" cargo run --offline --quiet --manifest-path "$app/Cargo.toml"

defaults=scripts/client-reqwest-defaults
cp Cargo.lock "$defaults/Cargo.lock"
trap 'rm -f "$app/Cargo.lock" "$defaults/Cargo.lock"' EXIT
# Not offline: reqwest's default features need crates the workspace never
# uses (encoding_rs, for `charset`), so they are not in its lock file and
# may not be in a fresh machine's cache (CI on a new machine stopped here:
# "no matching package named `encoding_rs` found"). Cargo adds them to
# this copy of the lock; every crate already locked keeps its version.
CARGO_TARGET_DIR="$target" cargo test --quiet --manifest-path "$defaults/Cargo.toml"
