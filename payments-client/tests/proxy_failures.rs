//! Why no connection could be made through a proxy, as
//! [`Error::connect_cause`] tells it: a proxy that refuses the `CONNECT`
//! tunnel (407, 403), closes it unanswered, never answers, opens it and
//! then closes, or has a scheme the client cannot use (SOCKS); a proxy
//! that refuses the TCP connection has no cause but the refusal. Every one
//! is a connect failure: nothing reached the service.
//!
//! The proxy is given to the caller's own `reqwest::Client`
//! ([`ClientBuilder::http_client`]), the same connector reqwest uses for
//! a proxy from the environment, so no variable of this process is set.

#![cfg(feature = "rustls")]

mod common;

use std::time::Duration;

use common::*;
use payments_client::error::{ConnectCause, TransportKind};
use payments_client::{Client, Error, Outcome, RetryPolicy};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// What the fake proxy does with a `CONNECT`.
#[derive(Clone, Copy)]
enum Mode {
    /// Answers with this head, then closes.
    Answer(&'static [u8]),
    /// Closes without a word.
    Close,
    /// Holds the connection, never answering.
    Hang,
    /// Answers `200`, then closes with the client's first bytes
    /// through the tunnel unread (Linux then resets the connection).
    OpenThenReset,
}

/// A loopback proxy that reads one request head and does `mode`.
async fn fake_proxy(mode: Mode) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut buf = [0; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            match mode {
                Mode::Answer(answer) => {
                    let _ = socket.write_all(answer).await;
                }
                Mode::Close => {}
                Mode::Hang => held.push(socket),
                Mode::OpenThenReset => {
                    let _ = socket
                        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                        .await;
                    let _ = socket.readable().await;
                }
            }
        }
    });
    format!("http://proxy-user:proxy-secret@{addr}")
}

/// `status` of an `https` service through `proxy`: the error.
async fn through(proxy: &str) -> Error {
    let http = reqwest::Client::builder()
        .proxy(reqwest::Proxy::all(proxy).expect("a proxy URL"))
        .connect_timeout(Duration::from_millis(300))
        .build()
        .expect("an HTTP client");
    let client = Client::builder("https://pay.example:8443")
        .http_client(http)
        .retry_policy(RetryPolicy::none())
        .build()
        .expect("a client");
    client.status(TX_ID).await.expect_err("no service")
}

async fn cause_through(proxy: &str) -> Option<ConnectCause> {
    let error = through(proxy).await;
    assert_eq!(
        transport_kind(&error),
        Some(TransportKind::Connect),
        "{error:?}"
    );
    assert_eq!(error.outcome(), Outcome::NotCarriedOut, "{error}");
    assert!(!error.to_string().contains("proxy-secret"), "{error}");
    error.connect_cause()
}

#[tokio::test]
async fn a_proxy_that_wants_credentials_refuses_the_tunnel_with_407() {
    let proxy = fake_proxy(Mode::Answer(
        b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=x\r\n\
          Content-Length: 0\r\n\r\n",
    ))
    .await;
    assert_eq!(
        cause_through(&proxy).await,
        Some(ConnectCause::ProxyAuthenticationRequired)
    );
    let error = through(&proxy).await;
    assert_eq!(
        error.to_string(),
        "could not connect to the service: the proxy refused the tunnel with 407 Proxy \
         Authentication Required (it wants credentials, or other ones)"
    );
}

#[tokio::test]
async fn a_proxy_that_answers_connect_with_another_status_refused_the_tunnel() {
    for answer in [
        &b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"[..],
        b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n",
    ] {
        let proxy = fake_proxy(Mode::Answer(answer)).await;
        assert_eq!(
            cause_through(&proxy).await,
            Some(ConnectCause::ProxyRefusedTunnel)
        );
    }
}

#[tokio::test]
async fn a_proxy_that_closes_before_answering_closed_the_connection() {
    let proxy = fake_proxy(Mode::Close).await;
    assert_eq!(cause_through(&proxy).await, Some(ConnectCause::ProxyClosed));
}

#[tokio::test]
async fn a_proxy_that_never_answers_is_a_connect_timeout() {
    let proxy = fake_proxy(Mode::Hang).await;
    assert_eq!(cause_through(&proxy).await, Some(ConnectCause::TimedOut));
}

#[tokio::test]
async fn a_tunnel_closed_after_200_closed_in_the_tls_handshake() {
    let proxy = fake_proxy(Mode::Answer(b"HTTP/1.1 200 Connection established\r\n\r\n")).await;
    assert_eq!(
        cause_through(&proxy).await,
        Some(ConnectCause::ClosedInHandshake)
    );
    let proxy = fake_proxy(Mode::OpenThenReset).await;
    assert_eq!(
        cause_through(&proxy).await,
        Some(ConnectCause::ClosedInHandshake)
    );
}

#[tokio::test]
async fn a_socks_proxy_has_a_scheme_the_client_cannot_use() {
    // Nothing listens there: the client never even tries.
    let refused = refused_url().await.replace("http://", "socks5://");
    assert_eq!(
        cause_through(&refused).await,
        Some(ConnectCause::UnsupportedProxyScheme)
    );
}

#[tokio::test]
async fn a_proxy_that_refuses_the_connection_has_no_other_cause() {
    let refused = refused_url().await;
    assert_eq!(cause_through(&refused).await, None);
}
