//! A SQLite journal entry whose body the journal cut (its newest bodies
//! are kept whole up to 512 KiB in all, an older one keeps its first KiB)
//! keeps its whole length (`bodyLength`) across a reopen, and a store
//! written before the column (schema V2, and the first schema's fixture)
//! opens, migrates and reads its entries whole.

use std::path::Path;

use payments_mock_server::domain::journal::{BODY_CUT, JournalEntry};
use payments_mock_server::domain::port::Store as _;
use payments_mock_server::store::SqliteStore;
use payments_mock_server::{Durability, Error};

use crate::backends::{self, REPLICA};
use crate::kept::capture;

const BIG: usize = 64 * 1024;

fn open(path: &Path) -> Result<SqliteStore, Error> {
    SqliteStore::open(path, Durability::Process, REPLICA)
}

/// Ten bodies of 64 KiB: the newest eight kept whole (512 KiB), the two
/// oldest cut to their first KiB.
fn record_big(store: &SqliteStore) {
    let body = "é".repeat(BIG / 2);
    for n in 0..10 {
        let mut request = capture(&format!("/api/big-{n}"));
        request.set_body(body.as_bytes());
        store.record_request(request);
    }
}

async fn all(store: &SqliteStore) -> Vec<JournalEntry> {
    store.requests_since(0, 100).await.expect("answers")
}

fn lengths(entries: &[JournalEntry]) -> Vec<Option<usize>> {
    entries.iter().map(|e| e.body_length).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_body_keeps_its_length_across_a_reopen() {
    let (_dir, path) = backends::sqlite_path();
    let store = open(&path).expect("a new store");
    record_big(&store);
    let before = all(&store).await;
    let mut expected = vec![Some(BIG); 2];
    expected.extend([None; 8]);
    assert_eq!(lengths(&before), expected, "cut in memory");
    assert_eq!(before[0].body.len(), BODY_CUT);
    assert_eq!(before[9].body.len(), BIG);
    drop(store);
    let again = open(&path).expect("reopens");
    let after = all(&again).await;
    assert_eq!(lengths(&after), expected, "still cut, with its length");
    assert_eq!(after, before, "every entry as it was");
}

/// A store written by schema V2 (a new store with the `body_length`
/// column taken out and its migration unrecorded: what V2 wrote) opens,
/// migrates, reads its entries whole, and keeps a cut body's length.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_written_before_the_column_migrates_and_keeps_lengths() {
    let (_dir, path) = backends::sqlite_path();
    let store = open(&path).expect("a new store");
    store.record_request(capture("/api/before"));
    let before = all(&store).await;
    drop(store);
    {
        let conn = rusqlite::Connection::open(&path).expect("opens");
        conn.execute_batch(
            "ALTER TABLE mock_journal DROP COLUMN body_length; \
             ALTER TABLE mock_journal DROP COLUMN caller; \
             DROP INDEX mock_transactions_sandbox_id; \
             DELETE FROM mock_schema_history WHERE version >= 3;",
        )
        .expect("back to V2");
    }
    let store = open(&path).expect("opens and migrates");
    assert_eq!(all(&store).await, before, "read whole");
    record_big(&store);
    drop(store);
    let again = open(&path).expect("reopens");
    let entries = all(&again).await;
    assert_eq!(entries[0], before[0]);
    let mut expected = vec![None, Some(BIG), Some(BIG)];
    expected.extend([None; 8]);
    assert_eq!(lengths(&entries), expected);
}

/// The first schema's fixture: its entry reads whole after V3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_schemas_entry_reads_whole() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("v1.db");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store-v1.db");
    std::fs::copy(fixture, &path).expect("the fixture");
    let store = open(&path).expect("opens and migrates");
    let entries = all(&store).await;
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].body_length, None);
    assert_eq!(entries[0].body, "{\"a\":\"\\u00e9\"}");
}
