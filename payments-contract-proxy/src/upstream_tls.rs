//! TLS towards the upstream (CONTRACT section 18): Mozilla's roots, plus
//! `--upstream-ca`, and the client certificate of
//! `--upstream-client-cert`/`--upstream-client-key` for a staging service
//! that demands mutual TLS. Errors name the file, never key material. And
//! the client the proxy forwards with, built on that configuration.

use std::path::Path;

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::Error;
use crate::config::ProxyConfig;

mod pinned;
mod refusal;

pub(crate) use refusal::Refusal;

fn read(path: &Path, flag: &str) -> Result<Vec<u8>, Error> {
    std::fs::read(path)
        .map_err(|e| Error::Config(format!("{flag}: cannot read {}: {e}", path.display())))
}

fn certificates(path: &Path, flag: &str) -> Result<Vec<CertificateDer<'static>>, Error> {
    let bytes = read(path, flag)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .ok()
        .filter(|certs| !certs.is_empty())
        .ok_or_else(|| {
            Error::Config(format!(
                "{flag}: {}: not PEM certificates (-----BEGIN CERTIFICATE-----)",
                path.display()
            ))
        })?;
    Ok(certs)
}

/// The upstream client's rustls configuration: Mozilla's roots and those
/// of `--upstream-ca`, verified by WebPKI, but that a certificate given
/// there is trusted as the upstream's own even when it is a CA's
/// ([`pinned`]).
pub(crate) fn client_config(config: &ProxyConfig) -> Result<rustls::ClientConfig, Error> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let mut given = Vec::new();
    if let Some(ca) = &config.upstream_ca {
        for cert in certificates(ca, "--upstream-ca")? {
            roots.add(cert.clone()).map_err(|e| {
                Error::Config(format!("--upstream-ca: {}: unusable CA: {e}", ca.display()))
            })?;
            given.push(cert);
        }
    }
    let provider = payments_serve::tls::provider();
    let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
        std::sync::Arc::new(roots),
        std::sync::Arc::clone(&provider),
    )
    .build()
    .map_err(|e| Error::Config(format!("TLS towards the upstream: {e}")))?;
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(format!("TLS towards the upstream: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(std::sync::Arc::new(pinned::PinnedOrWebPki::new(
            webpki, given,
        )));
    match &config.upstream_identity {
        None => Ok(builder.with_no_client_auth()),
        Some((cert, key)) => {
            let chain = certificates(cert, "--upstream-client-cert")?;
            let key_bytes = read(key, "--upstream-client-key")?;
            let key_der = PrivateKeyDer::from_pem_slice(&key_bytes).map_err(|_| {
                Error::Config(format!(
                    "--upstream-client-key: {}: not a PEM private key (PKCS#8, PKCS#1 or SEC1)",
                    key.display()
                ))
            })?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| match e {
                    rustls::Error::InconsistentKeys(_) => Error::Config(format!(
                        "--upstream-client-key: {}: the private key does not match the certificate in {}",
                        key.display(),
                        cert.display()
                    )),
                    other => Error::Config(format!(
                        "--upstream-client-cert: {}: unusable: {other}",
                        cert.display()
                    )),
                })
        }
    }
}

/// What TLS had to do with an upstream failure, by rustls's error in its
/// chain; its reason in rustls's words (an unknown issuer, an expired
/// certificate, the upstream's alert), which hold no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TlsFailure {
    /// The handshake was refused (or failed) before the upstream could
    /// read the request: nothing was carried out. Which side refused, and
    /// why.
    Refused(Refusal),
    /// TLS failed after the handshake, in the middle of the upstream's
    /// answer (a record that does not decrypt, a `bad_record_mac` or
    /// `decode_error` alert): the upstream may have read the request and
    /// carried it out.
    BrokeOff(String),
}

/// The TLS failure in an upstream failure, when there is one.
/// `in_handshake`: the failure came while the connection was made (the
/// connector does the handshake), so the request was not written, and
/// any TLS error there refused it. After that, only the client's
/// verification of the upstream and the alerts of [`refuses_handshake`]
/// are a refused handshake (in TLS 1.3 the upstream's refusal of the
/// client's certificate reaches the proxy in answer to its request); any
/// other TLS error broke the answer off.
pub(crate) fn tls_failure(
    e: &(dyn std::error::Error + 'static),
    in_handshake: bool,
) -> Option<TlsFailure> {
    let tls = rustls_error(e)?;
    Some(if in_handshake || refusal(tls) {
        TlsFailure::Refused(Refusal::of(tls))
    } else {
        TlsFailure::BrokeOff(tls.to_string())
    })
}

/// The rustls error in an error's chain, when there is one.
pub(crate) fn rustls_error<'e>(
    e: &'e (dyn std::error::Error + 'static),
) -> Option<&'e rustls::Error> {
    in_chain(e)
}

/// The first error of type `T` in an error's chain (itself included).
pub(crate) fn in_chain<'e, T: std::error::Error + 'static>(
    e: &'e (dyn std::error::Error + 'static),
) -> Option<&'e T> {
    let mut current = Some(e);
    while let Some(error) = current {
        if let Some(found) = error.downcast_ref::<T>() {
            return Some(found);
        }
        // An io::Error's source() skips the error it wraps: go into it.
        current = match error.downcast_ref::<std::io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => error.source(),
        };
    }
    None
}

/// Whether a rustls error refuses the handshake: the proxy's own
/// verification of the upstream's certificate or parameters (raised only
/// while it handshakes: rustls neither renegotiates nor re-authenticates
/// a server), or the upstream's alert refusing it ([`refuses_handshake`]).
fn refusal(error: &rustls::Error) -> bool {
    match error {
        rustls::Error::InvalidCertificate(_)
        | rustls::Error::NoCertificatesPresented
        | rustls::Error::PeerIncompatible(_) => true,
        rustls::Error::AlertReceived(alert) => refuses_handshake(*alert),
        _ => false,
    }
}

/// The alerts (RFC 8446 section 6.2) by which an upstream refuses the
/// handshake: the proxy's certificate (`certificate_required`,
/// `bad_certificate`, `unsupported_certificate`, `certificate_revoked`,
/// `certificate_expired`, `certificate_unknown`, `unknown_ca`), the access
/// it grants on it (`access_denied`), or the parameters offered
/// (`handshake_failure`, `protocol_version`, `insufficient_security`).
/// The upstream checks the client's certificate before it reads any
/// application data, so it did not read the request. Any other alert
/// (`bad_record_mac`, `decode_error`, `internal_error`, ...) may come in
/// the middle of an answer. The same list as the client crate's.
fn refuses_handshake(alert: rustls::AlertDescription) -> bool {
    use rustls::AlertDescription as Alert;
    matches!(
        alert,
        Alert::CertificateRequired
            | Alert::BadCertificate
            | Alert::UnsupportedCertificate
            | Alert::CertificateRevoked
            | Alert::CertificateExpired
            | Alert::CertificateUnknown
            | Alert::UnknownCA
            | Alert::AccessDenied
            | Alert::HandshakeFailure
            | Alert::ProtocolVersion
            | Alert::InsufficientSecurity
    )
}

/// The client the proxy forwards with: hyper's own (the request target
/// goes out as it came; no header is added; nothing is decompressed),
/// http or https (rustls, Mozilla's roots).
pub(crate) type Upstream = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    axum::body::Body,
>;

/// The most header lines an upstream answer may have.
const UPSTREAM_MAX_HEADERS: usize = 1024;

pub(crate) fn upstream_client(config: &ProxyConfig) -> Result<Upstream, Error> {
    let tls = client_config(config)?;
    let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(config.upstream_timeout));
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    Ok(
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .pool_max_idle_per_host(256)
            // hyper's default is 100; an answer with more passes through.
            .http1_max_headers(UPSTREAM_MAX_HEADERS)
            .build(https),
    )
}

#[cfg(test)]
mod tests {
    use rustls::{AlertDescription as Alert, CertificateError, Error, PeerMisbehaved};

    use super::{Refusal, TlsFailure, tls_failure};

    /// As hyper's chain holds it: inside an `io::Error`.
    fn failure(error: Error, in_handshake: bool) -> Option<TlsFailure> {
        tls_failure(
            &std::io::Error::new(std::io::ErrorKind::InvalidData, error),
            in_handshake,
        )
    }

    #[test]
    fn the_proxys_verification_and_the_upstreams_refusals_are_refused_handshakes() {
        for refused in [
            Error::InvalidCertificate(CertificateError::UnknownIssuer),
            Error::InvalidCertificate(CertificateError::Expired),
            Error::NoCertificatesPresented,
            Error::AlertReceived(Alert::CertificateRequired),
            Error::AlertReceived(Alert::UnknownCA),
            Error::AlertReceived(Alert::BadCertificate),
            Error::AlertReceived(Alert::AccessDenied),
            Error::AlertReceived(Alert::HandshakeFailure),
        ] {
            let refusal = Refusal::of(&refused);
            assert_eq!(
                failure(refused, false),
                Some(TlsFailure::Refused(refusal)),
                "after the handshake too"
            );
        }
    }

    /// What may break an answer after the request was written is no
    /// refused handshake; while the connection is made, it is.
    #[test]
    fn a_tls_error_that_can_come_mid_answer_breaks_the_answer_off() {
        for broken in [
            Error::DecryptError,
            Error::AlertReceived(Alert::BadRecordMac),
            Error::AlertReceived(Alert::DecodeError),
            Error::AlertReceived(Alert::InternalError),
            Error::PeerMisbehaved(PeerMisbehaved::IllegalMiddleboxChangeCipherSpec),
            Error::PeerSentOversizedRecord,
            Error::General("anything".to_owned()),
        ] {
            let text = broken.to_string();
            assert_eq!(
                failure(broken.clone(), false),
                Some(TlsFailure::BrokeOff(text.clone())),
                "{broken:?}"
            );
            assert_eq!(
                failure(broken.clone(), true),
                Some(TlsFailure::Refused(Refusal::Other(text))),
                "{broken:?} in the handshake"
            );
        }
    }

    #[test]
    fn an_error_without_tls_is_none() {
        let plain = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        assert_eq!(tls_failure(&plain, false), None);
        assert_eq!(tls_failure(&plain, true), None);
    }
}
