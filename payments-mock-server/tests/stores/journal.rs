//! The PostgreSQL journal's numbers: taken by the writing transaction, so
//! a write that fails gives them back, a reader never counts a write that
//! has not committed, and a database made by the first schema version
//! numbers on from where it was.

use payments_mock_server::StoreSpec;
use payments_mock_server::domain::port::Store as _;
use payments_mock_server::store::PostgresStore;

use crate::backends::{self, REPLICA};
use crate::kept::capture;

async fn open(url: &str) -> PostgresStore {
    let spec: StoreSpec = url.parse().expect("a URL");
    let StoreSpec::Postgres(pg) = spec else {
        unreachable!("a postgres:// URL")
    };
    PostgresStore::open(&pg, REPLICA).await.expect("opens")
}

async fn sql(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(connection);
    client
}

async fn seqs(store: &PostgresStore) -> Vec<u64> {
    let entries = store.requests_since(0, 100).await.expect("answers");
    entries.iter().map(|e| e.seq).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_journal_write_gives_its_numbers_back() {
    let Some(url) =
        backends::postgres_database("a_failed_journal_write_gives_its_numbers_back").await
    else {
        return;
    };
    let store = open(&url).await;
    let db = sql(&url).await;
    // Every insert into the journal fails, after the numbers were taken.
    db.batch_execute(
        "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$ LANGUAGE plpgsql; \
         CREATE TRIGGER refuse BEFORE INSERT ON mock_journal FOR EACH ROW EXECUTE FUNCTION refuse();",
    )
    .await
    .expect("a refusing trigger");
    for n in 0..3 {
        store.record_request(capture(&format!("/api/{n}")));
    }
    assert!(store.journal_stats().await.is_err(), "the write failed");
    assert!(store.journal_stats().await.is_err(), "and again");
    db.batch_execute("DROP TRIGGER refuse ON mock_journal")
        .await
        .expect("dropped");
    store.record_request(capture("/api/3"));
    let stats = store.journal_stats().await.expect("answers");
    assert_eq!((stats.last_seq, stats.len), (4, 4), "numbered once each");
    assert_eq!(seqs(&store).await, [1, 2, 3, 4]);
    let paths: Vec<String> = store
        .requests_since(0, 10)
        .await
        .expect("answers")
        .into_iter()
        .map(|e| e.path)
        .collect();
    assert_eq!(paths, ["/api/0", "/api/1", "/api/2", "/api/3"], "in order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_not_yet_committed_is_not_counted() {
    let Some(url) = backends::postgres_database("a_write_not_yet_committed_is_not_counted").await
    else {
        return;
    };
    let store = open(&url).await;
    store.record_request(capture("/api/mine"));
    assert_eq!(store.journal_stats().await.expect("answers").last_seq, 1);
    // Another replica's write, numbers taken, not committed.
    let mut db = sql(&url).await;
    let tx = db.transaction().await.expect("begins");
    tx.batch_execute(
        "UPDATE mock_journal_counter SET last = last + 2 WHERE id = 1; \
         INSERT INTO mock_journal (seq, at, method, path, headers, body, request_id, replica) \
         VALUES (2, 0, 'GET', '/api/other-1', '[]', '', 'r', 'b'), (3, 0, 'GET', '/api/other-2', '[]', '', 'r', 'b');",
    )
    .await
    .expect("written, not committed");
    let stats = store.journal_stats().await.expect("answers");
    assert_eq!(
        (stats.last_seq, stats.len),
        (1, 1),
        "a reader polling after the last number never skips the other's entries"
    );
    tx.commit().await.expect("commits");
    let stats = store.journal_stats().await.expect("answers");
    assert_eq!((stats.last_seq, stats.len), (3, 3));
    assert_eq!(seqs(&store).await, [1, 2, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unwritten_entries_keep_their_numbers_across_a_reset_and_an_erase() {
    let Some(url) = backends::postgres_database(
        "unwritten_entries_keep_their_numbers_across_a_reset_and_an_erase",
    )
    .await
    else {
        return;
    };
    let store = open(&url).await;
    for n in 0..3 {
        store.record_request(capture(&format!("/api/before-{n}")));
    }
    store.reset().await.expect("resets");
    store.record_request(capture("/api/after"));
    let stats = store.journal_stats().await.expect("answers");
    assert_eq!((stats.last_seq, stats.len), (4, 1));
    assert_eq!(seqs(&store).await, [4]);
    // `--fresh` too: `seq` only grows across the whole service, and the
    // entry dropped unwritten keeps its number taken.
    store.record_request(capture("/api/pending"));
    store.erase().await.expect("erases");
    store.record_request(capture("/api/fresh"));
    let stats = store.journal_stats().await.expect("answers");
    assert_eq!((stats.last_seq, stats.len), (6, 1));
    assert_eq!(seqs(&store).await, [6]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_erase_is_refused_while_another_replica_is_live() {
    let Some(url) =
        backends::postgres_database("an_erase_is_refused_while_another_replica_is_live").await
    else {
        return;
    };
    let store = open(&url).await;
    let other = open(&url).await;
    store.record_request(capture("/api/kept"));
    assert_eq!(seqs(&store).await, [1]);
    let refused = store.erase().await.expect_err("refused");
    assert!(
        refused.reason().contains(&format!("({REPLICA})"))
            && refused
                .reason()
                .contains("every transaction and sandbox of the whole service"),
        "{refused:?}"
    );
    assert_eq!(seqs(&other).await, [1], "nothing deleted");
    // Stopped (its row removed): nothing live, the erase goes ahead.
    drop(other);
    store.erase().await.expect("erases");
    assert!(seqs(&store).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_version_database_numbers_on_from_its_sequence() {
    let Some(url) =
        backends::postgres_database("a_first_version_database_numbers_on_from_its_sequence").await
    else {
        return;
    };
    drop(open(&url).await);
    // The database as the first schema version left it: no counter, the
    // journal numbered by its sequence (at 41 here).
    let db = sql(&url).await;
    db.batch_execute(
        "DROP TABLE mock_journal_counter; \
         DELETE FROM mock_schema_history WHERE version > 1; \
         SELECT setval('mock_journal_seq_seq', 41, true);",
    )
    .await
    .expect("back to version 1");
    let store = open(&url).await;
    assert_eq!(store.journal_stats().await.expect("answers").last_seq, 41);
    store.record_request(capture("/api/next"));
    assert_eq!(seqs(&store).await, [42]);
}

/// Two replicas of one database in this process, named `a` and `b`.
async fn two(url: &str) -> (PostgresStore, PostgresStore) {
    let spec: StoreSpec = url.parse().expect("a URL");
    let StoreSpec::Postgres(pg) = spec else {
        unreachable!("a postgres:// URL")
    };
    let a = PostgresStore::open(&pg, "a").await.expect("opens");
    let b = PostgresStore::open(&pg, "b").await.expect("opens");
    (a, b)
}

fn has(entries: &[payments_mock_server::domain::journal::JournalEntry], path: &str) -> bool {
    entries.iter().any(|e| e.path == path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_on_one_replica_includes_what_another_recorded_just_before() {
    let Some(url) = backends::postgres_database(
        "a_read_on_one_replica_includes_what_another_recorded_just_before",
    )
    .await
    else {
        return;
    };
    let (a, b) = two(&url).await;
    let (mut attempts, mut misses) = (0, 0);
    let mut slowest = std::time::Duration::ZERO;
    for n in 0..100 {
        // Recorded as the guard records it, before the answer: a write is
        // at most 100 ms away, the read does not wait for it by chance.
        let (mine, theirs) = (format!("/api/a/{n}"), format!("/api/b/{n}"));
        a.record_request(capture(&mine));
        b.record_request(capture(&theirs));
        for (reader, wanted) in [(&b, &mine), (&a, &theirs)] {
            let started = std::time::Instant::now();
            let seen = reader.requests_since(0, 1000).await.expect("answers");
            slowest = slowest.max(started.elapsed());
            attempts += 1;
            if !has(&seen, wanted) {
                misses += 1;
                eprintln!("missed {wanted} in a read of {:?}", started.elapsed());
            }
        }
    }
    eprintln!(
        "journal across two replicas in one process: attempts={attempts} misses={misses} slowest read={slowest:?}"
    );
    assert_eq!(misses, 0);
    let seen = a.requests_since(0, 1000).await.expect("answers");
    assert_eq!(seen.len(), 200);
    assert!(seen.windows(2).all(|w| w[0].seq < w[1].seq));
    let replicas: std::collections::BTreeSet<&str> =
        seen.iter().map(|e| e.replica.as_str()).collect();
    assert_eq!(replicas.into_iter().collect::<Vec<_>>(), ["a", "b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_on_one_replica_drops_what_another_had_not_written() {
    let Some(url) =
        backends::postgres_database("a_reset_on_one_replica_drops_what_another_had_not_written")
            .await
    else {
        return;
    };
    let (a, b) = two(&url).await;
    for round in 0..20 {
        for n in 0..3 {
            a.record_request(capture(&format!("/api/before/{round}/{n}")));
        }
        b.reset().await.expect("resets");
        let after = format!("/api/after/{round}");
        a.record_request(capture(&after));
        for store in [&a, &b] {
            let seen = store.requests_since(0, 1000).await.expect("answers");
            let paths: Vec<&str> = seen.iter().map(|e| e.path.as_str()).collect();
            assert_eq!(paths, [after.as_str()], "round {round}");
        }
    }
    // Numbers go on: 20 rounds of 3 dropped and 1 kept.
    assert_eq!(b.journal_stats().await.expect("answers").last_seq, 80);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_does_not_write_holds_a_read_at_most_a_second() {
    let Some(url) =
        backends::postgres_database("a_replica_that_does_not_write_holds_a_read_at_most_a_second")
            .await
    else {
        return;
    };
    let store = open(&url).await;
    let db = sql(&url).await;
    // A replica that registered and went silent a moment ago (kill -9).
    db.execute(
        "INSERT INTO mock_journal_replicas (instance, replica, watermark, seen_at) \
         VALUES ($1, 'stuck', 0, now())",
        &[&uuid::Uuid::new_v4()],
    )
    .await
    .expect("a silent replica");
    store.record_request(capture("/api/mine"));
    let started = std::time::Instant::now();
    let seen = store.requests_since(0, 10).await.expect("answers");
    let waited = started.elapsed();
    assert!(has(&seen, "/api/mine"));
    assert!(
        waited >= std::time::Duration::from_millis(900)
            && waited < std::time::Duration::from_secs(3),
        "waited {waited:?}"
    );
    // Silent for 2 s: gone, not waited for.
    db.execute(
        "UPDATE mock_journal_replicas SET seen_at = now() - interval '3 seconds' WHERE replica = 'stuck'",
        &[],
    )
    .await
    .expect("older");
    let started = std::time::Instant::now();
    store.requests_since(0, 10).await.expect("answers");
    // Waiting for it would take a second.
    assert!(
        started.elapsed() < std::time::Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_stops_writes_what_it_had_and_leaves() {
    let Some(url) =
        backends::postgres_database("a_replica_that_stops_writes_what_it_had_and_leaves").await
    else {
        return;
    };
    let (a, b) = two(&url).await;
    for n in 0..3 {
        a.record_request(capture(&format!("/api/last/{n}")));
    }
    drop(a);
    let db = sql(&url).await;
    let rows: Vec<String> = db
        .query("SELECT replica FROM mock_journal_replicas", &[])
        .await
        .expect("rows")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(rows, ["b"], "a left the replicas");
    let seen = b.requests_since(0, 10).await.expect("answers");
    let paths: Vec<&str> = seen.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["/api/last/0", "/api/last/1", "/api/last/2"]);
}
