//! A sandbox removed while one of its requests is in flight.

use std::time::Duration;

use payments_mock_server::MockServer;
use serde_json::{Value, json};

use super::{call, get, make, post};
use crate::common::initiate_body;

/// A `DELETE` of a sandbox while one of its requests is in flight (held
/// by a `delay`): the request is answered 404 `SANDBOX_NOT_FOUND`, never
/// 200 for a payment in a sandbox already gone, and the SQLite file keeps
/// no row of it (it kept one under the removed id, seen nowhere, never
/// removed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_in_flight_when_its_sandbox_is_deleted_is_not_found() {
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("mock.db");
    for spec in [None, Some(format!("sqlite:{}", file.display()))] {
        let mut builder = MockServer::builder();
        if let Some(spec) = &spec {
            builder = builder.store(spec.parse().expect("a store spec"));
        }
        let server = builder.start().await.expect("started");
        let (id, base) = make(&server, None).await;
        // A rule holds the initiate for 1.5 s: long enough for the DELETE
        // below, which is sent once the rule has met the request (so the
        // request is in flight, not yet arrived: no pause to guess).
        let rule = json!({"fault": "delay=1500", "match": {"endpoint": "initiate"}});
        assert_eq!(
            post(&format!("{base}/_mock/faults"), rule, None).await.0,
            201
        );
        let initiate = tokio::spawn({
            let url = format!("{base}/api/payments/initiate");
            async move {
                reqwest::Client::new()
                    .post(url)
                    .json(&initiate_body("GONE-1", "TOPUP"))
                    .send()
                    .await
                    .expect("an answer")
            }
        });
        tokio::time::timeout(Duration::from_secs(10), async {
            while get(&format!("{base}/_mock/faults"), None).await.1["data"]["items"][0]["met"] != 1
            {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the rule met the initiate");
        let (status, _) = call(
            reqwest::Method::DELETE,
            &format!("{}/_mock/sandboxes/{id}", server.base_url()),
            None,
            None,
        )
        .await;
        assert_eq!(status, 200, "{spec:?}");
        let reply = initiate.await.expect("joined");
        assert_eq!(reply.status(), 404, "{spec:?}");
        let body: Value = reply.json().await.expect("an envelope");
        assert_eq!(body["errorCode"], "SANDBOX_NOT_FOUND", "{spec:?}");
        server.shutdown().await;
    }
    let db = rusqlite::Connection::open(&file).expect("the file");
    let rows: i64 = db
        .query_row("SELECT COUNT(*) FROM mock_transactions", [], |r| r.get(0))
        .expect("counted");
    assert_eq!(rows, 0, "no row of the removed sandbox");
}

/// Reads and a confirm of a transaction already there, each held in flight
/// by a `delay` while the sandbox is deleted: each is 404
/// `SANDBOX_NOT_FOUND`. On SQLite the rows were gone when they looked, and
/// they answered "transaction not found" (400 / 404 `TRANSACTION_NOT_FOUND`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_confirms_in_flight_when_their_sandbox_is_deleted_are_not_found() {
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("mock.db");
    for spec in [None, Some(format!("sqlite:{}", file.display()))] {
        let mut builder = MockServer::builder();
        if let Some(spec) = &spec {
            builder = builder.store(spec.parse().expect("a store spec"));
        }
        let server = builder.start().await.expect("started");
        let (id, base) = make(&server, None).await;
        let (status, initiated) = post(
            &format!("{base}/api/payments/initiate"),
            initiate_body("GONE-2", "TOPUP"),
            None,
        )
        .await;
        assert_eq!(status, 200, "{initiated}");
        let transaction = initiated["data"]["transactionId"]
            .as_str()
            .expect("an id")
            .to_owned();
        for endpoint in ["confirm", "status", "status-by-reference"] {
            let rule = json!({"fault": "delay=1500", "match": {"endpoint": endpoint}});
            assert_eq!(
                post(&format!("{base}/_mock/faults"), rule, None).await.0,
                201
            );
        }
        let client = reqwest::Client::new();
        let held = [
            client
                .post(format!("{base}/api/payments/confirm"))
                .json(&json!({"transactionId": transaction, "referenceNo": "GONE-2"})),
            client.get(format!("{base}/api/payments/{transaction}/status")),
            client.get(format!("{base}/api/payments/reference/GONE-2/status")),
        ]
        .map(|request| tokio::spawn(async move { request.send().await.expect("an answer") }));
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let rules = get(&format!("{base}/_mock/faults"), None).await.1;
                let items = rules["data"]["items"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                if items.iter().all(|rule| rule["met"] == 1) {
                    break;
                }
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the rules met the three requests");
        let (status, _) = call(
            reqwest::Method::DELETE,
            &format!("{}/_mock/sandboxes/{id}", server.base_url()),
            None,
            None,
        )
        .await;
        assert_eq!(status, 200, "{spec:?}");
        for reply in held {
            let reply = reply.await.expect("joined");
            let url = reply.url().clone();
            assert_eq!(reply.status(), 404, "{spec:?} {url}");
            let body: Value = reply.json().await.expect("an envelope");
            assert_eq!(body["errorCode"], "SANDBOX_NOT_FOUND", "{spec:?} {url}");
        }
        server.shutdown().await;
    }
}
