//! HTTPS (CONTRACT section 18): the client against the mock over real
//! TLS: a trusted local CA, an unknown one, an expired certificate, and
//! mutual TLS with a missing, a foreign and the right client certificate.
//! A refused handshake is `TransportKind::Tls` with rustls's reason, and
//! is not retried.

use payments_client::error::TransportKind;
use payments_client::{Client, Error};
use payments_mock_server::MockServer;
use payments_mock_server::tls::LocalCa;

use crate::support::*;

/// The TLS error's message, after checking its kind and that it was not
/// retried (nothing reached the service).
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
    assert_eq!(
        message,
        "the TLS handshake with the service failed: invalid peer certificate: UnknownIssuer"
    );
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
    assert!(message.contains("UnknownIssuer"), "{message}");
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
    assert!(
        message.contains("invalid peer certificate: certificate expired"),
        "{message}"
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
    assert!(message.contains("CertificateRequired"), "{message}");

    let stranger = LocalCa::generate()
        .expect("a CA")
        .client_cert("stranger")
        .expect("a cert");
    let foreign = trusting()
        .identity_pem(stranger.identity_pem())
        .build()
        .expect("a client");
    let message = tls_failure(&foreign, &server).await;
    assert!(
        message.ends_with("received fatal alert: UnknownCA"),
        "{message}"
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
