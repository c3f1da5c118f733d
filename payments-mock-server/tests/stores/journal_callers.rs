//! Whose view of the journal a request is in, on a server over each store
//! (on PostgreSQL, two replicas of one database): the journal keeps the
//! merchant of the key that sent a request, and a request a merchant's
//! key sent is that merchant's alone (and the admin's), whatever it names
//! or was answered. Merchant B's key naming merchant A's things (an
//! initiate for A answered by a fault, a `VALIDATION_ERROR` or a 403, a
//! read or confirm of A's transaction or reference) shows in B's journal,
//! never in A's. And A's probes of B's reference or transaction show in
//! A's journal just as its probes of what nobody holds: whether its own
//! request shows never tells A what another merchant holds (it did: those
//! were the admin's only). A's refused requests (403) are A's too.
//! Entries written before the store kept the key's merchant keep the rule
//! by what they name.

use payments_mock_server::{MockServer, StoreSpec};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::backends::{self, postgres_database};

const A: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";
const B: &str = "0b0c8a9e-52a4-4c2e-8f6f-2f8f3c4d5e6a";
const KEY_A: &str = "sk_shop_a";
const KEY_B: &str = "sk_shop_b";
const ADMIN: &str = "admin-key-0123456789";

async fn server(spec: StoreSpec, name: &str) -> MockServer {
    MockServer::builder()
        .store(spec)
        .replica_name(name)
        .api_key(KEY_A, Some(Uuid::parse_str(A).expect("a UUID")))
        .api_key(KEY_B, Some(Uuid::parse_str(B).expect("a UUID")))
        .admin_key(ADMIN)
        .start()
        .await
        .expect("a server")
}

/// An answer's status, envelope (when JSON) and `X-Request-Id`.
async fn send(request: reqwest::RequestBuilder, key: &str) -> (u16, Value, String) {
    let response = request.bearer_auth(key).send().await.expect("an answer");
    let status = response.status().as_u16();
    let id = response
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = response.bytes().await.expect("a body");
    let envelope = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, envelope, id)
}

fn initiate_body(merchant: &str, reference: &str) -> Value {
    json!({
        "merchantId": merchant,
        "referenceNo": reference,
        "amount": 1050,
        "productCode": "TOPUP",
        "storeId": "S1",
        "payerId": "60123456789",
    })
}

fn initiate(base: &str, body: &Value) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(format!("{base}/api/payments/initiate"))
        .header("content-type", "application/json")
        .body(body.to_string())
}

/// `merchant` initiates `reference` with `key`: the transaction's id and
/// the request's id.
async fn made(base: &str, key: &str, merchant: &str, reference: &str) -> (String, String) {
    let (status, answer, request) =
        send(initiate(base, &initiate_body(merchant, reference)), key).await;
    assert_eq!(status, 200, "{answer}");
    let id = answer["data"]["transactionId"].as_str().expect("an id");
    (id.to_owned(), request)
}

/// The request ids of the journal's entries `key` sees.
async fn journal_ids(base: &str, key: &str) -> Vec<String> {
    let (status, page, _) = send(
        reqwest::Client::new().get(format!("{base}/_mock/requests")),
        key,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page["data"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|e| e["requestId"].as_str().expect("a request id").to_owned())
        .collect()
}

/// Who sees the entry `request`, over `bases` (each replica alike): the
/// admin, A, B.
async fn seen_by(bases: &[String], request: &str) -> (bool, bool, bool) {
    let mut seen = None;
    for base in bases {
        let here = (
            journal_ids(base, ADMIN).await.iter().any(|r| r == request),
            journal_ids(base, KEY_A).await.iter().any(|r| r == request),
            journal_ids(base, KEY_B).await.iter().any(|r| r == request),
        );
        assert!(seen.is_none_or(|s| s == here), "replicas differ at {base}");
        seen = Some(here);
    }
    seen.expect("a replica")
}

const A_S: (bool, bool, bool) = (true, true, false);
const B_S: (bool, bool, bool) = (true, false, true);

/// A status read of `path` on `base` with `key`: its status, `errorCode`
/// and request id.
async fn read(base: &str, path: &str, key: &str) -> (u16, Value, String) {
    let (status, answer, id) = send(reqwest::Client::new().get(format!("{base}{path}")), key).await;
    (status, answer["errorCode"].clone(), id)
}

/// A confirm of `id` (`reference`) on `base` with `key`, with the fault `fault` if any.
async fn confirm(
    base: &str,
    id: &str,
    reference: &str,
    key: &str,
    fault: Option<&str>,
) -> (u16, Value, String) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/api/payments/confirm"))
        .header("content-type", "application/json")
        .body(json!({"transactionId": id, "referenceNo": reference}).to_string());
    if let Some(fault) = fault {
        request = request.header("x-mock-fault", fault);
    }
    send(request, key).await
}

/// Each way B's key names A's things, each way A's key names B's or
/// nobody's, and A's own requests, on the servers at `bases` (several:
/// replicas of one store, the requests spread over them); the request ids
/// of A's own (for a check after a restart).
async fn b_never_writes_into_as_journal(bases: &[String]) -> Vec<String> {
    let on = |n: usize| bases[n % bases.len()].clone();
    let client = reqwest::Client::new();
    let (a_id, a_made) = made(&on(0), KEY_A, A, "SHARED").await;
    let _ = made(&on(1), KEY_B, B, "SHARED").await;
    let _ = made(&on(2), KEY_A, A, "A-ONLY").await;
    let (b_id, _) = made(&on(3), KEY_B, B, "B-ONLY").await;

    let mut probes = Vec::new();
    // B's key initiating for A, answered by an injected fault.
    let (status, answer, id) = send(
        initiate(&on(3), &initiate_body(A, "B-PROBE")).header("x-mock-fault", "internal-error"),
        KEY_B,
    )
    .await;
    assert_eq!(status, 500, "{answer}");
    probes.push(("initiate for A, faulted", id));
    // ... answered VALIDATION_ERROR (no amount).
    let mut invalid = initiate_body(A, "B-PROBE");
    invalid["amount"] = Value::Null;
    let (status, answer, id) = send(initiate(&on(4), &invalid), KEY_B).await;
    assert_eq!(
        (status, &answer["errorCode"]),
        (400, &json!("VALIDATION_ERROR")),
        "{answer}"
    );
    probes.push(("initiate for A, invalid", id));
    // ... refused for naming A.
    let (status, answer, id) = send(initiate(&on(5), &initiate_body(A, "B-PROBE")), KEY_B).await;
    assert_eq!(status, 403, "{answer}");
    probes.push(("initiate for A, refused", id));
    // B's key reading A's transaction by id, answered by a fault.
    let (status, answer, id) = send(
        client
            .get(format!("{}/api/payments/{a_id}/status", on(6)))
            .header("x-mock-fault", "rate-limit"),
        KEY_B,
    )
    .await;
    assert_eq!(status, 429, "{answer}");
    probes.push(("A's transaction by id, faulted", id));
    // ... answered TRANSACTION_NOT_FOUND.
    let (status, code, id) = read(&on(7), &format!("/api/payments/{a_id}/status"), KEY_B).await;
    assert_eq!((status, code), (404, json!("TRANSACTION_NOT_FOUND")));
    probes.push(("A's transaction by id", id));
    // B's key confirming A's transaction, faulted, and answered.
    let (status, answer, id) =
        confirm(&on(8), &a_id, "SHARED", KEY_B, Some("internal-error")).await;
    assert_eq!(status, 500, "{answer}");
    probes.push(("confirm of A's transaction, faulted", id));
    let (status, answer, id) = confirm(&on(8), &a_id, "SHARED", KEY_B, None).await;
    assert_eq!(
        (status, &answer["errorCode"]),
        (400, &json!("TRANSACTION_NOT_FOUND")),
        "{answer}"
    );
    probes.push(("confirm of A's transaction", id));
    // B's key on a reference only A holds, faulted, and answered.
    let (status, answer, id) = send(
        client
            .get(format!("{}/api/payments/reference/A-ONLY/status", on(9)))
            .header("x-mock-fault", "internal-error"),
        KEY_B,
    )
    .await;
    assert_eq!(status, 500, "{answer}");
    probes.push(("A's reference, faulted", id));
    let (status, code, id) = read(&on(9), "/api/payments/reference/A-ONLY/status", KEY_B).await;
    assert_eq!((status, code), (404, json!("TRANSACTION_NOT_FOUND")));
    probes.push(("A's reference", id));
    for (what, id) in &probes {
        assert_eq!(seen_by(bases, id).await, B_S, "B's own: {what}");
    }

    // A's own: its initiate; its read of the reference B holds too (the
    // read is scoped to A's key: A's transaction); its reads of a
    // reference and a transaction nobody holds, and of B's, answered
    // alike; its confirm of B's transaction; its refused requests; a body
    // that is not JSON.
    let (status, answer, shared_read) = send(
        client.get(format!("{}/api/payments/reference/SHARED/status", on(10))),
        KEY_A,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["data"]["transactionId"], a_id.as_str(), "{answer}");
    let mut own = vec![a_made, shared_read];
    let nobodys_id = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
    for (n, path) in [
        "/api/payments/reference/NOBODYS/status".to_owned(),
        "/api/payments/reference/B-ONLY/status".to_owned(),
        format!("/api/payments/{nobodys_id}/status"),
        format!("/api/payments/{b_id}/status"),
    ]
    .iter()
    .enumerate()
    {
        let (status, code, id) = read(&on(11 + n), path, KEY_A).await;
        assert_eq!(
            (status, code),
            (404, json!("TRANSACTION_NOT_FOUND")),
            "{path}"
        );
        own.push(id);
    }
    let (status, answer, b_confirmed) = confirm(&on(15), &b_id, "B-ONLY", KEY_A, None).await;
    assert_eq!(
        (status, &answer["errorCode"]),
        (400, &json!("TRANSACTION_NOT_FOUND")),
        "{answer}"
    );
    own.push(b_confirmed);
    let (status, answer, refused) =
        send(initiate(&on(16), &initiate_body(B, "A-PROBE")), KEY_A).await;
    assert_eq!(status, 403, "{answer}");
    own.push(refused);
    let (status, code, refused_read) = read(
        &on(17),
        &format!("/api/payments/reference/A-ONLY/status?merchantId={B}"),
        KEY_A,
    )
    .await;
    assert_eq!((status, code), (403, json!("FORBIDDEN")));
    own.push(refused_read);
    let (status, _, not_json) = send(
        client
            .post(format!("{}/api/payments/initiate", on(18)))
            .header("content-type", "application/json")
            .body("{not json"),
        KEY_A,
    )
    .await;
    assert_eq!(status, 400);
    own.push(not_json);
    for id in &own {
        assert_eq!(seen_by(bases, id).await, A_S, "A's own {id}");
    }
    own
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_another_merchants_key_never_writes_into_a_merchants_journal() {
    let server = server(StoreSpec::Memory, "memory").await;
    b_never_writes_into_as_journal(&[server.base_url()]).await;
    server.shutdown().await;
}

/// And across a restart: the file keeps whose key sent each entry.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_another_merchants_key_never_writes_into_a_merchants_journal() {
    let (_dir, path) = backends::sqlite_path();
    let first = server(StoreSpec::Sqlite(path.clone()), "sqlite").await;
    let own = b_never_writes_into_as_journal(&[first.base_url()]).await;
    let before = journal_ids(&first.base_url(), KEY_A).await;
    let b_before = journal_ids(&first.base_url(), KEY_B).await;
    first.shutdown().await;
    let again = server(StoreSpec::Sqlite(path), "sqlite").await;
    assert_eq!(journal_ids(&again.base_url(), KEY_A).await, before);
    assert_eq!(journal_ids(&again.base_url(), KEY_B).await, b_before);
    for id in &own {
        assert_eq!(seen_by(&[again.base_url()], id).await, A_S, "{id}");
    }
    again.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_another_merchants_key_never_writes_into_a_merchants_journal() {
    let Some(url) = postgres_database("journal callers on two replicas").await else {
        return;
    };
    let a = server(url.parse().expect("a store URL"), "a").await;
    let b = server(url.parse().expect("a store URL"), "b").await;
    b_never_writes_into_as_journal(&[a.base_url(), b.base_url()]).await;
    a.shutdown().await;
    b.shutdown().await;
}

/// A's initiate and B's, journaled; then the store as the version before
/// the column left it (`downgrade`): the entries read, each still its
/// merchant's by what it names.
async fn entries_before_the_column_read_by_what_they_name(
    spec: StoreSpec,
    downgrade: impl AsyncFnOnce(),
) {
    let first = server(spec.clone(), "first").await;
    let base = first.base_url();
    let (_, a_made) = made(&base, KEY_A, A, "OLD-A").await;
    let (_, b_made) = made(&base, KEY_B, B, "OLD-B").await;
    assert_eq!(seen_by(&[base], &a_made).await, A_S);
    first.shutdown().await;
    downgrade().await;
    let again = server(spec, "again").await;
    let base = again.base_url();
    assert_eq!(seen_by(std::slice::from_ref(&base), &a_made).await, A_S);
    assert_eq!(seen_by(&[base], &b_made).await, (true, false, true));
    again.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_entries_written_before_the_caller_column_still_read() {
    let (_dir, path) = backends::sqlite_path();
    let file = path.clone();
    entries_before_the_column_read_by_what_they_name(StoreSpec::Sqlite(path), async move || {
        let conn = rusqlite::Connection::open(&file).expect("opens");
        conn.execute_batch(
            "ALTER TABLE mock_journal DROP COLUMN caller; \
             DELETE FROM mock_schema_history WHERE version >= 5;",
        )
        .expect("back to V4");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_entries_written_before_the_caller_column_still_read() {
    let Some(url) = postgres_database("journal entries before the caller column").await else {
        return;
    };
    let spec: StoreSpec = url.parse().expect("a store URL");
    entries_before_the_column_read_by_what_they_name(spec, async move || {
        let (db, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .expect("connects");
        tokio::spawn(connection);
        db.batch_execute(
            "ALTER TABLE mock_journal DROP COLUMN caller; \
             DELETE FROM mock_schema_history WHERE version >= 7;",
        )
        .await
        .expect("back to V6");
    })
    .await;
}
