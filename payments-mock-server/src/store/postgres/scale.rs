//! A whole server on PostgreSQL with many transactions, put in with SQL
//! (fast): an admin list whose filter keeps few rows reads them all and
//! answers, and the health answers without counting them. PostgreSQL
//! from `PAYMENTS_TEST_POSTGRES_URL` (`scripts/postgres.sh`); without
//! it the tests say loudly that they were skipped (under `CI=true` they
//! fail instead).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{MockServer, StoreSpec};

const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

/// Copies of the one unconfirmed transaction put in with SQL: enough
/// that reading them all in batches took longer than 4 s (a debug build).
const MANY: i64 = 600_000;

/// A fresh database on the test server, as a store URL, and a client to
/// it; `None` when there is no test server.
async fn database(test: &str) -> Option<(String, tokio_postgres::Client)> {
    let server = match std::env::var("PAYMENTS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{test}: CI=true but PAYMENTS_TEST_POSTGRES_URL is not set")
        }
        _ => {
            eprintln!("SKIPPED {test}: no PostgreSQL (set PAYMENTS_TEST_POSTGRES_URL)");
            return None;
        }
    };
    let (admin, connection) = tokio_postgres::connect(&server, tokio_postgres::NoTls)
        .await
        .expect("the test PostgreSQL server answers");
    tokio::spawn(connection);
    let name = format!("mock_{}", uuid::Uuid::new_v4().simple());
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .expect("a test database");
    let mut url = url::Url::parse(&server).expect("a URL");
    url.set_path(&format!("/{name}"));
    let (client, connection) = tokio_postgres::connect(url.as_str(), tokio_postgres::NoTls)
        .await
        .expect("the test database answers");
    tokio::spawn(connection);
    Some((url.to_string(), client))
}

async fn initiate(http: &reqwest::Client, base: &str, reference: &str) -> String {
    let made: Value = http
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
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    made["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned()
}

/// A server on a fresh database with `MANY` INITIATED transactions (ids
/// before the others), two SUCCESSFUL ones after them all; the server, its
/// database, and the confirmed ids.
async fn filled(test: &str) -> Option<(MockServer, tokio_postgres::Client, Vec<String>)> {
    let (url, db) = database(test).await?;
    let spec: StoreSpec = url.parse().expect("a store URL");
    let server = MockServer::builder()
        .store(spec)
        .start()
        .await
        .expect("started");
    let http = reqwest::Client::new();
    let base = server.base_url();
    let waiting = initiate(&http, &base, "waiting").await;
    db.execute(
        "INSERT INTO mock_transactions (id, merchant_id, reference_no, amount_minor, \
         currency_code, currency_exponent, product_code, store_id, payer_id, initial, \
         created_at, expires_at, sandbox) \
         SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(k), 12, '0'))::uuid, merchant_id, \
         'copy-' || k, amount_minor, currency_code, currency_exponent, product_code, store_id, \
         payer_id, initial, created_at, expires_at, sandbox \
         FROM mock_transactions, generate_series(1, $1::bigint) AS k WHERE id = $2::text::uuid",
        &[&MANY, &waiting],
    )
    .await
    .expect("copies");
    db.batch_execute("ANALYZE mock_transactions")
        .await
        .expect("analyzed");
    let mut confirmed = Vec::new();
    for n in 0..2 {
        let id = initiate(&http, &base, &format!("confirmed-{n}")).await;
        let reply = http
            .post(format!("{base}/api/payments/confirm"))
            .json(&json!({
                "merchantId": MERCHANT,
                "referenceNo": format!("confirmed-{n}"),
                "transactionId": id,
            }))
            .send()
            .await
            .expect("an answer");
        assert_eq!(reply.status(), 200);
        let answer: Value = reply.json().await.expect("JSON");
        assert_eq!(answer["data"]["status"], "SUCCESSFUL", "{answer}");
        confirmed.push(id);
    }
    Some((server, db, confirmed))
}

/// `GET /_mock/transactions?status=…` over a sandbox of many rows, few of
/// them with that status, answers 200 with them (it read past 4 s in
/// batches: 503 STORE_UNAVAILABLE, however often retried).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_filtered_list_over_many_rows_answers() {
    let Some((server, _db, confirmed)) =
        filled("a_status_filtered_list_over_many_rows_answers").await
    else {
        return;
    };
    let http = reqwest::Client::new();
    let started = Instant::now();
    let reply = http
        .get(format!(
            "{}/_mock/transactions?status=SUCCESSFUL&limit=10",
            server.base_url()
        ))
        .timeout(Duration::from_secs(120))
        .send()
        .await
        .expect("an answer");
    let took = started.elapsed();
    let status = reply.status();
    let body: Value = reply.json().await.expect("JSON");
    assert_eq!(status, 200, "{body} after {took:?}");
    let ids: Vec<&str> = body["data"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| item["transactionId"].as_str().expect("an id"))
        .collect();
    assert_eq!(ids, confirmed, "the confirmed ones, oldest first");
    assert!(body["data"]["next"].is_null(), "{body}");
    eprintln!("status-filtered list over {MANY} rows: {took:?}");
    server.shutdown().await;
}
