//! A SQLite file damaged while the mock serves (its pages overwritten):
//! not an outage that a retry outlasts. A read that meets the damage is a
//! lasting fault (500, as a row the store cannot read), the log says so
//! once, and health answers 503 naming the damage.

use std::io::{Seek as _, SeekFrom, Write as _};

use payments_mock_server::Durability;
use payments_mock_server::InitialState;
use payments_mock_server::domain::port::{Store, StoreErrorKind};
use payments_mock_server::store::SqliteStore;

use crate::backends::{self, REPLICA};
use crate::behaviour::{MERCHANT, MINUTE, new};
use crate::captured::Captured;

/// The reviewer's case: every read by reference answered 503 "database
/// disk image is malformed; retry later" (the CLI retried it three
/// times), health said 200 ok, and the store logged nothing.
#[tokio::test]
async fn a_damaged_sqlite_file_is_a_lasting_fault_that_health_names() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);
    let (_dir, path) = backends::sqlite_path();
    let store = SqliteStore::open(&path, Durability::Process, REPLICA).expect("a new store");
    for i in 0..300 {
        store
            .create(
                new(MERCHANT, &format!("REF-{i}")),
                InitialState::Initiated,
                MINUTE,
            )
            .await
            .expect("the store")
            .expect("created");
    }
    store.check().await.expect("healthy before");
    // Everything into the database file, then every page but the first
    // (the schema's) overwritten.
    let beside = rusqlite::Connection::open(&path).expect("a second connection");
    let page: i64 = beside
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .expect("the page size");
    let page = u64::try_from(page).expect("a page size");
    beside
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            r.get::<_, i64>(0)
        })
        .expect("checkpointed");
    drop(beside);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("the file");
    let length = file.metadata().expect("its length").len();
    file.seek(SeekFrom::Start(page))
        .expect("past the first page");
    let garbage = vec![0xA5_u8; usize::try_from(length - page).expect("small")];
    file.write_all(&garbage).expect("overwritten");
    file.sync_all().expect("synced");
    drop(file);

    for _ in 0..3 {
        let read = store
            .with_reference("REF-150", None, |r| r.id)
            .await
            .expect_err("the file is damaged");
        assert_eq!(read.kind(), StoreErrorKind::Unreadable, "{read}");
        let said = read.to_string();
        assert!(
            said.contains("damaged") && said.contains("malformed"),
            "{said}"
        );
    }
    let health = store.check().await.expect_err("health names the damage");
    assert_eq!(health.kind(), StoreErrorKind::Lost, "503: {health}");
    let said = health.to_string();
    assert!(
        said.contains("damaged") && said.contains("restart"),
        "{said}"
    );
    // Said once (fourteenth review, finding 6: "Restore it from a copy:
    // restore it from a copy (or move it away)").
    assert_eq!(
        said.to_lowercase()
            .matches("restore it from a copy")
            .count(),
        1,
        "{said}"
    );
    let log = captured.text();
    let lines = log
        .lines()
        .filter(|l| l.contains("file is damaged"))
        .count();
    assert_eq!(lines, 1, "once:\n{log}");
}
