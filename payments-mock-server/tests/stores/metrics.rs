//! The stores' operations in `GET /metrics` belong to the server that
//! opened the store: two servers in one process (two SQLite files, or two
//! replicas of one PostgreSQL database) each count their own, so an
//! integrator's test that starts several embedded mocks reads each one's
//! figures, not the process's.

use payments_mock_server::{MockServer, StoreSpec};
use serde_json::json;

use crate::backends::{postgres_database, sqlite_path};

/// The sum of `family`'s samples whose labels hold every one of `labels`.
fn sum(text: &str, family: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|line| line.starts_with(&format!("{family}{{")))
        .filter(|line| labels.iter().all(|l| line.contains(l)))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

async fn scrape(server: &MockServer) -> String {
    let reply = reqwest::get(format!("{}/metrics", server.base_url()))
        .await
        .expect("a scrape");
    assert_eq!(reply.status(), 200);
    reply.text().await.expect("text")
}

/// `n` initiates on `server`, references `PREFIX-i` (unique across servers
/// that share one database).
async fn initiate(server: &MockServer, prefix: &str, n: usize) {
    let client = reqwest::Client::new();
    for i in 0..n {
        let reply = client
            .post(format!("{}/api/payments/initiate", server.base_url()))
            .json(&json!({
                "merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60",
                "referenceNo": format!("{prefix}-{i}"),
                "amount": 1050,
                "productCode": "TOPUP",
                "storeId": "S1",
                "payerId": "60123456789",
            }))
            .send()
            .await
            .expect("an answer");
        assert_eq!(
            reply.status(),
            200,
            "{}",
            reply.text().await.unwrap_or_default()
        );
    }
}

const CREATES: &str = "payments_mock_store_operation_duration_seconds_count";

/// Starts two servers on `a` and `b`, initiates 5 times on the first and
/// twice on the second, and checks each scrape counts its own creates.
async fn each_counts_its_own(a: StoreSpec, b: StoreSpec, store: &str) {
    let first = MockServer::builder()
        .store(a)
        .replica_name("first")
        .start()
        .await
        .expect("the first server");
    let second = MockServer::builder()
        .store(b)
        .replica_name("second")
        .start()
        .await
        .expect("the second server");
    initiate(&first, "FIRST", 5).await;
    initiate(&second, "SECOND", 2).await;
    let store_label = format!("store=\"{store}\"");
    let create = [store_label.as_str(), "operation=\"create\""];

    let text = scrape(&first).await;
    assert_eq!(sum(&text, CREATES, &create), 5.0, "{text}");
    assert!(!text.contains("replica=\"second\""), "{text}");
    let text = scrape(&second).await;
    assert_eq!(sum(&text, CREATES, &create), 2.0, "{text}");
    assert!(!text.contains("replica=\"first\""), "{text}");

    // A memory server in the same process has no store operations at all.
    let memory = MockServer::start().await;
    let text = scrape(&memory).await;
    assert_eq!(sum(&text, CREATES, &[]), 0.0, "{text}");
    assert!(
        text.contains("# TYPE payments_mock_store_operation_duration_seconds histogram"),
        "the family is declared even when empty: {text}"
    );
    for server in [first, second, memory] {
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sqlite_servers_in_one_process_count_their_own_store_operations() {
    let (_a_dir, a) = sqlite_path();
    let (_b_dir, b) = sqlite_path();
    each_counts_its_own(StoreSpec::Sqlite(a), StoreSpec::Sqlite(b), "sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_of_one_postgres_database_in_one_process_count_their_own() {
    let Some(url) = postgres_database("store metrics per replica").await else {
        return;
    };
    let spec: StoreSpec = url.parse().expect("a store URL");
    each_counts_its_own(spec.clone(), spec, "postgres").await;
}
