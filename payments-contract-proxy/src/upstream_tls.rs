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

/// The upstream client's rustls configuration.
pub(crate) fn client_config(config: &ProxyConfig) -> Result<rustls::ClientConfig, Error> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(ca) = &config.upstream_ca {
        for cert in certificates(ca, "--upstream-ca")? {
            roots.add(cert).map_err(|e| {
                Error::Config(format!("--upstream-ca: {}: unusable CA: {e}", ca.display()))
            })?;
        }
    }
    let builder = rustls::ClientConfig::builder_with_provider(payments_serve::tls::provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(format!("TLS towards the upstream: {e}")))?
        .with_root_certificates(roots);
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

/// The TLS reason in an upstream failure, when there is one: rustls's
/// words (an unknown issuer, an expired certificate, the upstream's alert
/// for a missing client certificate), which hold no secret.
pub(crate) fn tls_reason(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(e);
    while let Some(error) = current {
        if let Some(tls) = error.downcast_ref::<rustls::Error>() {
            return Some(tls.to_string());
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
