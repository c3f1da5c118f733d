//! HTTPS for the listeners (CONTRACT section 18): a [`ServerTls`] made from
//! a certificate chain and its key in PEM, optionally requiring client
//! certificates issued by a given CA (mutual TLS); a [`LocalCa`] that
//! issues server and client certificates for a sandbox and its tests; and
//! [`self_signed_dir`], the local CA kept in a directory that
//! `--tls-self-signed DIR` uses.
//!
//! The crypto is rustls's `ring` provider, named explicitly, so nothing
//! here depends on which provider another crate of the process installed
//! as the default.
//!
//! Errors name the file (or what the PEM was) and never carry key
//! material: a key that does not parse is "not a PEM private key", never
//! quoted.

mod local_ca;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};

pub use local_ca::{Issued, LocalCa, RENEW_BEFORE, SelfSignedFiles, self_signed_dir};

/// The crypto provider of every TLS configuration here: ring, not
/// aws-lc-rs (a C and cmake build).
#[must_use]
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A listener's TLS: its certificate chain, key and, with mutual TLS, the
/// CA a client's certificate must be issued by. Cheap to clone.
#[derive(Clone)]
pub struct ServerTls {
    config: Arc<ServerConfig>,
    mutual: bool,
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The configuration holds the private key: never printed.
        f.debug_struct("ServerTls")
            .field("client_certificates_required", &self.mutual)
            .finish_non_exhaustive()
    }
}

/// One PEM input and how an error names it (a file's path, or "the
/// embedded server's certificate").
#[derive(Debug, Clone, Copy)]
pub struct Pem<'a> {
    /// The PEM text.
    pub bytes: &'a [u8],
    /// What an error calls it: the file's path, usually.
    pub name: &'a str,
}

impl ServerTls {
    /// From PEM files: `cert` (the server's certificate first, then any
    /// intermediates), `key` (PKCS#8, PKCS#1 or SEC1), and, for mutual
    /// TLS, `client_ca` (one or more CA certificates).
    ///
    /// # Errors
    ///
    /// [`TlsError`] naming the file that is missing, unreadable, not PEM,
    /// or whose key does not match the certificate.
    pub fn from_files(cert: &Path, key: &Path, client_ca: Option<&Path>) -> Result<Self, TlsError> {
        let cert_bytes = read(cert)?;
        let key_bytes = read(key)?;
        let ca_bytes = client_ca.map(read).transpose()?;
        let cert_name = cert.display().to_string();
        let key_name = key.display().to_string();
        let ca_name = client_ca.map(|p| p.display().to_string());
        Self::from_pem(
            Pem {
                bytes: &cert_bytes,
                name: &cert_name,
            },
            Pem {
                bytes: &key_bytes,
                name: &key_name,
            },
            ca_bytes
                .as_deref()
                .zip(ca_name.as_deref())
                .map(|(bytes, name)| Pem { bytes, name }),
        )
    }

    /// From PEM text: the certificate chain, its key and, for mutual TLS,
    /// the client CA.
    ///
    /// # Errors
    ///
    /// [`TlsError`] naming the input that is not PEM or whose key does not
    /// match the certificate.
    pub fn from_pem(
        cert: Pem<'_>,
        key: Pem<'_>,
        client_ca: Option<Pem<'_>>,
    ) -> Result<Self, TlsError> {
        let chain = certificates(cert)?;
        let key_der = PrivateKeyDer::from_pem_slice(key.bytes).map_err(|_| TlsError::NotPem {
            name: key.name.to_owned(),
            expected: "a PEM private key (PKCS#8, PKCS#1 or SEC1)",
        })?;
        let builder = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Config(e.to_string()))?;
        let builder = match client_ca {
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                for der in certificates(ca)? {
                    roots.add(der).map_err(|e| TlsError::BadCertificate {
                        name: ca.name.to_owned(),
                        reason: e.to_string(),
                    })?;
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                        .build()
                        .map_err(|e| TlsError::Config(e.to_string()))?;
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let mut config = builder
            .with_single_cert(chain, key_der)
            .map_err(|e| match e {
                rustls::Error::InconsistentKeys(_) => TlsError::KeyMismatch {
                    key: key.name.to_owned(),
                    cert: cert.name.to_owned(),
                },
                other => TlsError::BadCertificate {
                    name: cert.name.to_owned(),
                    reason: other.to_string(),
                },
            })?;
        // HTTP/1.1 first; HTTP/1.0 too (`curl --http1.0` offers only it,
        // and hyper answers it), so such a client gets an answer rather
        // than TLS's `no_application_protocol` alert. A client offering
        // only `h2` still gets the alert: this server speaks HTTP/1 alone.
        config.alpn_protocols = vec![b"http/1.1".to_vec(), b"http/1.0".to_vec()];
        Ok(Self {
            config: Arc::new(config),
            mutual: client_ca.is_some(),
        })
    }

    /// Whether a client must present a certificate (mutual TLS).
    #[must_use]
    pub fn requires_client_certificate(&self) -> bool {
        self.mutual
    }

    pub(crate) fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(Arc::clone(&self.config))
    }
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_owned(),
        source,
    })
}

/// Every certificate of a PEM input; at least one.
fn certificates(pem: Pem<'_>) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let not_pem = || TlsError::NotPem {
        name: pem.name.to_owned(),
        expected: "PEM certificates (-----BEGIN CERTIFICATE-----)",
    };
    let chain = CertificateDer::pem_slice_iter(pem.bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| not_pem())?;
    if chain.is_empty() {
        return Err(not_pem());
    }
    Ok(chain)
}

/// Why TLS could not be set up. Never carries key material.
#[derive(Debug)]
#[non_exhaustive]
pub enum TlsError {
    /// A file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file (or PEM input) holds no PEM of the expected kind.
    NotPem {
        /// The file, or what the input was.
        name: String,
        /// What it should hold.
        expected: &'static str,
    },
    /// The private key is not the key of the certificate.
    KeyMismatch {
        /// The key's file.
        key: String,
        /// The certificate's file.
        cert: String,
    },
    /// A certificate was refused (malformed, or unusable as a CA).
    BadCertificate {
        /// The file.
        name: String,
        /// What rustls said.
        reason: String,
    },
    /// A certificate or key could not be made.
    Generate(String),
    /// A file of the local CA could not be written.
    Write {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// rustls refused the configuration.
    Config(String),
    /// One half of a kept local CA (`ca.pem`, `ca-key.pem`) without the
    /// other: never made again over it.
    HalfCa {
        /// The half that is there.
        there: PathBuf,
        /// The half that is missing.
        missing: PathBuf,
    },
    /// A local CA's directory that cannot be written (a read-only file
    /// system, another user's directory) lacks what would have to be
    /// written.
    ReadOnlyDir {
        /// The directory.
        dir: PathBuf,
        /// Why it cannot be written, as the system said.
        reason: String,
        /// What is missing, and would have to be written.
        needed: String,
    },
    /// A stop came ([`stop_waiting`]) while this process waited for
    /// another's lock on a local CA's directory: nothing was written.
    Stopped {
        /// The lock waited for.
        lock: PathBuf,
    },
}

/// Ends every wait of this process for another process's lock on a local
/// CA's directory ([`self_signed_dir`]), now and later: each answers
/// [`TlsError::Stopped`] within 20 ms, nothing written. A binary calls it
/// when a stop (SIGINT, SIGTERM) comes while it starts, so the stop is
/// not held up to 30 s by the wait.
pub fn stop_waiting() {
    local_ca::give_up();
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            Self::NotPem { name, expected } => write!(f, "{name}: not {expected}"),
            Self::KeyMismatch { key, cert } => {
                write!(
                    f,
                    "{key}: the private key does not match the certificate in {cert}"
                )
            }
            Self::BadCertificate { name, reason } => {
                write!(f, "{name}: unusable certificate: {reason}")
            }
            Self::Generate(reason) => write!(f, "cannot make a certificate: {reason}"),
            Self::Write { path, source } => write!(f, "cannot write {}: {source}", path.display()),
            Self::Config(reason) => write!(f, "TLS configuration refused: {reason}"),
            Self::HalfCa { there, missing } => write!(
                f,
                "{} is there but {} is missing: the local CA is not made again over one half of it; put it back, or delete both for a new CA (clients then trust the new ca.pem)",
                there.display(),
                missing.display()
            ),
            Self::ReadOnlyDir {
                dir,
                reason,
                needed,
            } => write!(
                f,
                "{} cannot be written ({reason}), and {needed}: start once where it can be written (the files are then reused read-only), or give a directory the process can write",
                dir.display()
            ),
            Self::Stopped { lock } => write!(
                f,
                "stopped while waiting for {}: nothing was written",
                lock.display()
            ),
        }
    }
}

/// The I/O error is part of the message (a CLI prints one line), so it
/// is not also a source.
impl std::error::Error for TlsError {}
