//! The payment page at its edges, over real sockets: a form that does not
//! arrive whole (400, not "too large"), one over the limit (413), and the
//! page's token kept out of the log however the path is spelt.

use std::process::{Command, Stdio};
use std::time::Duration;

use payments_mock_server::MockServer;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{post_over_http, spawn_with_banner, terminate_expecting_success};

/// Initiates and confirms ONLINEBANKING at `base` over HTTP; the
/// transaction id and the payment page's URL.
async fn payment_page(base: &str, reference: &str) -> (String, String) {
    let body = crate::redirect::online_banking(reference);
    let initiated = post_over_http(&format!("{base}/api/payments/initiate"), &body).await;
    let id = initiated["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let confirmed = post_over_http(
        &format!("{base}/api/payments/confirm"),
        &serde_json::json!({ "transactionId": id, "referenceNo": reference }),
    )
    .await;
    let extra: Value = serde_json::from_str(
        confirmed["data"]["extraProperties"]
            .as_str()
            .expect("extraProperties"),
    )
    .expect("JSON");
    let url = extra["paymentUrl"].as_str().expect("paymentUrl").to_owned();
    (id, url)
}

/// Writes `request` on a fresh connection (then closes its writing half
/// when `close_write`), and reads the answer until the server closes or
/// the page ends.
async fn exchange(addr: std::net::SocketAddr, request: &str, close_write: bool) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("sent");
    if close_write {
        stream.shutdown().await.expect("half-close");
    }
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 8192];
        while !got.ends_with(b"</html>\n") && !got.ends_with(b"</html>") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "no answer within 10 s: {request}");
    String::from_utf8_lossy(&got).into_owned()
}

/// A payer on a slow or dropped link: a form whose body stops short is a
/// 400 page saying the form did not arrive whole, once the body's time
/// is up or the connection ends; nothing is decided. A form over the
/// limit stays a 413. (The page said "Request too large" for all three.)
#[tokio::test(start_paused = true)]
async fn a_form_that_does_not_arrive_whole_is_a_400_and_decides_nothing() {
    let server = MockServer::builder()
        .header_read_timeout(Duration::from_millis(500))
        .start()
        .await
        .expect("start");
    let (id, url) = payment_page(&server.base_url(), "EDGE-1").await;
    let path = url
        .strip_prefix(&server.base_url())
        .expect("the page is the server's");
    let addr = server.addr();
    let head = |length: usize| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Content-Length: {length}\r\n\r\n"
        )
    };
    for (what, close_write) in [("stalled", false), ("cut short", true)] {
        let answer = exchange(addr, &format!("{}actio", head(10)), close_write).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{what}: {answer}");
        assert!(answer.contains("Form not received"), "{what}: {answer}");
        assert!(
            answer.contains("The form did not arrive whole"),
            "{what}: {answer}"
        );
        assert!(!answer.contains("too large"), "{what}: {answer}");
    }
    let over = format!("action={}", "x".repeat(8 * 1024));
    let answer = exchange(addr, &format!("{}{over}", head(over.len())), false).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("Request too large"), "{answer}");
    let status: Value = reqwest::get(format!("{}/api/payments/{id}/status", server.base_url()))
        .await
        .expect("status")
        .json()
        .await
        .expect("JSON");
    assert_eq!(status["data"]["status"], "CONFIRMED", "{status}");
    server.shutdown().await;
}

/// The page's token is the payer's capability: the binary's log, text or
/// JSON, never shows it, even on a path no route spells (`//pay/T` from a
/// proxy that strips a prefix badly, `/PAY/T`, `/Sandboxes/x/pay/T`).
#[tokio::test]
async fn a_token_is_never_logged_however_the_path_is_spelt() {
    for format in ["text", "json"] {
        let (child, base) = spawn_with_banner(
            Command::new(env!("CARGO_BIN_EXE_payments-mock-server"))
                .args(["--port", "0", "--log-format", format])
                .stderr(Stdio::piped()),
        );
        let (_, url) = payment_page(&base, "EDGE-LOG-1").await;
        let token = url.rsplit('/').next().expect("a token").to_owned();
        let client = reqwest::Client::new();
        let spellings = [
            format!("//pay/{token}"),
            format!("/PAY/{token}"),
            format!("/Sandboxes/x/pay/{token}"),
            format!("/pay/{token}"),
        ];
        for path in &spellings {
            let _ = client
                .get(format!("{base}{path}"))
                .send()
                .await
                .expect("answered");
        }
        let stderr = terminate_expecting_success(child);
        assert!(!stderr.contains(&token), "{format}: {stderr}");
        for shown in [
            "//pay/[redacted]",
            "/PAY/[redacted]",
            "/Sandboxes/x/pay/[redacted]",
            "path=/pay/[redacted]",
        ] {
            let shown = if format == "json" {
                shown.replace("path=", "\"path\":\"")
            } else {
                shown.to_owned()
            };
            assert!(stderr.contains(&shown), "{format}: {shown} in {stderr}");
        }
    }
}
