//! What the journal keeps of a body: the newest whole, however large (up
//! to the 64 KiB a request may send), older large ones cut to their first
//! KiB with their whole length, so that a journal of large bodies stays
//! small (reproduced: 1,000 bodies of 64 KiB took 68 MB a sandbox).

use payments_mock_server::MockServer;
use serde_json::{Value, json};

use super::{MERCHANT, call};

/// The bytes of bodies a journal keeps whole (`BODY_BUDGET`), and what an
/// older large body keeps (`BODY_CUT`).
const BUDGET: usize = 512 * 1024;
const CUT: usize = 1024;
const LARGE: usize = 64 * 1024;

/// A valid initiate at its largest: `extraProperties` at its 16 KiB, as
/// the interface types it (a JSON string holding an object).
fn largest_valid() -> String {
    let inner = json!({ "note": "x".repeat(16 * 1024 - 20) }).to_string();
    assert!(inner.len() <= 16 * 1024, "{}", inner.len());
    json!({
        "merchantId": MERCHANT,
        "referenceNo": "BIG-1",
        "amount": 1050,
        "productCode": "TOPUP",
        "storeId": "S1",
        "payerId": "60123456789",
        "description": "é".repeat(255),
        "extraProperties": inner,
    })
    .to_string()
}

#[tokio::test]
async fn older_large_bodies_are_cut_and_say_so_the_newest_is_whole() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let client = reqwest::Client::new();
    let junk = vec![1u8; LARGE];
    for _ in 0..30 {
        let answer = client
            .post(format!("{base}/api/payments/initiate"))
            .header("content-type", "application/json")
            .body(junk.clone())
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status(), 400);
    }
    let valid = largest_valid();
    let answer = client
        .post(format!("{base}/api/payments/initiate"))
        .header("content-type", "application/json")
        .body(valid.clone())
        .send()
        .await
        .expect("an answer");
    assert_eq!(
        answer.status(),
        200,
        "{}",
        answer.text().await.unwrap_or_default()
    );

    // Over HTTP.
    let (status, page) = call(
        &client,
        reqwest::Method::GET,
        format!("{base}/_mock/requests"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    let items = page["data"]["items"].as_array().expect("items");
    assert_eq!(items.len(), 31);
    let newest = &items[30];
    assert_eq!(
        newest["body"].as_str(),
        Some(valid.as_str()),
        "byte for byte"
    );
    assert_eq!(newest["bodyLength"], Value::Null);
    let mut whole = 0;
    let mut cut = 0;
    for item in &items[..30] {
        let body = item["body"].as_str().expect("a body");
        if item["bodyLength"].is_null() {
            assert_eq!(body.len(), LARGE);
            whole += body.len();
        } else {
            assert_eq!(item["bodyLength"], json!(LARGE), "{}", item["seq"]);
            assert_eq!(body, "\u{1}".repeat(CUT));
            cut += 1;
        }
    }
    assert!(whole + valid.len() <= BUDGET, "{whole}");
    assert!(cut >= 30 - BUDGET / LARGE, "{cut} cut");
    // The listing's bodies are bounded: each cut one its first KiB.
    let bodies: usize = items
        .iter()
        .map(|i| i["body"].as_str().map_or(0, str::len))
        .sum();
    assert!(bodies <= BUDGET + 30 * CUT, "{bodies}");

    // One entry asked for is the newest, whole.
    let (_, one) = call(
        &client,
        reqwest::Method::GET,
        format!("{base}/_mock/requests?limit=1"),
        None,
    )
    .await;
    let one = one["data"]["items"].as_array().expect("items");
    assert_eq!(one.len(), 1);
    assert_eq!(one[0]["body"].as_str(), Some(valid.as_str()));

    // In-process, the same.
    let entries = server.requests().await;
    assert_eq!(entries.len(), 31);
    assert_eq!(entries[30].body, valid);
    assert_eq!(entries[30].body_length, None);
    assert_eq!(entries[0].body_length, Some(LARGE));
    assert_eq!(entries[0].body.len(), CUT);
}

#[tokio::test]
async fn ordinary_requests_are_kept_whole() {
    // A thousand valid requests at their largest (~17 KiB each) exceed the
    // budget; a thousand ordinary ones (a few hundred bytes) never do.
    let server = MockServer::start().await;
    let base = server.base_url();
    let client = reqwest::Client::new();
    let mut sent = Vec::new();
    for n in 0..40 {
        let body = json!({
            "merchantId": MERCHANT,
            "referenceNo": format!("ORD-{n}"),
            "amount": 1050,
            "productCode": "TOPUP",
            "storeId": "S1",
            "payerId": "60123456789",
            "extraProperties": {"cart": [n, "é", "\u{1F600}"]},
        })
        .to_string();
        let answer = client
            .post(format!("{base}/api/payments/initiate"))
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status(), 200);
        sent.push(body);
    }
    let entries = server.requests().await;
    let kept: Vec<&str> = entries.iter().map(|e| e.body.as_str()).collect();
    assert_eq!(kept, sent);
    assert!(entries.iter().all(|e| e.body_length.is_none()));
}
