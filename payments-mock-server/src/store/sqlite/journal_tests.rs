//! The journal across a gap in its numbers: a restart after a `kill -9`
//! numbers on past the file's reservation ([`JOURNAL_AHEAD`]), and the
//! file and the reads still find every entry kept.

use super::*;

fn capture(path: &str) -> Capture {
    Capture::new(
        &axum::http::Method::GET,
        &path.parse().expect("a path"),
        &axum::http::HeaderMap::new(),
        "rid",
        DateTime::<Utc>::UNIX_EPOCH,
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// A connection of the test's own to the store's file.
fn beside(path: &Path) -> Connection {
    let conn = Connection::open(path).expect("a connection");
    conn.busy_timeout(Duration::from_secs(30))
        .expect("a timeout");
    conn
}

/// The root's journal numbers the file holds, oldest first.
fn written(path: &Path) -> Vec<i64> {
    let conn = beside(path);
    let mut statement = conn
        .prepare("SELECT seq FROM mock_journal WHERE sandbox = x'' ORDER BY seq")
        .expect("prepare");
    statement
        .query_map([], |r| r.get(0))
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .expect("read")
}

/// A restart after a `kill -9` (here: the file's reservation written over
/// its exact end) numbers on past a gap: the first journal write after it
/// kept only the entries past the gap (trimmed by number, each older one
/// looked a thousand old), and the entry past the gap was not found by
/// its number (found by position).
#[test]
fn the_journal_keeps_its_entries_across_a_gap_in_the_numbers() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("journal.db");
    let open = || SqliteStore::open(&path, Durability::Process, "test").expect("opens");
    let store = open();
    for i in 1..=3 {
        store.record_request(capture(&format!("/api/before-{i}")));
    }
    drop(store);
    assert_eq!(written(&path), [1, 2, 3]);
    // What a `kill -9` after a reservation leaves.
    put_setting(&beside(&path), "journal_last_seq", "1003").expect("written");

    let store = open();
    store.record_request(capture("/api/after"));
    let runtime = runtime();
    let paths = |entries: Vec<JournalEntry>| -> Vec<(u64, String)> {
        entries.into_iter().map(|e| (e.seq, e.path)).collect()
    };
    let shown = runtime
        .block_on(store.requests_since(0, 100))
        .expect("read");
    let expected = [
        (1, "/api/before-1".to_owned()),
        (2, "/api/before-2".to_owned()),
        (3, "/api/before-3".to_owned()),
        (1004, "/api/after".to_owned()),
    ];
    assert_eq!(paths(shown), expected);
    for (seq, path) in &expected {
        let found = runtime.block_on(store.request(*seq)).expect("read");
        assert_eq!(found.map(|e| e.path).as_ref(), Some(path), "entry {seq}");
    }
    assert_eq!(runtime.block_on(store.request(4)).expect("read"), None);
    drop(store);
    assert_eq!(written(&path), [1, 2, 3, 1004]);

    let store = open();
    let shown = runtime
        .block_on(store.requests_since(0, 100))
        .expect("read");
    assert_eq!(paths(shown), expected);
}
