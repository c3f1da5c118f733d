//! What the server's tests share (feature `tls`): a local CA with a
//! server configuration for 127.0.0.1, and a client that trusts it.

#![cfg(feature = "tls")]
// Each test binary uses part of it.
#![allow(dead_code)]

use std::sync::Arc;

use payments_serve::tls::{LocalCa, Pem, ServerTls};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;

/// A new local CA and a server configuration for `127.0.0.1` it issued.
pub fn loopback_tls() -> (LocalCa, ServerTls) {
    let ca = LocalCa::generate().expect("a CA");
    let issued = ca
        .server_cert(&["127.0.0.1".to_owned()])
        .expect("a certificate");
    let tls = ServerTls::from_pem(
        Pem {
            bytes: issued.cert_pem.as_bytes(),
            name: "cert",
        },
        Pem {
            bytes: issued.key_pem().as_bytes(),
            name: "key",
        },
        None,
    )
    .expect("a configuration");
    (ca, tls)
}

/// A TLS client that trusts `ca` alone, offering `alpn` (none when empty).
pub fn connector_trusting(ca: &LocalCa, alpn: &[&[u8]]) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca.cert_pem().as_bytes()).expect("PEM"))
        .expect("a root");
    let mut config = rustls::ClientConfig::builder_with_provider(payments_serve::tls::provider())
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}
