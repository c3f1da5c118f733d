//! HTTPS (CONTRACT section 18): the client against the mock over real
//! TLS: a trusted local CA, an unknown one, an expired certificate, and
//! mutual TLS with a missing, a foreign and the right client certificate.
//! A refused handshake is `TransportKind::Tls`, not carried out and not
//! retried, whichever TLS the build uses; its message ends with that
//! library's reason (rustls's words, or OpenSSL's under `native-tls`).

use payments_client::error::TransportKind;
use payments_client::{Client, Error, Outcome, RetryPolicy};
use payments_mock_server::tls::LocalCa;
use payments_mock_server::{Fault, MockServer};

use crate::common::transport_kind;
use crate::support::*;

// A TLS failure after the service read the request: no refused handshake
// (its server is rustls, which the `rustls` feature brings).
#[cfg(feature = "rustls")]
mod after_handshake;

/// A connection broken after the request was sent: `Connection`, outcome
/// `Unknown` (the payment may be made), never the refused handshake that
/// `Tls` says.
fn assert_broken_after_sending(error: &Error, case: &str) {
    assert_eq!(
        transport_kind(error),
        Some(TransportKind::Connection),
        "{case}"
    );
    assert_eq!(error.outcome(), Outcome::Unknown, "{case}");
}

/// Which TLS a client of this build speaks: `native-tls` wins when both
/// features are on (`--all-features`), except for a client with an
/// identity, which is rustls's then (see `ClientBuilder::identity_pem`).
#[derive(Clone, Copy)]
enum Backend {
    Rustls,
    OpenSsl,
}

fn backend() -> Backend {
    if cfg!(feature = "native-tls") {
        Backend::OpenSsl
    } else {
        Backend::Rustls
    }
}

fn backend_with_identity() -> Backend {
    if cfg!(feature = "rustls") {
        Backend::Rustls
    } else {
        backend()
    }
}

const PREFIX: &str = "the TLS handshake with the service failed: ";

/// The message is the crate's prefix and the backend's own reason:
/// rustls's `rustls` text, or OpenSSL's error (`error:...`) holding every
/// piece of `openssl`.
fn assert_reason(message: &str, backend: Backend, rustls: &str, openssl: &[&str]) {
    let reason = message
        .strip_prefix(PREFIX)
        .unwrap_or_else(|| panic!("no TLS prefix: {message}"));
    match backend {
        Backend::Rustls => assert!(reason.contains(rustls), "{message}"),
        Backend::OpenSsl => {
            assert!(reason.starts_with("error:"), "{message}");
            for piece in openssl {
                assert!(reason.contains(piece), "{message}");
            }
        }
    }
}

/// The TLS error's message, after checking its kind, that it was not
/// carried out and not retried (nothing reached the service).
async fn tls_failure(client: &Client, server: &MockServer) -> String {
    let error = client
        .initiate(topup("TLS-1"))
        .await
        .expect_err("the handshake is refused");
    assert!(
        matches!(
            error,
            Error::Transport {
                kind: TransportKind::Tls,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(error.outcome(), Outcome::NotCarriedOut);
    assert!(!error.is_retryable());
    assert_eq!(server.answered(), 0);
    error.to_string()
}

#[tokio::test]
async fn a_client_trusting_the_mock_ca_initiates_over_https() {
    let server = MockServer::builder()
        .tls_self_signed()
        .start()
        .await
        .expect("starts");
    let client = client_builder(&server)
        .add_root_certificate_pem(server.ca_pem().expect("a CA"))
        .build()
        .expect("a client");
    let reply = client
        .initiate(topup("TLS-OK"))
        .await
        .expect("initiated over https");
    assert_eq!(reply.data().reference_no, "TLS-OK");
}

#[tokio::test]
async fn a_client_without_the_mock_ca_fails_with_unknown_issuer() {
    let server = MockServer::builder()
        .tls_self_signed()
        .start()
        .await
        .expect("starts");
    let message = tls_failure(&client(&server), &server).await;
    assert_reason(
        &message,
        backend(),
        "invalid peer certificate: UnknownIssuer",
        &[
            "certificate verify failed",
            "(unable to get local issuer certificate)",
        ],
    );
    if let Backend::Rustls = backend() {
        assert_eq!(
            message,
            "the TLS handshake with the service failed: invalid peer certificate: UnknownIssuer"
        );
    }
}

#[tokio::test]
async fn a_client_trusting_another_ca_fails_with_unknown_issuer() {
    let server = MockServer::builder()
        .tls_self_signed()
        .start()
        .await
        .expect("starts");
    let other = LocalCa::generate().expect("a CA");
    let client = client_builder(&server)
        .add_root_certificate_pem(other.cert_pem())
        .build()
        .expect("a client");
    let message = tls_failure(&client, &server).await;
    assert_reason(
        &message,
        backend(),
        "UnknownIssuer",
        &[
            "certificate verify failed",
            "(unable to get local issuer certificate)",
        ],
    );
}

#[tokio::test]
async fn an_expired_server_certificate_fails_as_expired() {
    let ca = LocalCa::generate().expect("a CA");
    let expired = ca
        .expired_server_cert(&["127.0.0.1".to_owned(), "localhost".to_owned()])
        .expect("a certificate");
    let server = MockServer::builder()
        .tls_pem(expired.cert_pem.clone(), expired.key_pem())
        .start()
        .await
        .expect("starts");
    let client = client_builder(&server)
        .add_root_certificate_pem(ca.cert_pem())
        .build()
        .expect("a client");
    let message = tls_failure(&client, &server).await;
    assert_reason(
        &message,
        backend(),
        "invalid peer certificate: certificate expired",
        &["certificate verify failed", "(certificate has expired)"],
    );
}

#[tokio::test]
async fn mutual_tls_needs_a_client_certificate_from_the_servers_client_ca() {
    let clients = LocalCa::generate().expect("a client CA");
    let server = MockServer::builder()
        .tls_self_signed()
        .tls_client_ca(clients.cert_pem())
        .start()
        .await
        .expect("starts");
    let trusting =
        || client_builder(&server).add_root_certificate_pem(server.ca_pem().expect("a CA"));

    let without = trusting().build().expect("a client");
    let message = tls_failure(&without, &server).await;
    // TLS 1.3: the service's alert comes after the client's side of the
    // handshake, in answer to the request.
    assert_reason(
        &message,
        backend(),
        "received fatal alert: CertificateRequired",
        &["tlsv13 alert certificate required", "SSL alert number 116"],
    );

    let stranger = LocalCa::generate()
        .expect("a CA")
        .client_cert("stranger")
        .expect("a cert");
    let foreign = trusting()
        .identity_pem(stranger.identity_pem())
        .build()
        .expect("a client");
    let message = tls_failure(&foreign, &server).await;
    assert_reason(
        &message,
        backend_with_identity(),
        "received fatal alert: UnknownCA",
        &["tlsv1 alert unknown ca", "SSL alert number 48"],
    );

    let mine = clients.client_cert("shop").expect("a cert");
    let client = trusting()
        .identity_pem(mine.identity_pem())
        .build()
        .expect("a client");
    client
        .initiate(topup("TLS-MUTUAL"))
        .await
        .expect("the right certificate is served");
}

/// Only the service's alert makes a failure after the handshake a TLS
/// one: a connection lost after the commit over TLS (closed, or in the
/// middle of the body) stays `Connection`, whose call may have been
/// carried out, with either TLS.
#[tokio::test]
async fn a_connection_lost_after_the_commit_over_tls_is_no_tls_failure() {
    for fault in [Fault::CommitThenReset, Fault::Truncate] {
        let server = MockServer::builder()
            .tls_self_signed()
            .start()
            .await
            .expect("starts");
        server.inject_faults([fault.clone()]);
        let client = client_builder(&server)
            .add_root_certificate_pem(server.ca_pem().expect("a CA"))
            .retry_policy(RetryPolicy::none())
            .build()
            .expect("a client");
        let error = client
            .initiate(topup("TLS-LOST"))
            .await
            .expect_err("the answer is lost");
        let case = format!("{fault:?}: {error:?}");
        assert_broken_after_sending(&error, &case);
        assert!(!error.to_string().contains("TLS"), "{case}");
        assert_eq!(server.transactions().await.len(), 1, "{case}");
    }
}

#[test]
fn an_identity_that_is_not_pem_fails_the_build_without_quoting_it() {
    let error = Client::builder("https://127.0.0.1:1")
        .identity_pem("-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n")
        .build()
        .expect_err("refused");
    let text = format!("{error} {error:?}");
    assert!(text.contains("client identity"), "{text}");
    assert!(!text.contains("c2VjcmV0"), "{text}");
    let debug = format!(
        "{:?}",
        Client::builder("https://127.0.0.1:1")
            .identity_pem("-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n")
    );
    assert!(!debug.contains("c2VjcmV0"), "{debug}");
}
