//! The header lines the proxy adds count against the bound it takes
//! requests within (100 lines): a request the proxy's `Authorization`
//! (credentials in `--upstream`) would take past it is refused with the
//! proxy's own 431, never forwarded for the upstream to refuse and be
//! blamed for.

use std::time::Duration;

use payments_mock_server::MockServer;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::rig::proxy_in_front_of;

const ID: &str = "01a22e38-62ab-76c6-a0c5-b087c56c8a94";

/// One answer to `GET …/status` with `lines` header lines in all (its
/// `Host` one of them), sent over a raw socket: its status, verdict
/// (lower case head) and body.
async fn with_lines(addr: std::net::SocketAddr, lines: usize) -> (u16, String, Vec<u8>) {
    let mut request = format!("GET /api/payments/{ID}/status HTTP/1.1\r\nHost: {addr}\r\n");
    for n in 1..lines {
        request.push_str(&format!("x-h{n}: {n}\r\n"));
    }
    request.push_str("\r\n");
    let mut socket = tokio::net::TcpStream::connect(addr).await.expect("connect");
    socket
        .write_all(request.as_bytes())
        .await
        .expect("send the request");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                if got.len() >= end + 4 + length {
                    let body = got[end + 4..end + 4 + length].to_vec();
                    return (head, body);
                }
            }
            let n = socket.read(&mut buf).await.expect("read");
            assert_ne!(n, 0, "closed before a whole answer");
            got.extend_from_slice(&buf[..n]);
        }
    };
    let (head, body) = tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .expect("an answer in time");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    let verdict = head
        .lines()
        .find_map(|l| l.strip_prefix("x-contract-verdict:"))
        .map(|v| v.trim().to_owned())
        .unwrap_or_default();
    (status, verdict, body)
}

/// Issue: with credentials in `--upstream` a request of exactly 100 header
/// lines went out with 101, the mock answered a bare 431, and the proxy
/// blamed the service (`violation`, `envelope.shape`).
#[tokio::test]
async fn a_request_the_proxys_authorization_takes_past_100_lines_is_its_own_431() {
    let mock = MockServer::start().await;
    let upstream = mock.base_url().replacen("http://", "http://user:pw@", 1);
    let proxy = proxy_in_front_of(&upstream, &Default::default()).await;
    let addr = proxy.addr();

    let (status, verdict, body) = with_lines(addr, 100).await;
    assert_eq!(status, 431, "{}", String::from_utf8_lossy(&body));
    assert_eq!(verdict, "unchecked");
    let body: Value = serde_json::from_slice(&body).expect("the proxy's envelope");
    assert_eq!(body["errorCode"], "VALIDATION_ERROR", "{body}");
    assert_eq!(
        body["message"],
        "the request's header lines and those the proxy adds to it come to 101, more than \
         the 100 it takes: it was not forwarded",
        "{body}"
    );
    // One line fewer goes out with 100: forwarded and judged.
    let (status, verdict, body) = with_lines(addr, 99).await;
    assert_ne!(status, 431, "{}", String::from_utf8_lossy(&body));
    assert_ne!(verdict, "violation", "{}", String::from_utf8_lossy(&body));
    assert_ne!(verdict, "unchecked", "{}", String::from_utf8_lossy(&body));
    let forwarded = proxy
        .exchanges()
        .iter()
        .filter(|(e, _, _)| !e.proxy_answer)
        .count();
    assert_eq!(forwarded, 1, "only the request within the bound went out");
    proxy.shutdown().await;
    mock.shutdown().await;
}
