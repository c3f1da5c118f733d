//! The library API (CONTRACT section 10): a server started in-process,
//! driven, stopped by a drop, built with a listener or refused bad options.

use std::time::Duration;

use payments_mock_server::MockServer;
use serde_json::{Value, json};

use crate::common::{MERCHANT, initiate_body};

#[tokio::test]
async fn library_api_drives_the_running_server() {
    let server = MockServer::start().await;
    let base = server.base_url();
    assert!(base.starts_with("http://127.0.0.1:") && !base.ends_with('/'));
    assert_eq!(
        server.addr().port(),
        base.rsplit(':')
            .next()
            .and_then(|p| p.parse::<u16>().ok())
            .expect("port")
    );

    let client = reqwest::Client::new();
    let mut body = initiate_body("LIB-1", "BILLPAY");
    body["currencyCode"] = json!("JPY");
    let reply: Value = client
        .post(format!("{base}/api/payments/initiate"))
        .header("content-type", "application/json")
        .body((body).to_string())
        .send()
        .await
        .expect("sent")
        .bytes()
        .await
        .map(|b| serde_json::from_slice(&b).expect("envelope"))
        .expect("body");
    let id = reply["data"]["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let confirm: Value = client
        .post(format!("{base}/api/payments/confirm"))
        .header("content-type", "application/json")
        .body((json!({ "transactionId": id, "referenceNo": "LIB-1" })).to_string())
        .send()
        .await
        .expect("sent")
        .bytes()
        .await
        .map(|b| serde_json::from_slice(&b).expect("envelope"))
        .expect("body");
    assert_eq!(confirm["data"]["status"], "CONFIRMED");

    let before = server.now().await;
    server.advance_clock(Duration::from_secs(2)).await;
    assert!(server.now().await - before >= chrono::TimeDelta::seconds(2));
    let stored = server.transactions().await;
    assert_eq!(stored.len(), 1);
    let t = &stored[0];
    assert_eq!(
        (t.transaction_id.as_str(), t.status.as_str()),
        (id.as_str(), "SUCCESSFUL")
    );
    assert_eq!((t.amount_minor, t.currency_code.as_str()), (15000, "JPY"));
    assert_eq!(t.merchant_id.to_string(), MERCHANT);
    assert!(t.confirmed_at.is_some() && t.provider_reference.is_some());
    assert!(t.last_modified_at > t.confirmed_at);
    assert_eq!(server.requests().await.len(), 2);

    server.reset().await;
    assert!(server.transactions().await.is_empty() && server.requests().await.is_empty());
    server.shutdown().await;
    assert!(
        client
            .get(format!("{base}/_mock/health"))
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn dropping_the_server_stops_it() {
    let server = MockServer::start().await;
    let base = server.base_url();
    drop(server);
    // Accepting stops once the serve task sees the signal; yield until then.
    let mut stopped = false;
    for _ in 0..200 {
        tokio::task::yield_now().await;
        if tokio::net::TcpStream::connect(base.trim_start_matches("http://"))
            .await
            .is_err()
        {
            stopped = true;
            break;
        }
    }
    assert!(stopped);
}

#[tokio::test]
async fn builder_takes_a_listener_and_rejects_bad_options() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = MockServer::builder()
        .listener(listener)
        .start()
        .await
        .expect("start");
    assert_eq!(server.addr(), addr);
    assert!(MockServer::builder().fail_rate(1.5).start().await.is_err());
    let catalog = payments_mock_server::Catalog::from_toml_str("[[product]]\ncode = \"ONLY\"\n")
        .expect("catalog");
    let server = MockServer::builder()
        .catalog(catalog)
        .expiry(Duration::from_secs(60))
        .api_key("sk", None)
        .start()
        .await
        .expect("start");
    let reply = reqwest::Client::new()
        .post(format!("{}/api/payments/initiate", server.base_url()))
        .bearer_auth("sk")
        .header("content-type", "application/json")
        .body((initiate_body("C-1", "TOPUP")).to_string())
        .send()
        .await
        .expect("sent");
    let body: Value =
        serde_json::from_slice(&reply.bytes().await.expect("body")).expect("envelope");
    assert_eq!(body["message"], "productCode TOPUP is not offered");
}
