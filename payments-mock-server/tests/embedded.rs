//! The light library, as an application's tests embed it with
//! `default-features = false`: every rule, state and fault, the virtual
//! clock, the journal and the admin API, with no page, no OpenAPI document,
//! no database store. CI runs this file with `--no-default-features` (and
//! `cargo test --workspace` runs it with everything on: it must hold both
//! ways).

use std::time::Duration;

use payments_mock_server::{Fault, MockServer, PayerAction, Status};
use serde_json::{Value, json};

// An answer-other with nothing to show is met nowhere.
#[path = "embedded/answer_other.rs"]
mod answer_other;
// An advance past the clock's end, on a server and a sandbox.
#[path = "embedded/clock_end.rs"]
mod clock_end;
// The test's own look is no coverage; a fault's limits are the same
// in-process and over HTTP.
#[path = "embedded/controls.rs"]
mod controls;
// The journal keeps the newest bodies whole, older large ones cut.
#[path = "embedded/journal_bound.rs"]
mod journal_bound;
// The journal keeps ordinary headers whole, large ones bounded.
#[path = "embedded/journal_headers.rs"]
mod journal_headers;
// A repeated header keeps all its values, each line in `headerLines`.
#[path = "embedded/journal_lines.rs"]
mod journal_lines;
// HTTP/1.x only, no CORS, the controls a page elsewhere is refused: as
// the guide says.
#[path = "embedded/browsers_and_http2.rs"]
mod browsers_and_http2;
// A random fault seed is logged as a string (a JSON reader keeps it exact).
#[path = "embedded/fault_seed_log.rs"]
mod fault_seed_log;
// A hang ends when its client leaves (the kernel's TCP table tells).
#[cfg(target_os = "linux")]
#[path = "embedded/hang_client_left.rs"]
mod hang_client_left;
// Deleting a sandbox ends its hanging requests.
#[path = "embedded/hang_sandbox_removed.rs"]
mod hang_sandbox_removed;
// One mock, several merchants' keys: what each may name, and see.
#[path = "embedded/tenancy.rs"]
mod tenancy;

const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

async fn call(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = client.request(method, url);
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("a body");
    (
        status,
        serde_json::from_slice(&bytes).expect("the envelope"),
    )
}

fn initiate(reference: &str, product: &str) -> Value {
    json!({
        "merchantId": MERCHANT,
        "referenceNo": reference,
        "amount": 1050,
        "productCode": product,
        "storeId": "S1",
        "payerId": "60123456789",
        "returnUrl": "https://shop.example/back?order=17",
    })
}

#[tokio::test]
async fn the_light_mock_has_every_rule_state_fault_the_clock_and_the_journal() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let client = reqwest::Client::new();
    let post = reqwest::Method::POST;

    // A rule: every failed one listed.
    let (status, body) = call(
        &client,
        post.clone(),
        format!("{base}/api/payments/initiate"),
        Some(json!({ "amount": 0 })),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(body["errorCode"], "VALIDATION_ERROR");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("merchantId is required")
                && m.contains("amount must be greater than 0")),
        "{body}"
    );

    // A state, and the clock moving it.
    let (status, body) = call(
        &client,
        post.clone(),
        format!("{base}/api/payments/initiate"),
        Some(initiate("INV-1", "TOPUP")),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["status"], "INITIATED");
    server.advance_clock(Duration::from_secs(16 * 60)).await;
    let stored = server.transactions().await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].status, Status::Expired.as_str());

    // A fault: the change is made, then 500.
    server.inject_faults([Fault::CommitThenError]);
    let (status, body) = call(
        &client,
        post.clone(),
        format!("{base}/api/payments/initiate"),
        Some(initiate("INV-2", "ONLINEBANKING")),
    )
    .await;
    assert_eq!(
        (status, &body["errorCode"]),
        (500, &json!("INTERNAL_ERROR"))
    );
    let id = server
        .transactions()
        .await
        .into_iter()
        .find(|t| t.reference_no == "INV-2")
        .expect("committed before the 500")
        .transaction_id;

    // The redirect product and its payer, without any page.
    let (status, body) = call(
        &client,
        post.clone(),
        format!("{base}/api/payments/confirm"),
        Some(json!({ "transactionId": id, "referenceNo": "INV-2" })),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["status"], "CONFIRMED");
    let outcome = server
        .payer(&id.to_string(), PayerAction::Pay)
        .await
        .expect("waiting for the payer");
    assert_eq!(outcome.status, "SUCCESSFUL");
    assert!(
        outcome
            .redirect_to
            .starts_with("https://shop.example/back?order=17&transactionId=")
    );

    // The journal and the admin API.
    let journal = server.requests().await;
    assert_eq!(journal.len(), 4, "{journal:?}");
    assert_eq!(journal[2].fault.as_deref(), Some("commit-then-error"));
    let (status, body) = call(
        &client,
        reqwest::Method::GET,
        format!("{base}/_mock/transactions"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["items"].as_array().map(Vec::len), Some(2));
    let (status, _) = call(&client, post, format!("{base}/_mock/reset"), None).await;
    assert_eq!(status, 200);
    assert!(server.transactions().await.is_empty());
    server.shutdown().await;
}

/// The clock goes up to about 292 years ahead; an advance past that is
/// refused loudly, as the HTTP control answers 400, instead of the clock
/// stopping short while the test goes on as if it had moved.
#[tokio::test]
#[should_panic(expected = "the virtual clock goes at most about 292 years")]
async fn an_advance_past_the_clocks_end_panics() {
    let server = MockServer::start().await;
    let year = Duration::from_secs(365 * 86_400);
    server.advance_clock(year * 200).await;
    server.advance_clock(year * 100).await;
}

/// Up to the end, it moves.
#[tokio::test]
async fn the_clock_moves_up_to_its_end() {
    let server = MockServer::start().await;
    let before = server.now().await;
    let year = Duration::from_secs(365 * 86_400);
    server.advance_clock(year * 290).await;
    let after = server.now().await;
    assert!((after - before).num_days() >= 290 * 365, "{before} {after}");
    server.shutdown().await;
}
