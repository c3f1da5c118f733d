//! `Expect: 100-continue`: the proxy meets the expectation itself (its own
//! `100 Continue`) and reads the body, so the upstream is never sent the
//! expectation; an upstream that refused a large body unread (the mock's
//! 413) and closed would otherwise leave a dead pooled connection under
//! the next request, a false 502.

use std::time::Duration;

use axum::http::Method;
use payments_mock_server::MockServer;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::rig::{Rig, Setup, initiate_body, initiate_data, proxy_in_front_of};
use crate::upstream::Canned;

/// How long a step may take before the test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(20);

/// Reads from `socket` until what was read ends a head (`\r\n\r\n`).
async fn read_head(socket: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(PATIENCE, socket.read(&mut byte))
            .await
            .expect("a head in time")
            .expect("readable");
        assert!(n > 0, "closed mid-head: {}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// Everything until the proxy closes.
async fn read_to_end(socket: &mut TcpStream) -> String {
    let mut out = Vec::new();
    tokio::time::timeout(PATIENCE, socket.read_to_end(&mut out))
        .await
        .expect("closed in time")
        .expect("readable");
    String::from_utf8_lossy(&out).into_owned()
}

/// Sends a POST head with `Expect: 100-continue` to `addr`, waits for the
/// proxy's `100 Continue`, then sends the body and `after` (a pipelined
/// request, or nothing): everything answered, until the proxy closes.
async fn expecting(addr: &str, body: &[u8], after: &[u8]) -> String {
    let mut socket = TcpStream::connect(addr).await.expect("connects");
    let head = format!(
        "POST /api/payments/initiate HTTP/1.1\r\nHost: x\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\
         Expect: 100-continue\r\n{}\r\n",
        body.len(),
        if after.is_empty() {
            "Connection: close\r\n"
        } else {
            ""
        }
    );
    socket.write_all(head.as_bytes()).await.expect("written");
    let interim = read_head(&mut socket).await;
    assert!(
        interim.starts_with("HTTP/1.1 100 Continue\r\n"),
        "the proxy's own 100 Continue first: {interim}"
    );
    socket.write_all(body).await.expect("written");
    socket.write_all(after).await.expect("written");
    read_to_end(&mut socket).await
}

/// The statuses of the answers in `raw`, in order.
fn statuses(raw: &str) -> Vec<&str> {
    raw.match_indices("HTTP/1.1 ")
        .filter_map(|(at, _)| raw.get(at + 9..at + 12))
        .collect()
}

#[tokio::test]
async fn an_expectation_the_proxy_met_is_not_passed_on() {
    let rig = Rig::start().await;
    rig.upstream
        .push(Canned::ok(initiate_data("t-1", "EXPECT-1", 1050)));
    let body = initiate_body("EXPECT-1", 1050).to_string();
    let addr = rig.proxy.addr().to_string();
    let raw = expecting(&addr, body.as_bytes(), b"").await;
    assert_eq!(statuses(&raw), ["200"], "{raw}");
    let received = rig.upstream.only_request();
    assert_eq!(received.method, Method::POST);
    assert!(
        received.values("expect").is_empty(),
        "the expectation was the proxy's to meet: {:?}",
        received.headers
    );
    assert_eq!(received.body, body.as_bytes(), "the body went out whole");
    assert_eq!(
        received.values("content-length"),
        [body.len().to_string().into_bytes()]
    );
}

/// The reviewers' sequence (`t9.py`): a body larger than the mock takes
/// (413), announced with `Expect: 100-continue`, then a status read
/// pipelined on the same connection. Every status read is the mock's own
/// answer (404: no such transaction), never the proxy's 502.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_pipelined_after_an_expectation_gets_the_upstreams_answer() {
    let mock = MockServer::start().await;
    let proxy = proxy_in_front_of(&mock.base_url(), &Setup::default()).await;
    let addr = proxy.addr().to_string();
    let mut body = vec![b' '; 70_000];
    body[0] = b'{';
    body[69_999] = b'}';
    let after = b"GET /api/payments/after/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let mut seen = Vec::new();
    for _ in 0..30 {
        let raw = expecting(&addr, &body, after).await;
        let got: Vec<String> = statuses(&raw).into_iter().map(str::to_owned).collect();
        assert!(
            !got.contains(&"502".to_owned()),
            "{got:?} after {seen:?}: {raw}"
        );
        seen.push(got);
    }
    assert!(
        seen.iter().all(|got| got == &["413", "404"]),
        "the mock's 413 for the body, its 404 for the status read: {seen:?}"
    );
}

/// An upstream as this project's mock was: it answers a request that
/// expects `100 Continue` at once, 413, without reading the body, and
/// closes the connection without a word when more comes on it (the
/// proxy's next request); a request without the expectation is read
/// whole and answered (413 for a body, 404 for a status read), the
/// connection kept.
async fn answering_expectations_early() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut refused_unread = false;
                loop {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") {
                        match socket.read(&mut byte).await {
                            Ok(1) => head.push(byte[0]),
                            _ => return,
                        }
                    }
                    if refused_unread {
                        // What came after the unread body: closed on.
                        return;
                    }
                    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|n| n.trim().parse().ok())
                        .unwrap_or(0);
                    let (status, code) = if length > 0 {
                        ("413 Payload Too Large", "PAYLOAD_TOO_LARGE")
                    } else {
                        ("404 Not Found", "TRANSACTION_NOT_FOUND")
                    };
                    if head.contains("\r\nexpect:") {
                        refused_unread = true;
                    } else {
                        let mut body = vec![0u8; length];
                        if socket.read_exact(&mut body).await.is_err() {
                            return;
                        }
                    }
                    let envelope = format!(
                        r#"{{"isSuccess":false,"errorCode":"{code}","message":"refused","data":null}}"#
                    );
                    let answer = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n\
                         content-length: {}\r\n\r\n{envelope}",
                        envelope.len()
                    );
                    if socket.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    format!("http://{addr}")
}

/// The same sequence in front of an upstream that answers an expectation
/// before the body and closes on what comes next: the proxy, which has
/// the body, never sends the expectation, so the upstream reads the body
/// and the status read behind it gets the upstream's answer on the same
/// connection instead of a 502.
#[tokio::test]
async fn an_upstream_answering_expectations_early_never_sees_one() {
    let upstream = answering_expectations_early().await;
    let proxy = proxy_in_front_of(&upstream, &Setup::default()).await;
    let addr = proxy.addr().to_string();
    let body = vec![b' '; 70_000];
    let after = b"GET /api/payments/after/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    for _ in 0..3 {
        let raw = expecting(&addr, &body, after).await;
        assert_eq!(statuses(&raw), ["413", "404"], "{raw}");
    }
}
