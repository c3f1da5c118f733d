//! A reset the store refuses resets nothing: the fault rules and the
//! queued faults stay (they were cleared before the store was asked, so
//! a 503 `STORE_UNAVAILABLE` had still removed a test's scripted faults).

#![cfg(feature = "sqlite")]

use crate::MockServer;
use crate::StoreSpec;

/// How many fault rules `GET /_mock/faults` lists, and its answer.
async fn rules_listed(http: &reqwest::Client, base: &str) -> (usize, serde_json::Value) {
    let rules: serde_json::Value = http
        .get(format!("{base}/_mock/faults"))
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    (rules["data"]["items"].as_array().map_or(0, Vec::len), rules)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reset_the_store_refuses_keeps_the_fault_rules() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("mock.db");
    let server = MockServer::builder()
        .store(StoreSpec::Sqlite(path.clone()))
        .start()
        .await
        .expect("starts");
    let http = reqwest::Client::new();
    let base = server.base_url();
    let installed = http
        .post(format!("{base}/_mock/faults"))
        .json(&serde_json::json!({"match": {"referenceNo": "KEEP"}, "fault": "internal-error"}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(installed.status().as_u16(), 201);

    // Another process's write lock, held past the store's time.
    let holder = rusqlite::Connection::open(&path).expect("a second connection");
    holder
        .execute_batch("BEGIN IMMEDIATE")
        .expect("the write lock");
    let reset = http
        .post(format!("{base}/_mock/reset"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(reset.status().as_u16(), 503, "the store could not reset");
    let (listed, rules) = rules_listed(&http, &base).await;
    assert_eq!(listed, 1, "the rule survives a refused reset: {rules}");

    holder.execute_batch("ROLLBACK").expect("released");
    let reset = http
        .post(format!("{base}/_mock/reset"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(reset.status().as_u16(), 200);
    let (listed, rules) = rules_listed(&http, &base).await;
    assert_eq!(listed, 0, "a reset that happened clears them: {rules}");
    server.shutdown().await;
}
