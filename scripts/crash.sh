#!/usr/bin/env bash
# Issue 23: kill -9 at random moments under concurrent load, then a restart
# on the same store, ROUNDS times per store (SQLite with durability process
# and power, PostgreSQL); every answered change must be there exactly as
# answered. The same test CI runs with 3 rounds
# (payments-mock-server-cli/tests/processes/crash.rs), here with 100.
#
#   scripts/crash.sh [ROUNDS]      # default 100
#
# PostgreSQL: PAYMENTS_TEST_POSTGRES_URL when set, else a throwaway cluster
# of scripts/postgres.sh for the run. Prints one line per store: rounds,
# operations answered, answered changes lost (0 or the test fails).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-100}
if [ -z "${PAYMENTS_TEST_POSTGRES_URL:-}" ]; then
  bash scripts/postgres.sh install
  PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/payments-crash-pg.XXXXXX")
  trap 'bash scripts/postgres.sh stop "$PG_DIR"; rm -rf "$PG_DIR"' EXIT
  PAYMENTS_TEST_POSTGRES_URL=$(bash scripts/postgres.sh start "$PG_DIR")
  export PAYMENTS_TEST_POSTGRES_URL
fi
echo "# crash.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), $ROUNDS rounds per store, commit $(git rev-parse --short HEAD)"
PAYMENTS_CRASH_ROUNDS=$ROUNDS CI=true cargo test --quiet -p payments-mock-server-cli --test processes crash:: \
  -- --test-threads 1 --nocapture 2>&1 | grep -E -A12 '^crash |test result|panicked|lost'
