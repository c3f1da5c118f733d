//! The mock as processes on a store (issue 23): its store flags and bad
//! stores by exit code, `kill -9` under load, three replicas on one
//! PostgreSQL, and PostgreSQL going away and coming back. PostgreSQL comes
//! from `PAYMENTS_TEST_POSTGRES_URL` (and, for the outage, a cluster the
//! test starts itself with `scripts/postgres.sh`); without one those tests
//! say loudly that they were skipped, and under `CI=true` they fail.

#[path = "../../../payments-mock-server/tests/stores/backends.rs"]
mod backends;
mod mock;

// --store and friends, every bad store, settings kept by the store.
mod flags;
// kill -9 at random moments under load, then a restart: nothing answered lost.
mod crash;
// Three replica processes on one database behave as one service.
mod replicas;
// Their journal is exact: a read anywhere sees every request answered
// before it, a reset leaves nothing earlier, seq pages (issue 33).
mod journal;
// --fresh on PostgreSQL: refused under live replicas, numbering on.
mod fresh;
// The database gone while serving: 503 within 5 s, back without a restart.
mod outage;
// A SQLite file read-only at start, or removed while serving.
mod sqlite_damage;
// The log and shared memory beside a SQLite file: a refused start leaves
// none, and ones that cannot be written refuse the start.
mod sqlite_side_files;
// A SQLite store's journal: kept whole by a clean stop, its numbers never
// given out again after a kill -9.
mod sqlite_journal;
// Sandboxes on SQLite come back after a kill -9 and a restart (issue 42).
mod sandboxes;
// Sandboxes shared by replicas on PostgreSQL (issue 42).
mod shared_sandboxes;
// SIGTERM and SIGINT: a second signal while requests finish stops at once.
mod signals;
// Out of file descriptors: said once, paused between accepts, served through.
mod descriptors;
