//! One behavioural suite for every store (issue 23; the way tower-sessions
//! tests all its stores with one suite): each promise of the `Store` trait
//! is one function in `behaviour.rs`, run here against the memory store,
//! a SQLite file and a PostgreSQL database. PostgreSQL needs
//! `PAYMENTS_TEST_POSTGRES_URL` (`.ci/run` sets it); without it those tests
//! say loudly that they were skipped, and under `CI=true` they fail.

mod backends;
mod behaviour;
// A merchant's count: one count by the store, exact per merchant.
mod counts;
// GET /_mock/health with a merchant's key: one store operation.
mod health_count;
// Racing clock advances that only one fits: one moves the clock.
mod clock_room;
// The same over HTTP, on a server over each store.
mod clock_race_http;
// The console's clock page says days, not humantime's months.
mod clock_page;
mod kept;
/// Races between creates, confirms, resets and the clock.
mod races;
// Look-ups with text no transaction can hold (a NUL).
mod odd_text;
// The PostgreSQL journal's numbers (failed writes, uncommitted writes,
// resets, a first-version database), and its exactness across two replicas
// in one process (reads wait for the other's writes, resets fence them).
mod journal;
// A SQLite journal entry's cut body keeps its whole length across a
// reopen, and stores written before that column migrate.
mod journal_cut;
// Every store keeps the same bounded headers of a journal entry.
mod journal_headers;
// Whose view of the journal a request is in: the key that sent it, kept
// by every store (another merchant's key never writes into yours).
mod journal_callers;
// The OpenAPI document describes the journal's query and its redaction.
mod journal_query_doc;
// A PostgreSQL confirm that missed the row waits for the one that holds it.
mod pg_races;
// GET /metrics counts each server's own store operations.
mod metrics;
// Seeding (`--seed-from`): whole records placed as given, by every store.
mod seeded;
// In-process sandboxes on PostgreSQL: MockServer::create_sandbox shared
// by two embedded replicas.
mod sandboxes;
// Opening stores: what a database store keeps across a reopen, and every
// bad store of CONTRACT section 15 (files, schema, URLs, credentials).
mod opening;
// Stores damaged from outside: a SQLite file removed or replaced while
// serving, another program's database, a row the store cannot read.
mod damaged;
// A log written into memory (the damage tests read what was logged).
mod captured;
// A PostgreSQL database dropped and made again empty while serving.
mod pg_tables_gone;
// A SQLite file whose pages are overwritten while serving.
mod sqlite_damaged_pages;
// A SQLite write lock another program holds at start.
mod sqlite_write_lock;
// A SQLite store named by a FIFO or a device, or whose lock file is a link.
mod sqlite_not_files;

macro_rules! every_store {
    ($backend:ident) => {
        mod $backend {
            use super::{backends, behaviour, kept, seeded};

            macro_rules! promise {
                ($name:ident, shared) => {
                    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                    async fn $name() {
                        let Some(made) = backends::$backend().await else {
                            return;
                        };
                        behaviour::$name(made.store.clone()).await;
                    }
                };
                ($name:ident, kept_shared) => {
                    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                    async fn $name() {
                        let Some(made) = backends::$backend().await else {
                            return;
                        };
                        kept::$name(made.store.clone()).await;
                    }
                };
                ($name:ident, kept) => {
                    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                    async fn $name() {
                        let Some(made) = backends::$backend().await else {
                            return;
                        };
                        kept::$name(&*made.store).await;
                    }
                };
                ($name:ident, seeded) => {
                    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                    async fn $name() {
                        let Some(made) = backends::$backend().await else {
                            return;
                        };
                        seeded::$name(&*made.store).await;
                    }
                };
                ($name:ident) => {
                    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                    async fn $name() {
                        let Some(made) = backends::$backend().await else {
                            return;
                        };
                        behaviour::$name(&*made.store).await;
                    }
                };
            }

            promise!(create_keeps_every_field_and_refuses_a_taken_reference);
            promise!(racing_creates_of_one_reference_create_one, shared);
            promise!(creates_racing_a_reset_create_or_name_the_holder, shared);
            promise!(ids_follow_creation_times, shared);
            promise!(racing_confirms_move_once, shared);
            promise!(confirm_checks_expiry_and_keeps_the_confirmation);
            promise!(a_confirm_with_a_stale_now_is_refused_after_the_expiry);
            promise!(a_submit_with_a_stale_now_decides_nothing_after_the_window);
            promise!(a_late_submit_shows_the_status_at_the_stores_now);
            promise!(a_reference_with_a_nul_is_not_found);
            promise!(reads_by_id_and_reference_respect_the_scope);
            promise!(the_payer_decides_once, shared);
            promise!(reads_after_an_answer_see_it, shared);
            promise!(pages_run_both_ways_with_filters);
            promise!(counts_by_merchant_are_each_merchants_own);
            promise!(seed_places_whole_records_and_refuses_taken_ones, seeded);
            promise!(the_clock_moves_forward_and_resets, kept);
            promise!(the_journal_keeps_the_last_thousand, kept);
            promise!(
                the_journal_pages_after_a_position_as_the_whole_read_did,
                kept
            );
            promise!(
                the_journal_is_exact_pages_by_seq_and_a_reset_fences_it,
                kept_shared
            );
            promise!(reset_keeps_settings_and_erase_forgets_them, kept);
        }
    };
}

every_store!(memory);
every_store!(sqlite);
every_store!(postgres);
