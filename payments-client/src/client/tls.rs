//! Extra trust and a client certificate (CONTRACT section 18): a sandbox
//! with its own CA, a staging service that demands mutual TLS. Both are
//! PEM, given to the builder
//! ([`ClientBuilder::add_root_certificate_pem`](super::ClientBuilder::add_root_certificate_pem),
//! [`ClientBuilder::identity_pem`](super::ClientBuilder::identity_pem)) and
//! checked here when the client is built; errors never quote a key.

use std::fmt;

use crate::error::Error;

/// What the builder was given, parsed at `build()`.
#[derive(Clone, Default)]
pub(super) struct TlsOptions {
    roots: Vec<Vec<u8>>,
    identity: Option<Vec<u8>>,
}

impl fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The identity holds a private key: only whether there is one.
        f.debug_struct("TlsOptions")
            .field("extra_roots", &self.roots.len())
            .field("identity", &self.identity.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

impl TlsOptions {
    /// Also trusts the CA certificates of this PEM text.
    pub(super) fn add_roots(&mut self, pem: Vec<u8>) {
        self.roots.push(pem);
    }

    /// Presents this certificate and key.
    pub(super) fn set_identity(&mut self, pem: Vec<u8>) {
        self.identity = Some(pem);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.roots.is_empty() && self.identity.is_none()
    }

    /// Adds the roots and the identity to reqwest's builder.
    pub(super) fn apply(
        &self,
        mut builder: reqwest::ClientBuilder,
    ) -> Result<reqwest::ClientBuilder, Error> {
        for pem in &self.roots {
            let certificates = reqwest::Certificate::from_pem_bundle(pem)
                .ok()
                .filter(|c| !c.is_empty())
                .ok_or_else(|| {
                    Error::config(
                        "root certificate: not PEM certificates (-----BEGIN CERTIFICATE-----)",
                    )
                })?;
            for certificate in certificates {
                builder = builder.add_root_certificate(certificate);
            }
        }
        if let Some(pem) = &self.identity {
            builder = builder.identity(identity(pem)?);
        }
        // With both TLS features, the identity is rustls's: say so.
        #[cfg(all(feature = "rustls", feature = "native-tls"))]
        if self.identity.is_some() {
            builder = builder.use_rustls_tls();
        }
        Ok(builder)
    }
}

fn identity_error() -> Error {
    Error::config(
        "client identity: not a PEM certificate and its PEM private key (PKCS#8, PKCS#1 or SEC1)",
    )
}

#[cfg(feature = "rustls")]
fn identity(pem: &[u8]) -> Result<reqwest::Identity, Error> {
    let text = String::from_utf8_lossy(pem);
    if !text.contains("-----BEGIN CERTIFICATE-----") || !text.contains("PRIVATE KEY-----") {
        return Err(identity_error());
    }
    reqwest::Identity::from_pem(pem).map_err(|_| identity_error())
}

/// native-tls takes the certificates and a PKCS#8 key apart.
#[cfg(all(feature = "native-tls", not(feature = "rustls")))]
fn identity(pem: &[u8]) -> Result<reqwest::Identity, Error> {
    let text = std::str::from_utf8(pem).map_err(|_| identity_error())?;
    let start = text
        .find("-----BEGIN PRIVATE KEY-----")
        .ok_or_else(identity_error)?;
    let end_marker = "-----END PRIVATE KEY-----";
    let end = text[start..]
        .find(end_marker)
        .map(|i| start + i + end_marker.len())
        .ok_or_else(identity_error)?;
    let key = &text[start..end];
    let certs = format!("{}{}", &text[..start], &text[end..]);
    reqwest::Identity::from_pkcs8_pem(certs.as_bytes(), key.as_bytes())
        .map_err(|_| identity_error())
}
