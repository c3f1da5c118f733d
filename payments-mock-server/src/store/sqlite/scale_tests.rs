//! The store with many rows: a page reads the `(sandbox, id)` index with
//! no sort and gives the pages one sorted read gave; a page that reads
//! many rows leaves the async worker free; a reset of a big sandbox
//! answers after its commit. Rows are made with SQL (one stored
//! transaction copied), which is fast.

use super::*;
use crate::store::test_support::sample;

/// A store on a new file in `dir`, holding one seeded transaction.
async fn store_in(dir: &Path) -> SqliteStore {
    let store = SqliteStore::open(&dir.join("scale.db"), Durability::Process, "test")
        .expect("the store opens");
    store
        .seed(sample())
        .await
        .expect("stored")
        .expect("not a duplicate");
    store
}

/// Adds `n` copies of the seeded transaction to the sandbox `key` (each
/// with a random id and its own reference), with SQL on its own
/// connection.
fn copies(dir: &Path, key: &[u8], n: u32) {
    let conn = Connection::open(dir.join("scale.db")).expect("a connection");
    conn.busy_timeout(Duration::from_secs(30))
        .expect("a timeout");
    let columns: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('mock_transactions')")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("the columns");
    let values: Vec<String> = columns
        .iter()
        .map(|c| match c.as_str() {
            "id" => "randomblob(16)".to_owned(),
            "reference_no" => "reference_no || '-' || i".to_owned(),
            "page_token" => "NULL".to_owned(),
            "sandbox" => "?2".to_owned(),
            other => other.to_owned(),
        })
        .collect();
    conn.execute(
        &format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1) \
             INSERT INTO mock_transactions ({}) SELECT {} FROM n, \
             (SELECT * FROM mock_transactions WHERE sandbox = x'' LIMIT 1)",
            columns.join(", "),
            values.join(", ")
        ),
        params![n, key],
    )
    .expect("the copies");
}

/// The ids of the sandbox `key`, as the one sorted read before the
/// batches gave them: every row, in `order`.
fn sorted_ids(store: &SqliteStore, key: &[u8], order: Order) -> Vec<Uuid> {
    let order = match order {
        Order::OldestFirst => "ASC",
        Order::NewestFirst => "DESC",
    };
    store
        .read(|conn| {
            let mut s = conn
                .prepare(&format!(
                    "SELECT id FROM mock_transactions WHERE sandbox = ?1 ORDER BY id {order}"
                ))
                .map_err(|e| store_error(&e))?;
            let ids = s
                .query_map([key], |r| uuid_of(&r.get::<_, Vec<u8>>(0)?))
                .map_err(|e| store_error(&e))?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(|e| store_error(&e))?;
            Ok(ids)
        })
        .expect("the ids")
}

/// What `keep` keeps in these tests: one id in `every` (by its first byte).
fn kept(id: Uuid, every: u8) -> bool {
    id.as_bytes()[0].is_multiple_of(every)
}

#[test]
fn a_page_reads_the_sandbox_id_index_without_a_sort() {
    let dir = tempfile::tempdir().expect("a directory");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let store = runtime.block_on(store_in(dir.path()));
    for order in [Order::OldestFirst, Order::NewestFirst] {
        for after in [None, Some(Uuid::nil())] {
            let batch = page::plan_of(&store, order, after);
            assert!(
                !batch.contains("TEMP B-TREE"),
                "{order:?} {after:?}: {batch}"
            );
            assert!(
                batch.contains("mock_transactions_sandbox_id"),
                "{order:?} {after:?}: {batch}"
            );
        }
    }
}

#[test]
fn pages_over_many_rows_are_the_pages_of_one_sorted_read() {
    let dir = tempfile::tempdir().expect("a directory");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let store = runtime.block_on(store_in(dir.path()));
    // The root's rows, and another sandbox's that no page of the root's
    // shows.
    copies(dir.path(), b"", 6_000);
    copies(dir.path(), &[7; 16], 3_000);
    for order in [Order::OldestFirst, Order::NewestFirst] {
        let all = sorted_ids(&store, b"", order);
        assert_eq!(all.len(), 6_001);
        // Every row kept, and one in 7, one in 200 (batches that the
        // filter empties, read until the page is full).
        for (every, limit) in [(1, 100), (1, 1), (7, 50), (200, 3), (200, usize::MAX)] {
            let expected: Vec<Uuid> = all.iter().copied().filter(|id| kept(*id, every)).collect();
            let mut from = None;
            let mut seen = Vec::new();
            loop {
                let query = PageQuery {
                    order,
                    from,
                    limit,
                    merchant: None,
                    reference_contains: None,
                };
                let page = runtime
                    .block_on(store.page(&query, |r| kept(r.id, every), |r| r.id))
                    .expect("read")
                    .expect("from is stored");
                let rest = &expected[seen.len()..];
                let wanted = &rest[..limit.min(rest.len())];
                assert_eq!(page.items, wanted, "{order:?} every {every} limit {limit}");
                assert_eq!(page.more, rest.len() > limit);
                seen.extend(page.items.iter().copied());
                match page.items.last() {
                    Some(last) if page.more => from = Some(*last),
                    _ => break,
                }
            }
            assert_eq!(seen, expected);
        }
    }
    // An id that is not stored: no page, as before.
    let query = PageQuery::oldest_first(Some(Uuid::from_bytes([9; 16])), 10);
    let page = runtime
        .block_on(store.page(&query, |_| true, |r| r.id))
        .expect("read");
    assert!(page.is_none());
}

#[test]
fn a_page_that_reads_many_rows_leaves_the_worker_free() {
    let dir = tempfile::tempdir().expect("a directory");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let store = Arc::new(runtime.block_on(store_in(dir.path())));
    copies(dir.path(), b"", 100_000);
    let (started, read_started) = oneshot::channel();
    let reading = Arc::clone(&store);
    // A page that keeps nothing: it reads all 100,001 rows.
    let page = runtime.spawn(async move {
        let mut started = Some(started);
        reading
            .page(
                &PageQuery::oldest_first(None, 10),
                |_| {
                    if let Some(started) = started.take() {
                        let _ = started.send(());
                    }
                    false
                },
                |r| r.id,
            )
            .await
    });
    runtime.block_on(async {
        read_started.await.expect("the page started");
        // Another task on the one worker answers while the page reads.
        let other = tokio::spawn(async { 42 });
        assert_eq!(other.await.expect("ran"), 42);
        assert!(
            !page.is_finished(),
            "the other task waited for the page to end"
        );
        let read = page.await.expect("ran").expect("read").expect("a page");
        assert!(read.items.is_empty());
        assert!(!read.more);
    });
}

#[test]
fn a_reset_of_a_big_sandbox_answers_after_its_commit() {
    let dir = tempfile::tempdir().expect("a directory");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let store = runtime.block_on(store_in(dir.path()));
    copies(dir.path(), b"", 100_000);
    // Each row's removal made slow (work for SQLite in a trigger): the
    // reset's one DELETE takes longer than the 4 s a request's job waits.
    let conn = Connection::open(dir.path().join("scale.db")).expect("a connection");
    conn.execute_batch(
        "CREATE TRIGGER slow BEFORE DELETE ON mock_transactions BEGIN \
           SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL \
             SELECT x + 1 FROM c WHERE x < 160) SELECT x FROM c); \
         END;",
    )
    .expect("the trigger");
    let began = std::time::Instant::now();
    runtime.block_on(store.reset()).expect("the reset answers");
    let took = began.elapsed();
    let left: i64 = conn
        .query_row("SELECT count(*) FROM mock_transactions", [], |r| r.get(0))
        .expect("counted");
    assert_eq!(left, 0, "the reset took {took:?}");
    eprintln!("the reset took {took:?}");
}

/// A merchant's count is one statement on the unique `(sandbox, merchant,
/// reference)` index, exact for each merchant and each sandbox.
#[test]
fn a_merchants_count_is_one_search_of_its_index() {
    let dir = tempfile::tempdir().expect("a directory");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let store = runtime.block_on(store_in(dir.path()));
    let plan = page::count_plan(&store);
    assert!(
        plan.contains("SEARCH mock_transactions USING COVERING INDEX"),
        "{plan}"
    );
    assert!(plan.contains("sandbox=? AND merchant_id=?"), "{plan}");
    // The seeded transaction's merchant (nil) holds 2,501 in the root and
    // 300 in a sandbox; another merchant none.
    copies(dir.path(), b"", 2_500);
    copies(dir.path(), &[7; 16], 300);
    let sandbox = store.new_sandbox(Uuid::from_bytes([7; 16]));
    let other = Uuid::from_u128(1);
    let counts = runtime.block_on(async {
        let mut counts = Vec::new();
        for (store, merchant) in [
            (&store, Uuid::nil()),
            (&sandbox, Uuid::nil()),
            (&store, other),
        ] {
            counts.push(store.count_of_merchant(merchant).await.expect("counted"));
        }
        counts
    });
    assert_eq!(counts, [2_501, 300, 0]);
}
