//! HTTPS for the embedded server (feature `tls`, CONTRACT section 18): a
//! local CA made in memory, or a given certificate, and optionally client
//! certificates required (mutual TLS).

use std::fmt;

use payments_serve::tls::{LocalCa, Pem, ServerTls, TlsError};

use super::{MockServer, MockServerBuilder};

/// The embedded server's TLS, as the builder was told.
#[derive(Clone, Default)]
pub(super) struct TlsChoice {
    server: Option<ServerChoice>,
    client_ca_pem: Option<String>,
}

#[derive(Clone)]
enum ServerChoice {
    SelfSigned,
    Given { cert_pem: String, key_pem: String },
}

impl fmt::Debug for TlsChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A given key is never printed.
        let server = match &self.server {
            None => "none",
            Some(ServerChoice::SelfSigned) => "self-signed",
            Some(ServerChoice::Given { .. }) => "given certificate",
        };
        f.debug_struct("TlsChoice")
            .field("server", &server)
            .field(
                "client_certificates_required",
                &self.client_ca_pem.is_some(),
            )
            .finish()
    }
}

/// What the started server keeps of its TLS.
#[derive(Debug, Clone, Default)]
pub(super) struct Started {
    /// The CA of a self-signed set-up, PEM.
    pub(super) ca_pem: Option<String>,
}

impl TlsChoice {
    /// Whether the server speaks HTTPS.
    pub(super) fn is_on(&self) -> bool {
        self.server.is_some()
    }

    /// The listener's configuration, and what the server hands tests.
    pub(super) fn build(&self) -> Result<Option<(ServerTls, Started)>, TlsError> {
        let Some(server) = &self.server else {
            return Ok(None);
        };
        let (issued_cert, issued_key, ca_pem) = match server {
            ServerChoice::SelfSigned => {
                let ca = LocalCa::generate()?;
                let names = ["localhost", "127.0.0.1", "::1"].map(str::to_owned);
                let issued = ca.server_cert(&names)?;
                let key = issued.key_pem().to_owned();
                (issued.cert_pem, key, Some(ca.cert_pem().to_owned()))
            }
            ServerChoice::Given { cert_pem, key_pem } => (cert_pem.clone(), key_pem.clone(), None),
        };
        let tls = ServerTls::from_pem(
            Pem {
                bytes: issued_cert.as_bytes(),
                name: "the embedded server's certificate",
            },
            Pem {
                bytes: issued_key.as_bytes(),
                name: "the embedded server's key",
            },
            self.client_ca_pem.as_deref().map(|ca| Pem {
                bytes: ca.as_bytes(),
                name: "the client CA",
            }),
        )?;
        Ok(Some((tls, Started { ca_pem })))
    }
}

impl MockServerBuilder {
    /// Serve HTTPS with a certificate issued by a local CA made for this
    /// server, in memory (`--tls-self-signed`, without the directory):
    /// [`MockServer::ca_pem`] is the CA to trust, [`MockServer::base_url`]
    /// starts with `https://127.0.0.1:`. The certificate names
    /// `localhost`, `127.0.0.1` and `::1`.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_mock_server::MockServer;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = MockServer::builder().tls_self_signed().start().await?;
    /// assert!(server.base_url().starts_with("https://127.0.0.1:"));
    /// let ca = server.ca_pem().expect("a self-signed server has a CA");
    /// assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"));
    /// # server.shutdown().await;
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn tls_self_signed(mut self) -> Self {
        self.tls.server = Some(ServerChoice::SelfSigned);
        self
    }

    /// Serve HTTPS with this certificate chain and key, in PEM
    /// (`--tls-cert`, `--tls-key`). [`MockServerBuilder::start`] fails with
    /// [`crate::Error::Tls`] when they are not PEM or not a pair.
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn tls_pem(
        mut self,
        cert_chain_pem: impl Into<String>,
        key_pem: impl Into<String>,
    ) -> Self {
        self.tls.server = Some(ServerChoice::Given {
            cert_pem: cert_chain_pem.into(),
            key_pem: key_pem.into(),
        });
        self
    }

    /// Require a client certificate issued by this CA (PEM) on every
    /// connection (`--tls-client-ca`, mutual TLS); a connection without
    /// one gets no HTTP answer, only TLS's alert (`CertificateRequired`).
    /// Takes effect with [`MockServerBuilder::tls_self_signed`]
    /// or [`MockServerBuilder::tls_pem`].
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn tls_client_ca(mut self, ca_pem: impl Into<String>) -> Self {
        self.tls.client_ca_pem = Some(ca_pem.into());
        self
    }
}

impl MockServer {
    /// The CA to trust (PEM) when the server was started with
    /// [`MockServerBuilder::tls_self_signed`]; `None` otherwise.
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn ca_pem(&self) -> Option<&str> {
        self.tls.ca_pem.as_deref()
    }
}
