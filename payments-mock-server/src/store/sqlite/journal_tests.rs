//! The journal across a gap in its numbers and while the file refuses its
//! reservation: a restart after a `kill -9` numbers on past the file's
//! reservation ([`JOURNAL_AHEAD`]), and the file and the reads still find
//! every entry kept; a full disk refuses the reservation a read waits for,
//! and the read answers anyway.

use super::writer::tests::logged;
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

/// Makes the file refuse (or take again) every write of the root's
/// journal numbering, `journal_last_seq`, as a full disk refuses it.
/// SQLite's `max_page_count` cannot stand in here: a reservation rewrites
/// one row in place, which a file at its page limit still takes (a full
/// disk does not: the write-ahead log cannot grow).
fn refuse_reservations(path: &Path, refuse: bool) {
    let sql = if refuse {
        "CREATE TRIGGER full_insert BEFORE INSERT ON mock_settings \
           WHEN NEW.key = 'journal_last_seq' \
           BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END; \
         CREATE TRIGGER full_update BEFORE UPDATE ON mock_settings \
           WHEN NEW.key = 'journal_last_seq' \
           BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;"
    } else {
        "DROP TRIGGER full_insert; DROP TRIGGER full_update;"
    };
    beside(path).execute_batch(sql).expect("the triggers");
}

/// On a full disk a journal read (`GET /_mock/requests`, the console's
/// journal) whose reservation failed answered 503, though its entries are
/// in memory and the journal is what an operator reads then. It answers
/// with them, and the log says so once; a reservation that succeeds
/// again makes the next failure said again.
#[test]
fn a_journal_read_answers_while_its_reservation_fails() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("journal.db");
    let store = SqliteStore::open(&path, Durability::Process, "test").expect("opens");
    let runtime = runtime();
    let reads = |n: u64| {
        logged(|| {
            runtime.block_on(async {
                for _ in 0..2 {
                    let shown = store.requests_since(0, 100).await.expect("answered");
                    assert_eq!(shown.last().map(|e| e.seq), Some(n));
                    let shown = store.requests_after(n - 1, 100).await.expect("answered");
                    assert_eq!(shown.first().map(|e| e.seq), Some(n));
                    let newest = store.request(n).await.expect("answered");
                    assert_eq!(newest.map(|e| e.seq), Some(n));
                    let stats = store.journal_stats().await.expect("answered");
                    assert_eq!(stats.last_seq, n);
                }
            });
        })
    };
    let said = |log: &str| {
        log.matches("could not reserve the journal's numbers")
            .count()
    };

    refuse_reservations(&path, true);
    for i in 1..=3 {
        store.record_request(capture(&format!("/api/{i}")));
    }
    let log = reads(3);
    assert_eq!(said(&log), 1, "{log}");
    assert!(log.contains("database or disk is full"), "{log}");
    assert_eq!(store.shared.journal_reserved.load(Ordering::SeqCst), 0);

    refuse_reservations(&path, false);
    store.record_request(capture("/api/4"));
    let log = reads(4);
    assert_eq!(said(&log), 0, "{log}");
    assert!(store.shared.journal_reserved.load(Ordering::SeqCst) >= 4);

    refuse_reservations(&path, true);
    for i in 5..=1_010 {
        store.record_request(capture(&format!("/api/{i}")));
    }
    let log = reads(1_010);
    assert_eq!(said(&log), 1, "{log}");
}
