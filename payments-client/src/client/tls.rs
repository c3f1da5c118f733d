//! Extra trust and a client certificate (CONTRACT section 18): a sandbox
//! with its own CA, a staging service that demands mutual TLS. Both are
//! PEM, checked when the client is built; errors never quote a key.

use std::fmt;

use super::ClientBuilder;
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

impl ClientBuilder {
    /// Also trusts the CA certificates of this PEM text (one or more
    /// `-----BEGIN CERTIFICATE-----` blocks), beside the usual roots: a
    /// sandbox's local CA, a staging service's private CA.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::Client;
    /// // E.g. the CA a mock made with `--tls-self-signed DIR`: DIR/ca.pem.
    /// let bad = Client::builder("https://sandbox.example")
    ///     .add_root_certificate_pem(b"not a certificate")
    ///     .build();
    /// assert!(bad.unwrap_err().to_string().contains("root certificate: not PEM"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`build`](Self::build) fails with [`Error::Config`] when the text
    /// holds no PEM certificate.
    #[cfg_attr(docsrs, doc(cfg(any(feature = "rustls", feature = "native-tls"))))]
    pub fn add_root_certificate_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.tls.roots.push(pem.as_ref().to_vec());
        self
    }

    /// Presents this client certificate (mutual TLS): the certificate
    /// (then any intermediates) and its private key, in one PEM text (with
    /// the `native-tls` feature alone the key must be PKCS#8). The key
    /// never appears in `Debug` or an error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use payments_client::Client;
    /// let mut identity = std::fs::read("client.pem")?;
    /// identity.extend(std::fs::read("client-key.pem")?);
    /// let client = Client::builder("https://staging.example")
    ///     .add_root_certificate_pem(std::fs::read("ca.pem")?)
    ///     .identity_pem(identity)
    ///     .build()?;
    /// assert!(!format!("{client:?}").contains("PRIVATE KEY"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`build`](Self::build) fails with [`Error::Config`] when the text
    /// is not a certificate and a key in PEM.
    #[cfg_attr(docsrs, doc(cfg(any(feature = "rustls", feature = "native-tls"))))]
    pub fn identity_pem(mut self, cert_and_key_pem: impl AsRef<[u8]>) -> Self {
        self.tls.identity = Some(cert_and_key_pem.as_ref().to_vec());
        self
    }
}
