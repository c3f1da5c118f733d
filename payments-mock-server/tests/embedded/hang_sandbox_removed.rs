//! A `hang` in a sandbox ends, its connection closed without an answer,
//! once the sandbox is deleted: the removal ends its held requests as the
//! shutdown does (before, each stayed open for the ten minutes).

use std::time::Duration;

use payments_mock_server::MockServer;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_sandbox_ends_its_hanging_requests() {
    let server = MockServer::start().await;
    let http = reqwest::Client::new();
    let made: Value = http
        .post(format!("{}/_mock/sandboxes", server.base_url()))
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    let id = made["data"]["id"].as_str().expect("an id").to_owned();
    let rule = http
        .post(format!("{}/sandboxes/{id}/_mock/faults", server.base_url()))
        .json(&json!({"match": {"endpoint": "initiate"}, "fault": "hang", "times": 0}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(rule.status(), 201);
    let body = json!({
        "merchantId": MERCHANT,
        "referenceNo": "HELD-1",
        "amount": 1050,
        "productCode": "TOPUP",
        "storeId": "S1",
        "payerId": "60123456789",
    })
    .to_string();
    let mut stream = TcpStream::connect(server.addr()).await.expect("connects");
    stream
        .write_all(
            format!(
                "POST /sandboxes/{id}/api/payments/initiate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .expect("sent");
    // Held: nothing comes while the sandbox lives.
    let mut byte = [0u8; 1];
    assert!(
        tokio::time::timeout(Duration::from_millis(300), stream.read(&mut byte))
            .await
            .is_err(),
        "held"
    );
    let deleted = http
        .delete(format!("{}/_mock/sandboxes/{id}", server.base_url()))
        .send()
        .await
        .expect("an answer");
    assert_eq!(deleted.status(), 200);
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut rest))
        .await
        .expect("closed once the sandbox is deleted, not held ten minutes");
    assert!(read.is_ok() || rest.is_empty(), "{read:?}");
    assert!(
        rest.is_empty(),
        "no answer: {:?}",
        String::from_utf8_lossy(&rest)
    );
    server.shutdown().await;
}
