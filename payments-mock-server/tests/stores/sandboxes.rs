//! In-process sandboxes on a store the replicas share
//! (`MockServer::create_sandbox`): two embedded replicas of one PostgreSQL
//! database, a test's sandbox made on one and served by the other under
//! its own base URL; its clock, its removal and its drop seen by both.

use std::time::Duration;

use payments_mock_server::{MockServer, StoreSpec};
use serde_json::{Value, json};

use crate::backends::postgres_database;

const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

async fn replica(url: &str, name: &str) -> MockServer {
    let spec: StoreSpec = url.parse().expect("a store URL");
    MockServer::builder()
        .store(spec)
        .replica_name(name)
        .start()
        .await
        .expect("a replica")
}

/// Initiates `reference` under `base`; the new transaction's id.
async fn initiate(base: &str, reference: &str) -> String {
    let reply = reqwest::Client::new()
        .post(format!("{base}/api/payments/initiate"))
        .json(&json!({
            "merchantId": MERCHANT,
            "referenceNo": reference,
            "amount": 1050,
            "productCode": "TOPUP",
            "storeId": "S1",
            "payerId": "60123456789",
        }))
        .send()
        .await
        .expect("an answer");
    assert_eq!(reply.status(), 200);
    let body: Value = reply.json().await.expect("JSON");
    body["data"]["transactionId"]
        .as_str()
        .expect("a transaction id")
        .to_owned()
}

/// `GET {base}{path}`: the status and the body.
async fn get(base: &str, path: &str) -> (u16, Value) {
    let reply = reqwest::get(format!("{base}{path}"))
        .await
        .expect("an answer");
    let status = reply.status().as_u16();
    (status, reply.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tests_sandbox_made_on_one_replica_is_served_by_the_other() {
    let Some(url) = postgres_database("in-process sandboxes on PostgreSQL").await else {
        return;
    };
    let (a, b) = (replica(&url, "a").await, replica(&url, "b").await);
    let mine = a.create_sandbox().await.expect("a sandbox on PostgreSQL");
    let on_b = format!("{}/sandboxes/{}", b.base_url(), mine.id());

    // A payment made through the sandbox on A is B's too, under the
    // sandbox alone.
    let id = initiate(&mine.base_url(), "SHARED-1").await;
    let status = format!("/api/payments/{id}/status");
    let (code, body) = get(&on_b, &status).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["data"]["referenceNo"], "SHARED-1");
    let (code, body) = get(&b.base_url(), &status).await;
    assert_eq!(code, 404, "the root does not hold it: {body}");
    assert_eq!(mine.transactions().await.len(), 1);

    // One clock for the sandbox: moved in-process on A, read over HTTP
    // on B; the root's stays.
    let (_, root_before) = get(&b.base_url(), "/_mock/clock").await;
    mine.advance_clock(Duration::from_secs(901)).await;
    let (_, clock) = get(&on_b, "/_mock/clock").await;
    assert_eq!(clock["data"]["offsetSeconds"], 901, "{clock}");
    let (_, root_after) = get(&b.base_url(), "/_mock/clock").await;
    assert_eq!(root_before["data"]["offsetSeconds"], 0, "{root_before}");
    assert_eq!(root_after["data"]["offsetSeconds"], 0, "{root_after}");
    let (_, expired) = get(&on_b, &status).await;
    assert_eq!(expired["data"]["status"], "EXPIRED", "{expired}");

    // Removed, waiting: both replicas say so at once.
    let on_a = mine.base_url();
    mine.remove().await.expect("removed");
    for base in [&on_b, &on_a] {
        let (code, body) = get(base, &status).await;
        assert_eq!(code, 404, "{body}");
        assert_eq!(body["errorCode"], "SANDBOX_NOT_FOUND", "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_sandbox_goes_from_every_replica() {
    let Some(url) = postgres_database("a dropped in-process sandbox").await else {
        return;
    };
    let (a, b) = (replica(&url, "a").await, replica(&url, "b").await);
    let mine = a.create_sandbox().await.expect("a sandbox");
    let on_b = format!("{}/sandboxes/{}", b.base_url(), mine.id());
    assert_eq!(get(&on_b, "/_mock/clock").await.0, 200);
    drop(mine);
    // The drop removes it behind the answers; B sees it gone once the
    // database has (bounded: 10 s at most).
    let mut seen = 0;
    for _ in 0..1000 {
        seen = get(&on_b, "/_mock/clock").await.0;
        if seen == 404 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(seen, 404, "a dropped sandbox stays on the other replica");
    let (_, listed) = get(&b.base_url(), "/_mock/sandboxes").await;
    assert_eq!(listed["data"]["items"], json!([]), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limit_counts_every_replica_and_is_an_error_not_a_panic() {
    let Some(url) = postgres_database("in-process sandboxes' limit").await else {
        return;
    };
    let start = |name: &'static str| {
        let spec: StoreSpec = url.parse().expect("a store URL");
        let mut config = payments_mock_server::Config::default();
        config.max_sandboxes = 1;
        MockServer::builder()
            .config(config)
            .store(spec)
            .replica_name(name)
            .start()
    };
    let a = start("a").await.expect("a");
    let b = start("b").await.expect("b");
    let kept = a.create_sandbox().await.expect("the first");
    assert_eq!(
        b.create_sandbox().await.err(),
        Some(payments_mock_server::SandboxError::TooMany { max: 1 })
    );
    kept.remove().await.expect("removed");
    b.create_sandbox().await.expect("room again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_without_waiting_on_postgres_points_to_create_sandbox() {
    let Some(url) = postgres_database("MockServer::sandbox on PostgreSQL").await else {
        return;
    };
    let a = replica(&url, "a").await;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| a.sandbox()))
        .expect_err("MockServer::sandbox() cannot be kept by PostgreSQL without waiting");
    let message = caught
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| caught.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default();
    assert!(
        message.contains("use `server.create_sandbox().await`"),
        "{message}"
    );
}

/// `transactionId`'s and `createdAt`'s times of an initiate under `base`.
async fn created(base: &str, reference: &str) -> (chrono::DateTime<chrono::Utc>, i64) {
    let id = initiate(base, reference).await;
    let (_, read) = get(base, &format!("/api/payments/{id}/status")).await;
    let data = &read["data"];
    let at: chrono::DateTime<chrono::Utc> = data["createdAt"]
        .as_str()
        .expect("createdAt")
        .parse()
        .expect("a time");
    let id: uuid::Uuid = data["transactionId"]
        .as_str()
        .expect("an id")
        .parse()
        .expect("a UUID");
    let (secs, nanos) = id.get_timestamp().expect("a v7 id").to_unix();
    let id_millis = i64::try_from(secs * 1000 + u64::from(nanos / 1_000_000)).expect("in range");
    (at, id_millis)
}

/// A sandbox whose clock is a day ahead makes a transaction; the root's
/// next one is still created now, with an id of now: one sandbox's time
/// never reaches another's ids or times.
async fn a_clock_ahead_stays_in_its_sandbox(
    server: &MockServer,
    sandbox: &payments_mock_server::Sandbox,
) {
    sandbox.advance_clock(Duration::from_secs(86_400)).await;
    let (ahead, ahead_id) = created(&sandbox.base_url(), "AHEAD-1").await;
    let (here, here_id) = created(&server.base_url(), "HERE-1").await;
    let real = chrono::Utc::now();
    assert!(ahead > real + chrono::Duration::hours(23), "{ahead}");
    assert_eq!(
        ahead_id,
        ahead.timestamp_millis(),
        "the id carries its creation time"
    );
    assert!(
        (real - here).num_seconds().abs() < 60,
        "the root's transaction was created at {here}, now is {real}"
    );
    assert!(
        (here_id - here.timestamp_millis()).abs() < 1_000,
        "the root's id says {here_id} ms, its createdAt {here}"
    );
}

#[tokio::test]
async fn a_sandboxs_clock_never_moves_the_roots_ids_in_memory() {
    let server = MockServer::start().await;
    let sandbox = server.sandbox();
    a_clock_ahead_stays_in_its_sandbox(&server, &sandbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxs_clock_never_moves_the_roots_ids_or_times_on_postgres() {
    let Some(url) = postgres_database("ids of one clock on PostgreSQL").await else {
        return;
    };
    let server = replica(&url, "a").await;
    let sandbox = server.create_sandbox().await.expect("a sandbox");
    a_clock_ahead_stays_in_its_sandbox(&server, &sandbox).await;
}
