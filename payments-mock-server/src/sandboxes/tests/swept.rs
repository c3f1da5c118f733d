//! The sweep on a timer through a whole server on a SQLite file: sandboxes
//! whose time ran out leave the file (their rows, transactions and
//! journal) while nobody sends the server anything, whether made by this
//! run or restored from the file at start.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::{MockServer, StoreSpec};

const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

/// Counts of the file's sandboxes, and of their transactions and journal
/// entries (the root's have an empty `sandbox`).
fn held(file: &std::path::Path) -> (i64, i64, i64) {
    let db =
        rusqlite::Connection::open_with_flags(file, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("the file opens");
    db.busy_timeout(Duration::from_secs(5))
        .expect("a busy timeout");
    let count = |sql: &str| -> i64 { db.query_row(sql, [], |row| row.get(0)).expect(sql) };
    (
        count("SELECT count(*) FROM mock_sandboxes"),
        count("SELECT count(*) FROM mock_transactions WHERE length(sandbox) > 0"),
        count("SELECT count(*) FROM mock_journal WHERE length(sandbox) > 0"),
    )
}

/// Polls the file until it holds `want` (at most `within`); what it held.
async fn until_held(
    file: &std::path::Path,
    want: (i64, i64, i64),
    within: Duration,
) -> (i64, i64, i64) {
    let deadline = std::time::Instant::now() + within;
    let mut seen = held(file);
    while seen != want && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        seen = held(file);
    }
    seen
}

async fn start(file: &std::path::Path) -> MockServer {
    let spec: StoreSpec = format!("sqlite:{}", file.display())
        .parse()
        .expect("a store");
    MockServer::builder()
        .store(spec)
        .start()
        .await
        .expect("started")
}

/// Makes a sandbox living `ttl_seconds` with three transactions; when it
/// expires, as made.
async fn sandbox_with_payments(
    http: &reqwest::Client,
    server: &MockServer,
    n: usize,
    ttl_seconds: u64,
) -> DateTime<Utc> {
    let made: Value = http
        .post(format!("{}/_mock/sandboxes", server.base_url()))
        .json(&json!({"ttlSeconds": ttl_seconds}))
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    let base = made["data"]["baseUrl"]
        .as_str()
        .expect("a baseUrl")
        .to_owned();
    for i in 0..3 {
        let reply = http
            .post(format!("{base}/api/payments/initiate"))
            .json(&json!({
                "merchantId": MERCHANT,
                "referenceNo": format!("swept-{n}-{i}"),
                "amount": 1050,
                "productCode": "TOPUP",
                "storeId": "S1",
                "payerId": "60123456789",
            }))
            .send()
            .await
            .expect("an answer");
        assert_eq!(reply.status(), 200);
    }
    // Renewed by its requests: a whole time to live from the last.
    Utc::now() + chrono::Duration::seconds(i64::try_from(ttl_seconds).expect("small"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_sandboxes_leave_a_sqlite_file_with_no_request() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("mock.db");
    let server = start(&file).await;
    let http = reqwest::Client::new();
    for n in 0..2 {
        sandbox_with_payments(&http, &server, n, 3).await;
    }
    // Written behind the answers: the file holds them all before their
    // time (3 s from the last request) runs out.
    let seen = until_held(&file, (2, 6, 6), Duration::from_secs(20)).await;
    assert_eq!(seen, (2, 6, 6), "sandboxes, transactions, journal written");
    // From now on, nothing is sent to the server.
    let seen = until_held(&file, (0, 0, 0), Duration::from_secs(20)).await;
    assert_eq!(seen, (0, 0, 0), "sandboxes, transactions, journal left");
    server.shutdown().await;
}

/// A restart restores the file's sandboxes: one whose time ran out while
/// the server was down, and one whose time runs out soon after the start.
/// Both leave the file with nothing sent to the restarted server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restored_sandboxes_leave_a_sqlite_file_with_no_request() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("mock.db");
    let server = start(&file).await;
    let http = reqwest::Client::new();
    let first = sandbox_with_payments(&http, &server, 0, 1).await;
    sandbox_with_payments(&http, &server, 1, 5).await;
    let seen = until_held(&file, (2, 6, 6), Duration::from_secs(20)).await;
    assert_eq!(seen, (2, 6, 6), "sandboxes, transactions, journal written");
    server.shutdown().await;
    assert_eq!(held(&file), (2, 6, 6), "both kept at the shutdown");
    // The first one's time runs out while the server is down.
    while Utc::now() <= first + chrono::Duration::milliseconds(200) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let server = start(&file).await;
    // From now on, nothing is sent to the server.
    let seen = until_held(&file, (0, 0, 0), Duration::from_secs(20)).await;
    assert_eq!(seen, (0, 0, 0), "sandboxes, transactions, journal left");
    server.shutdown().await;
}
