//! One mock shared by merchants' teams, each with a key bound to its
//! merchant, and an admin key: what each key gets of another merchant's
//! things, and which of the journal's entries each key sees.

use payments_mock_server::MockServer;
use serde_json::{Value, json};
use uuid::Uuid;

const A: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";
const B: &str = "0b0c8a9e-52a4-4c2e-8f6f-2f8f3c4d5e6a";
const KEY_A: &str = "sk_shop_a";
const KEY_B: &str = "sk_shop_b";
const ADMIN: &str = "admin-key-0123456789";

/// A mock with A's key, B's key and an admin key.
async fn shared_mock() -> MockServer {
    MockServer::builder()
        .api_key(KEY_A, Some(Uuid::parse_str(A).expect("a UUID")))
        .api_key(KEY_B, Some(Uuid::parse_str(B).expect("a UUID")))
        .admin_key(ADMIN)
        .start()
        .await
        .expect("the mock starts")
}

/// An answer: its status and envelope, with its `X-Request-Id` put in
/// as `requestId`.
async fn send(request: reqwest::RequestBuilder, key: &str) -> (u16, Value) {
    let response = request.bearer_auth(key).send().await.expect("an answer");
    let status = response.status().as_u16();
    let id = response
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = response.bytes().await.expect("a body");
    let mut envelope: Value = serde_json::from_slice(&bytes).expect("the envelope");
    envelope["requestId"] = json!(id);
    (status, envelope)
}

/// `merchant` initiates `reference` with `key`: the transaction's id.
async fn initiate(base: &str, key: &str, merchant: &str, reference: &str) -> String {
    let body = json!({
        "merchantId": merchant,
        "referenceNo": reference,
        "amount": 1050,
        "productCode": "TOPUP",
        "storeId": "S1",
        "payerId": "60123456789",
    });
    let client = reqwest::Client::new();
    let (status, answer) = send(
        client
            .post(format!("{base}/api/payments/initiate"))
            .header("content-type", "application/json")
            .body(body.to_string()),
        key,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    answer["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned()
}

/// The request ids of the journal's entries `key` sees.
async fn journal_ids(base: &str, key: &str) -> Vec<String> {
    let (status, page) = send(
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

#[tokio::test]
async fn a_bound_key_naming_another_merchant_on_a_reference_read_is_refused_as_on_initiate() {
    let server = shared_mock().await;
    let base = server.base_url();
    let client = reqwest::Client::new();
    let a_id = initiate(&base, KEY_A, A, "SHARED").await;
    let _ = initiate(&base, KEY_B, B, "SHARED").await;
    let read = |query: &str| {
        client.get(format!(
            "{base}/api/payments/reference/SHARED/status{query}"
        ))
    };

    // A's key naming B: refused, with initiate's code and words.
    let (status, refused) = send(read(&format!("?merchantId={B}")), KEY_A).await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(refused["errorCode"], "FORBIDDEN", "{refused}");
    assert_eq!(
        refused["message"],
        format!("this API key may only act for merchant {A}, not {B}")
    );
    let refused_id = refused["requestId"].as_str().expect("an id").to_owned();
    let on_initiate = {
        let body = json!({
            "merchantId": B, "referenceNo": "X", "amount": 1050,
            "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789",
        });
        send(
            client
                .post(format!("{base}/api/payments/initiate"))
                .header("content-type", "application/json")
                .body(body.to_string()),
            KEY_A,
        )
        .await
    };
    assert_eq!(on_initiate.0, 403);
    assert_eq!(on_initiate.1["errorCode"], refused["errorCode"]);
    assert_eq!(on_initiate.1["message"], refused["message"]);

    // Naming itself, or nobody: A's transaction, as always.
    for query in [format!("?merchantId={A}"), String::new()] {
        let (status, found) = send(read(&query), KEY_A).await;
        assert_eq!(status, 200, "{found}");
        assert_eq!(found["data"]["transactionId"], a_id.as_str(), "{found}");
    }
    // A malformed merchantId is still a VALIDATION_ERROR first.
    let (status, invalid) = send(read("?merchantId=x"), KEY_A).await;
    assert_eq!(
        (status, &invalid["errorCode"]),
        (400, &json!("VALIDATION_ERROR"))
    );

    // The refusal is A's own request (A debugs its 403 from its journal)
    // and the admin's, never B's.
    assert!(journal_ids(&base, ADMIN).await.contains(&refused_id));
    assert!(journal_ids(&base, KEY_A).await.contains(&refused_id));
    assert!(!journal_ids(&base, KEY_B).await.contains(&refused_id));
    server.shutdown().await;
}
