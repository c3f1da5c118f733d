//! The memory store's reset is one step for the requests racing it: no
//! request's store work lands between its parts, and the journal forgets
//! (its fence) inside it, as the SQLite writer's one reset job does.

use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use super::{MemoryStore, Store};
use crate::domain::catalog::InitialState;
use crate::domain::journal::{Capture, Fence};
use crate::store::test_support::fields;

/// Looks at the store at the moment its journal forgets (a reset's fence):
/// whether a request's store work could run then, and the clock's offset.
#[derive(Debug, Default)]
struct Probe {
    store: OnceLock<Weak<MemoryStore>>,
    seen: Mutex<Vec<(bool, i64)>>,
}

impl Fence for Probe {
    fn fenced(&self) {
        let Some(store) = self.store.get().and_then(Weak::upgrade) else {
            return;
        };
        // A create or a confirm takes the write lock: can one run now?
        let open = store.inner.try_write().is_ok();
        let offset = store.clock.offset_nanos();
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((open, offset));
    }
}

fn capture(path: &str) -> Capture {
    Capture::new(
        &http::Method::POST,
        &path.parse().expect("a URI"),
        &http::HeaderMap::new(),
        "r",
        chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
    )
}

/// When a reset's journal forgets, the transactions' lock is held (no
/// request's store work can run until the reset is whole) and the clock
/// is back already: a create cannot land in the emptied store with the old
/// clock, nor have its entry forgotten after it was made.
#[test]
fn no_store_work_runs_between_the_parts_of_a_reset() {
    let store = Arc::new(MemoryStore::new("test"));
    let probe = Arc::new(Probe::default());
    probe.store.set(Arc::downgrade(&store)).expect("set once");
    assert!(store.journal().fence_with(probe.clone()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let now = store.now().await.expect("now");
        store
            .create(
                fields("BEFORE"),
                InitialState::Initiated,
                Duration::from_secs(60),
            )
            .await
            .expect("answers")
            .expect("created");
        store.record_request(capture("/api/before"));
        store
            .advance_clock(Duration::from_secs(86_400))
            .await
            .expect("answers")
            .expect("room");
        store.reset().await.expect("resets");
        store.erase().await.expect("erases");
        let seen = probe
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        assert_eq!(
            seen,
            [(false, 0), (false, 0)],
            "(open, offset) at each fence"
        );
        assert_eq!(store.count().await.expect("count"), 0);
        assert_eq!(store.journal_stats().await.expect("stats").len, 0);
        assert!(store.now().await.expect("now") - now < chrono::TimeDelta::hours(1));
    });
}
