//! A request counts in the coverage exactly when its journal entry
//! outlives a reset: what it tallied is counted as its entry is admitted,
//! and a reset forgets both at one moment.

use axum::http::{HeaderMap, Method};
use chrono::{DateTime, Utc};
use payments_interface::{Endpoint, Status};

use super::{tally_of, tallying};

/// `request`, run with a tally; and what it counted.
async fn tallied<F: Future>(request: F) -> (F::Output, super::Tally) {
    let mut tallied = std::pin::pin!(tallying(request));
    let output = tallied.as_mut().await;
    (output, tally_of(tallied))
}
use crate::config::Config;
use crate::domain::journal::Capture;
use crate::domain::port::Store as _;
use crate::state::AppState;

fn capture(request_id: &str) -> Capture {
    Capture::new(
        &Method::POST,
        &"/api/payments/initiate".parse().expect("uri"),
        &HeaderMap::new(),
        request_id,
        DateTime::<Utc>::UNIX_EPOCH,
    )
}

/// What an initiate answered 200 counts: its answer, its transition and,
/// to have a fault cell too, a fault met.
async fn an_initiate(state: &AppState) -> super::Tally {
    let ((), mut tally) = tallied(async {
        state.coverage.transition(None, Status::Initiated);
        state.coverage.fault(Endpoint::Initiate, 4);
    })
    .await;
    tally.answered(Endpoint::Initiate, 200, None);
    tally
}

fn admit(state: &AppState, request_id: &str, tally: super::Tally) {
    let coverage = &state.coverage;
    state
        .store
        .record_admitted(capture(request_id), || coverage.admit(tally));
}

/// The journal's request ids and the coverage's three counts.
async fn seen(state: &AppState) -> (Vec<String>, [Option<u64>; 3]) {
    let journal = state.store.requests_since(0, 100).await.expect("read");
    let report = state.coverage();
    (
        journal.into_iter().map(|e| e.request_id).collect(),
        [
            report.count("initiate 200"),
            report.count("transition created -> INITIATED"),
            report.count("initiate delay"),
        ],
    )
}

async fn counts_exactly_what_outlives_a_reset(state: AppState) {
    // Admitted before the reset: counted, then forgotten with its entry.
    let tally = an_initiate(&state).await;
    assert_eq!(seen(&state).await.1, [Some(0); 3], "nothing counted yet");
    admit(&state, "before", tally);
    assert_eq!(
        seen(&state).await,
        (vec!["before".to_owned()], [Some(1); 3])
    );
    state.reset().await.expect("reset");
    assert_eq!(seen(&state).await, (vec![], [Some(0); 3]));

    // Met before the reset, admitted after it: its entry stays, and so
    // do its counts.
    let tally = an_initiate(&state).await;
    state.reset().await.expect("reset");
    admit(&state, "across", tally);
    assert_eq!(
        seen(&state).await,
        (vec!["across".to_owned()], [Some(1); 3])
    );
}

#[tokio::test]
async fn memory_counts_exactly_what_outlives_a_reset() {
    counts_exactly_what_outlives_a_reset(AppState::new(Config::default())).await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_counts_exactly_what_outlives_a_reset() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = Config {
        store: crate::store::StoreSpec::Sqlite(dir.path().join("mock.db")),
        ..Config::default()
    };
    let state = AppState::open(config).await.expect("opened");
    counts_exactly_what_outlives_a_reset(state).await;
}

/// The SQLite store forgets the entries up to its reset's floor after the
/// reset commits: one admitted between the floor (the fence) and then is
/// kept and counted, one admitted before is neither.
#[cfg(feature = "sqlite")]
#[test]
fn entries_after_the_floor_are_kept_and_counted_those_before_neither() {
    use std::sync::Arc;

    let journal = crate::store::journal::Journal::new("test");
    let counter = Arc::new(super::Counter::new());
    assert!(journal.fence_with(counter.clone()));
    let tally = |status| {
        let mut tally = super::Tally::default();
        tally.answered(Endpoint::Confirm, status, None);
        tally
    };
    let before = tally(200);
    journal.record_with(capture("before"), || counter.admit(before));
    let floor = journal.fence_floor();
    let after = tally(201);
    journal.record_with(capture("after"), || counter.admit(after));
    journal.clear_through(floor);
    let ids: Vec<String> = journal
        .since(0, 10)
        .into_iter()
        .map(|e| e.request_id)
        .collect();
    assert_eq!(ids, ["after"]);
    let report = counter.report("test");
    assert_eq!(report.count("confirm 200"), Some(0));
    assert_eq!(
        report.matrix().outside(),
        [("confirm 201".to_owned(), 1)].as_slice()
    );
}

#[test]
fn a_tally_holds_six_cells_inline_and_more_aside() {
    assert!(
        size_of::<super::Tally>() <= 24,
        "{}",
        size_of::<super::Tally>()
    );
    let counter = super::Counter::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let ((), tally) = runtime.block_on(tallied(async {
        for _ in 0..8 {
            counter.transition(None, Status::Pending);
        }
    }));
    assert!(tally.rest.is_some());
    assert_eq!(
        counter.report("r").count("transition created -> PENDING"),
        Some(0)
    );
    counter.admit(tally);
    assert_eq!(
        counter.report("r").count("transition created -> PENDING"),
        Some(8)
    );
    // Outside a tallied request: counted at once.
    counter.transition(None, Status::Pending);
    assert_eq!(
        counter.report("r").count("transition created -> PENDING"),
        Some(9)
    );
}
