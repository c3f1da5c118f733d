//! The connect phase (DNS, TCP, the TLS handshake) ends as a connect
//! failure before the attempt's timeout can: a service that never
//! finishes the handshake got nothing, so the call is `NotCarriedOut`, not
//! an unknown timeout, even with a `timeout` shorter than the connect
//! timeout.

#![cfg(any(feature = "rustls", feature = "native-tls"))]

mod common;

use std::time::Duration;

use common::*;
use payments_client::error::TransportKind;
use payments_client::{Client, ConfirmRequest, Outcome, RetryPolicy};

/// A loopback listener that accepts connections and holds them, never
/// answering a byte (a TLS handshake that never completes).
async fn silent_listener() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    format!("https://{addr}")
}

#[tokio::test]
async fn a_handshake_that_never_completes_is_a_connect_failure_within_the_timeout() {
    let base = silent_listener().await;
    // The connect timeout left at its default (10 s), far past the timeout.
    let client = Client::builder(&base)
        .timeout(Duration::from_millis(400))
        .retry_policy(RetryPolicy::none())
        .build()
        .expect("a client");
    let confirm = ConfirmRequest::builder(TX_ID, "INV-1")
        .build()
        .expect("a request");
    let err = client.confirm(confirm).await.unwrap_err();
    assert_eq!(
        transport_kind(&err),
        Some(TransportKind::Connect),
        "{err:?}"
    );
    assert_eq!(err.outcome(), Outcome::NotCarriedOut, "{err}");

    // A connect timeout shorter still is the one that counts.
    let client = Client::builder(&base)
        .timeout(Duration::from_secs(30))
        .connect_timeout(Duration::from_millis(200))
        .retry_policy(RetryPolicy::none())
        .build()
        .expect("a client");
    let err = client.status(TX_ID).await.unwrap_err();
    assert_eq!(
        transport_kind(&err),
        Some(TransportKind::Connect),
        "{err:?}"
    );
}
