//! Stores damaged from outside (CONTRACT section 15): a SQLite file
//! removed or replaced while the mock runs refuses every change from then
//! on and loses none it answered; another program's database is refused
//! and left byte for byte; a migration that fails says why in one line; a
//! row the store cannot read is a lasting fault, not an outage.

use std::path::Path;

use payments_mock_server::InitialState;
use payments_mock_server::domain::port::{PageQuery, Store, StoreError, StoreErrorKind};
use payments_mock_server::store::{PostgresStore, SqliteStore};
use payments_mock_server::{Durability, Error, StoreSpec};

use crate::backends::{self, REPLICA};
use crate::behaviour::{MERCHANT, MINUTE, new};

fn open_sqlite(path: &Path) -> Result<SqliteStore, Error> {
    SqliteStore::open(path, Durability::Process, REPLICA)
}

/// The one-line reason a store was refused with exit 1.
fn refused<S>(result: Result<S, Error>) -> String {
    match result {
        Ok(_) => panic!("opened a store that should be refused"),
        Err(e) => {
            assert_eq!(e.exit_code(), 1, "{e}");
            let message = e.to_string();
            assert!(!message.contains('\n'), "one line: {message}");
            message
        }
    }
}

fn with_suffix(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

async fn create(store: &SqliteStore, reference: &str) -> Result<uuid::Uuid, StoreError> {
    store
        .create(new(MERCHANT, reference), InitialState::Initiated, MINUTE)
        .await
        .map(|created| created.expect("a new reference").id)
}

/// The reviewer's case: the file, its log and its shared memory deleted
/// while the mock runs. Every later change is refused (lasting: restart
/// the mock), health says so, and after a restart every change answered
/// is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_sqlite_file_refuses_changes_and_loses_none_answered() {
    let (_dir, path) = backends::sqlite_path();
    let store = open_sqlite(&path).expect("a new store");
    create(&store, "BEFORE").await.expect("created");
    store.check().await.expect("healthy");
    for suffix in ["", "-wal", "-shm"] {
        std::fs::remove_file(with_suffix(&path, suffix)).expect("removed");
    }
    let lost = create(&store, "AFTER").await.expect_err("refused");
    assert_eq!(lost.kind(), StoreErrorKind::Lost, "{lost}");
    let text = lost.to_string();
    assert!(text.contains("was removed"), "{text}");
    assert!(text.contains("restart the mock"), "{text}");
    assert!(!text.contains("retry"), "{text}");
    let again = store
        .advance_clock(std::time::Duration::from_secs(1))
        .await
        .expect_err("still refused");
    assert_eq!(again.kind(), StoreErrorKind::Lost);
    let health = store.check().await.expect_err("health says so");
    assert_eq!(health.kind(), StoreErrorKind::Lost);
}

/// A file replaced (renamed over by a copy) while the mock runs: health,
/// without a change asked for first, notices it; changes are refused; a
/// restart on the path opens the copy as it is (what was answered before
/// it was taken, nothing that was refused), not through the replaced
/// file's log, which the stop set aside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_sqlite_file_is_noticed_by_health_and_changes() {
    let (dir, path) = backends::sqlite_path();
    let store = open_sqlite(&path).expect("a new store");
    create(&store, "ONE").await.expect("created");
    let copy = dir.path().join("copy.db");
    // A copy as the docs say to take one while serving (a `cp` of the
    // file alone misses what its log holds).
    rusqlite::Connection::open(&path)
        .and_then(|c| c.execute("VACUUM INTO ?1", [copy.display().to_string()]))
        .expect("copied");
    std::fs::rename(&copy, &path).expect("replaced");
    let health = store.check().await.expect_err("health notices it");
    assert_eq!(health.kind(), StoreErrorKind::Lost, "{health}");
    assert!(health.to_string().contains("was replaced"), "{health}");
    let refused = create(&store, "TWO").await.expect_err("refused");
    assert_eq!(refused.kind(), StoreErrorKind::Lost);
    drop(store);
    assert!(with_suffix(&path, "-wal.replaced").exists(), "set aside");
    let again = open_sqlite(&path).expect("reopens the copy");
    assert_eq!(again.count().await.expect("counts"), 1);
}

/// Control: a store whose file stays where it is keeps taking changes,
/// and every one answered is there after a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_file_left_alone_keeps_what_it_answered() {
    let (_dir, path) = backends::sqlite_path();
    let store = open_sqlite(&path).expect("a new store");
    for reference in ["A", "B", "C"] {
        create(&store, reference).await.expect("created");
    }
    store.check().await.expect("healthy");
    drop(store);
    let again = open_sqlite(&path).expect("reopens");
    assert_eq!(again.count().await.expect("counts"), 3);
}

/// Another program's database: unrelated tables, or one that clashes
/// with the mock's. Refused in one line, the file byte for byte as it was.
#[test]
fn another_programs_sqlite_file_is_refused_unchanged() {
    for (schema, named) in [
        (
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'ann');",
            "users",
        ),
        (
            "CREATE TABLE mock_transactions (id INTEGER PRIMARY KEY); INSERT INTO mock_transactions VALUES (7);",
            "mock_transactions",
        ),
    ] {
        let (_dir, path) = backends::sqlite_path();
        {
            let conn = rusqlite::Connection::open(&path).expect("opens");
            conn.execute_batch(schema)
                .expect("another program's tables");
        }
        let before = std::fs::read(&path).expect("read");
        let message = refused(open_sqlite(&path));
        assert!(message.contains("not the mock's store"), "{message}");
        assert!(message.contains(named), "{message}");
        assert!(message.contains("left as it is"), "{message}");
        assert_eq!(
            std::fs::read(&path).expect("read"),
            before,
            "{named}: unchanged"
        );
        let conn = rusqlite::Connection::open(&path).expect("opens");
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name LIKE 'mock_schema%'",
                [],
                |r| r.get(0),
            )
            .expect("counts");
        assert_eq!(tables, 0, "no history added");
    }
}

/// A migration that fails (a table of its in the way, in a file of the
/// first schema) says why in one line, without the migration's SQL.
#[test]
fn a_failed_migration_says_why_in_one_line() {
    let (_dir, path) = backends::sqlite_path();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store-v1.db");
    std::fs::copy(fixture, &path).expect("copied");
    {
        let conn = rusqlite::Connection::open(&path).expect("opens");
        conn.execute_batch("CREATE TABLE mock_sandboxes (x INTEGER)")
            .expect("in the way");
    }
    let message = refused(open_sqlite(&path));
    assert!(
        message.contains("cannot bring its schema up to date"),
        "{message}"
    );
    assert!(message.contains("mock_sandboxes"), "{message}");
    assert!(!message.contains("CREATE"), "no SQL: {message}");
}

/// A row changed outside the mock (a 1-byte id): reading it is a lasting
/// fault of the store (500, no retry), not an outage (503).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_the_store_cannot_read_is_unreadable_not_unavailable() {
    let (_dir, path) = backends::sqlite_path();
    let store = open_sqlite(&path).expect("a new store");
    create(&store, "GOOD").await.expect("created");
    let query = PageQuery::oldest_first(None, 10);
    let page = store.page(&query, |_| true, |r| r.id).await.expect("reads");
    assert_eq!(page.expect("a page").items.len(), 1, "control: it reads");
    drop(store);
    {
        let conn = rusqlite::Connection::open(&path).expect("opens");
        conn.execute("UPDATE mock_transactions SET id = x'01'", [])
            .expect("damaged");
    }
    let store = open_sqlite(&path).expect("reopens");
    let error = store
        .page(&query, |_| true, |r| r.id)
        .await
        .expect_err("cannot read it");
    assert_eq!(error.kind(), StoreErrorKind::Unreadable, "{error}");
    let text = error.to_string();
    assert!(text.contains("cannot read"), "{text}");
    assert!(!text.contains("retry"), "{text}");
}

/// PostgreSQL: a database that holds tables named as the mock's but no
/// history of the mock's is refused before anything is written (the
/// migration would fail half-way); one with unrelated tables alone is a
/// database the mock may share (CONTRACT section 15 asks nothing else of
/// it), and its tables stay as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_with_a_clashing_table_and_no_history_is_refused_unchanged() {
    let Some(url) =
        backends::postgres_database("postgres_with_a_clashing_table_and_no_history").await
    else {
        return;
    };
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(connection);
    client
        .batch_execute(
            "CREATE TABLE users (id int PRIMARY KEY); INSERT INTO users VALUES (1); \
             CREATE TABLE mock_transactions (id int PRIMARY KEY); INSERT INTO mock_transactions VALUES (7);",
        )
        .await
        .expect("another program's tables");
    let tables = || async {
        client
            .query(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
                &[],
            )
            .await
            .expect("lists")
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<_>>()
    };
    let before = tables().await;
    let StoreSpec::Postgres(pg) = url.parse().expect("a URL") else {
        unreachable!()
    };
    let message = refused(PostgresStore::open(&pg, REPLICA).await);
    assert!(message.contains("mock_transactions"), "{message}");
    assert!(message.contains("no schema history"), "{message}");
    assert!(!message.contains("CREATE"), "no SQL: {message}");
    assert_eq!(tables().await, before, "nothing created");
    // Control: without the clashing table it opens beside `users`.
    client
        .batch_execute("DROP TABLE mock_transactions")
        .await
        .expect("dropped");
    let store = PostgresStore::open(&pg, REPLICA).await.expect("opens");
    drop(store);
    let users: i64 = client
        .query_one("SELECT count(*) FROM users", &[])
        .await
        .expect("counts")
        .get(0);
    assert_eq!(users, 1);
}
