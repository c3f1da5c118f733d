//! `GET /_mock/health` with a merchant's key counts that merchant's
//! transactions with one store operation, not a page query per thousand
//! rows (with a million, a load balancer's check ran a thousand of them):
//! counted in `GET /metrics`, on a SQLite store.

use payments_mock_server::domain::port::Store as _;
use payments_mock_server::{InitialState, MockServer, StoreSpec};
use serde_json::Value;

use crate::backends::sqlite_path;
use crate::behaviour::{MERCHANT, MINUTE, OTHER, new};

const OPERATIONS: &str = "payments_mock_store_operation_duration_seconds_count";

/// The count of store operations `operation` in a scrape.
fn operations(text: &str, operation: &str) -> u64 {
    let label = format!("operation=\"{operation}\"");
    text.lines()
        .filter(|line| line.starts_with(&format!("{OPERATIONS}{{")) && line.contains(&label))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merchants_health_is_one_count_of_the_store() {
    let (_dir, path) = sqlite_path();
    let server = MockServer::builder()
        .store(StoreSpec::Sqlite(path))
        .admin_key("admin-key")
        .api_key("merchant-key", Some(MERCHANT))
        .start()
        .await
        .expect("a server");
    let store = &server.state().store;
    // More than two pages of `GET /_mock/transactions` (1,000 each).
    for (merchant, n) in [(MERCHANT, 2_100), (OTHER, 40)] {
        for i in 0..n {
            store
                .create(
                    new(merchant, &format!("H-{i}")),
                    InitialState::Initiated,
                    MINUTE,
                )
                .await
                .expect("answers")
                .expect("created");
        }
    }
    let client = reqwest::Client::new();
    let scrape = async || {
        let reply = client
            .get(format!("{}/metrics", server.base_url()))
            .bearer_auth("admin-key")
            .send()
            .await
            .expect("a scrape");
        assert_eq!(reply.status(), 200);
        reply.text().await.expect("text")
    };
    let before = scrape().await;
    let health: Value = client
        .get(format!("{}/_mock/health", server.base_url()))
        .bearer_auth("merchant-key")
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    assert_eq!(health["data"]["transactions"], 2_100, "{health}");
    let after = scrape().await;
    assert_eq!(
        operations(&after, "page") - operations(&before, "page"),
        0,
        "{after}"
    );
    assert_eq!(
        operations(&after, "count") - operations(&before, "count"),
        1,
        "{after}"
    );
    server.shutdown().await;
}
