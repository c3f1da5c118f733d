use std::time::Duration;

use payments_mock_server::seed::{SeenAnswer, SeenInitiate, Sighting};
use payments_mock_server::{Config, MockServer, SandboxError};
use serde_json::{Value, json};

/// An API key set before `config` is kept: authentication is on.
#[tokio::test]
async fn config_after_a_setter_keeps_the_setting() {
    let server = MockServer::builder()
        .api_key("sk_test_kept", None)
        .fault_seed(7)
        .config(Config::default())
        .start()
        .await
        .expect("started");
    let status = reqwest::Client::new()
        .get(format!(
            "{}/api/payments/reference/X/status",
            server.base_url()
        ))
        .send()
        .await
        .expect("answered")
        .status();
    assert_eq!(status, 401, "no key sent: authentication must be on");
    assert_eq!(server.fault_seed(), 7);
}

/// A setter after `config` applies on top of it, and `config`'s own
/// values stay where no setter spoke.
#[tokio::test]
async fn a_setter_after_config_applies_on_top_of_it() {
    let mut config = Config::default();
    config.max_sandboxes = 2;
    let server = MockServer::builder()
        .config(config)
        .fault_seed(9)
        .start()
        .await
        .expect("started");
    assert_eq!(server.fault_seed(), 9);
    let _a = server.create_sandbox().await.expect("one");
    let _b = server.create_sandbox().await.expect("two");
    assert_eq!(
        server.create_sandbox().await.err(),
        Some(SandboxError::TooMany { max: 2 })
    );
}

/// `--max-sandboxes` and `--sandbox-ttl` as builder methods.
#[tokio::test]
async fn max_sandboxes_and_sandbox_ttl() {
    let server = MockServer::builder()
        .max_sandboxes(1)
        .sandbox_ttl(Duration::from_secs(60))
        .start()
        .await
        .expect("started");
    let _only = server.create_sandbox().await.expect("one");
    assert_eq!(
        server.create_sandbox().await.err(),
        Some(SandboxError::TooMany { max: 1 })
    );
    // Checked as the flag is: whole seconds.
    let refused = MockServer::builder()
        .sandbox_ttl(Duration::from_millis(1500))
        .start()
        .await
        .expect_err("refused");
    assert!(refused.to_string().contains("sandbox"), "{refused}");
}

fn object(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("an object"),
    }
}

/// `--seed-from` as a builder method: the transactions seen, placed
/// before the first request.
#[tokio::test]
async fn seed_places_what_was_seen() {
    let id = "0192f7a4-1b2c-7d3e-8f40-5a6b7c8d9e0f";
    let at = chrono::Utc::now();
    let mut seen = Sighting::new(id);
    seen.initiate = Some(SeenInitiate {
        request: object(json!({
            "merchantId": "4f9a1a8e-2c36-4d7e-9b1a-0c2a8f3d5e61",
            "referenceNo": "SEEN-1",
            "amount": 1050,
            "productCode": "TOPUP",
            "storeId": "S",
            "currencyCode": "MYR"
        })),
        answer: object(json!({"transactionId": id, "status": "INITIATED"})),
        at,
    });
    seen.last = Some(SeenAnswer {
        data: object(
            json!({"transactionId": id, "status": "SUCCESSFUL", "providerReference": "P-1"}),
        ),
        at,
    });
    let server = MockServer::builder()
        .seed([seen])
        .start()
        .await
        .expect("started");
    let stored = server.transactions().await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].transaction_id, id);
    assert_eq!(stored[0].reference_no, "SEEN-1");
    assert_eq!(stored[0].status, "SUCCESSFUL");
}
