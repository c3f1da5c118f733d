//! Answers that are not valid HTTP (a header value with an ESC, which
//! HTTP forbids) and content types that are not readable text: told as
//! what they are, never as a timeout or a missing content type; an
//! initiate whose answer was not valid HTTP is reconciled like one whose
//! connection broke, and makes exactly one payment.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use payments_client::error::TransportKind;
use payments_client::{Error, Outcome, RetryPolicy, TransactionStatus};
use payments_mock_server::MockServer;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use crate::common::{TX_ID, transport_kind};
use crate::support::*;

/// A header line HTTP forbids: ESC in its value.
const BAD_HEADER: &[u8] = b"x-request-id: rid\x1b[2Jhdr\r\n";

/// One HTTP/1.1 message read from `stream`: its head, and as many body
/// bytes as its `content-length` says. `None` when the stream ends first.
async fn read_message(stream: &mut (impl AsyncRead + Unpin)) -> Option<Vec<u8>> {
    let mut message = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = message.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut buf).await.ok().filter(|&n| n > 0)?;
        message.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&message[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    while message.len() < head_end + length {
        let n = stream.read(&mut buf).await.ok().filter(|&n| n > 0)?;
        message.extend_from_slice(&buf[..n]);
    }
    Some(message)
}

/// A relay to `server`: the answers on its first `spoil` connections
/// carry [`BAD_HEADER`] after their status line (the service did the
/// work, its answer is not valid HTTP); every later connection passes
/// through as it is.
async fn spoiling_relay(server: &MockServer, spoil: usize) -> String {
    let upstream = server
        .base_url()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("loopback");
    let addr = listener.local_addr().expect("bound");
    tokio::spawn(async move {
        let mut accepted = 0;
        while let Ok((mut client, _)) = listener.accept().await {
            let spoiled = accepted < spoil;
            accepted += 1;
            let upstream = upstream.clone();
            tokio::spawn(async move {
                let Ok(mut service) = TcpStream::connect(&upstream).await else {
                    return;
                };
                if !spoiled {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut service).await;
                    return;
                }
                let Some(request) = read_message(&mut client).await else {
                    return;
                };
                let _ = service.write_all(&request).await;
                let Some(answer) = read_message(&mut service).await else {
                    return;
                };
                let status_line = answer
                    .windows(2)
                    .position(|w| w == b"\r\n")
                    .expect("a status line")
                    + 2;
                let mut spoilt = answer[..status_line].to_vec();
                spoilt.extend_from_slice(BAD_HEADER);
                spoilt.extend_from_slice(&answer[status_line..]);
                let _ = client.write_all(&spoilt).await;
                let _ = client.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

/// A loopback server answering every request with `answer`, bytes as
/// they are; returns its URL and how many connections it took.
async fn answering(answer: Vec<u8>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("loopback");
    let addr = listener.local_addr().expect("bound");
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            let _ = read_message(&mut socket).await;
            let _ = socket.write_all(&answer).await;
            let _ = socket.shutdown().await;
        }
    });
    (format!("http://{addr}"), count)
}

/// `HTTP/1.1 {status}` with `headers` (each ending in CRLF) and `body`.
fn raw(status: u16, headers: &[u8], body: &str) -> Vec<u8> {
    let mut answer = format!("HTTP/1.1 {status} X\r\n").into_bytes();
    answer.extend_from_slice(headers);
    answer.extend_from_slice(
        format!(
            "content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    answer
}

/// A reviewer's `status -v` against a service answering at once with an
/// ESC in a header value: three attempts, then "the connection failed
/// before a complete response", and the CLI's advice to raise --timeout.
/// It is its own kind now, said as what it is; still retried as before.
#[tokio::test]
async fn a_status_answered_with_invalid_http_says_so_and_is_retried() {
    let mut headers = b"content-type: application/json\r\n".to_vec();
    headers.extend_from_slice(BAD_HEADER);
    let (url, connections) = answering(raw(200, &headers, "{}")).await;
    let client = payments_client::Client::builder(&url)
        .retry_policy(fast_retries())
        .build()
        .expect("a client");
    let err = client.status(TX_ID).await.unwrap_err();
    assert_eq!(
        transport_kind(&err),
        Some(TransportKind::InvalidHttp),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "the service's answer was not valid HTTP (invalid HTTP header parsed) (outcome unknown: \
         it may have been carried out; look it up before trying again)"
    );
    assert_eq!(err.type_name(), "invalid_http");
    assert!(err.is_retryable());
    assert_eq!(connections.load(Ordering::SeqCst), 3, "retried as before");
}

/// The service carried the initiate out and its answer was not valid
/// HTTP: the outcome is unknown, never "not carried out"; with retries the
/// client reconciles it as it does a broken-off answer, and there is
/// exactly one payment.
#[tokio::test]
async fn an_initiate_answered_with_invalid_http_is_reconciled_once() {
    let server = MockServer::start().await;
    let url = spoiling_relay(&server, 1).await;
    let client = payments_client::Client::builder(&url)
        .retry_policy(fast_retries())
        .build()
        .expect("a client");
    let reply = client.initiate(topup("IH-1")).await.expect("reconciled");
    assert!(reply.is_reconciled(), "{reply:?}");
    assert_eq!(reply.data().status, TransactionStatus::Initiated);
    let all = server.transactions().await;
    assert_eq!(all.len(), 1, "exactly one payment: {all:?}");
    assert_eq!(all[0].reference_no, "IH-1");

    // Without retries: the error itself, outcome unknown.
    let url = spoiling_relay(&server, 1).await;
    let client = payments_client::Client::builder(&url)
        .retry_policy(RetryPolicy::none())
        .build()
        .expect("a client");
    let err = client.initiate(topup("IH-2")).await.unwrap_err();
    assert_eq!(
        transport_kind(&err),
        Some(TransportKind::InvalidHttp),
        "{err:?}"
    );
    assert_eq!(err.outcome(), Outcome::Unknown);
    assert_eq!(server.transactions().await.len(), 2, "IH-2 was made");
    server.shutdown().await;
}

/// A 502 whose Content-Type has a byte outside ASCII (0x9B, a C1 control
/// in ISO-8859-1) was "no content type": it is kept, one character per
/// byte; UTF-8 is kept as UTF-8.
#[tokio::test]
async fn a_content_type_that_is_not_ascii_is_kept() {
    for (header, expected) in [
        (
            &b"content-type: text/html\x9b0;T\r\n"[..],
            "text/html\u{9b}0;T",
        ),
        (
            "content-type: text/html; charset=\u{fc}\r\n".as_bytes(),
            "text/html; charset=\u{fc}",
        ),
    ] {
        let (url, _) = answering(raw(502, header, "<html></html>")).await;
        let client = payments_client::Client::builder(&url)
            .retry_policy(RetryPolicy::none())
            .build()
            .expect("a client");
        let err = client.status(TX_ID).await.unwrap_err();
        let Error::UnexpectedResponse { content_type, .. } = &err else {
            panic!("expected UnexpectedResponse, got {err:?}");
        };
        assert_eq!(content_type.as_deref(), Some(expected));
    }
}
