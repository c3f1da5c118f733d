//! The binaries' TLS flags (CONTRACT section 18), shared by the mock and
//! the contract proxy: `--tls-cert FILE --tls-key FILE`,
//! `--tls-self-signed DIR`, `--tls-client-ca FILE`.

use std::path::PathBuf;

use crate::logging::LogFormat;
use crate::tls::{Pem, ServerTls, TlsError, self_signed_dir};

/// Serving HTTPS.
#[derive(Debug, Clone, clap::Args)]
#[group(id = "tls_server", multiple = true)]
pub struct TlsArgs {
    /// Serve HTTPS only, with this certificate chain (PEM, the server's
    /// certificate first); needs --tls-key.
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_key",
        conflicts_with = "tls_self_signed"
    )]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Serve HTTPS only, with a local certificate authority kept in DIR
    /// (made on first use, reused after; DIR/ca.pem is what clients
    /// trust) and a server certificate for localhost, 127.0.0.1, ::1, the
    /// listening address (and, for the mock, its --public-url host).
    #[arg(long, value_name = "DIR")]
    tls_self_signed: Option<PathBuf>,
    /// Also require a client certificate issued by this CA (PEM) on every
    /// connection (mutual TLS); a connection without one gets no HTTP
    /// answer, only TLS's alert (`CertificateRequired`).
    /// Needs --tls-cert or --tls-self-signed.
    #[arg(long, value_name = "FILE")]
    tls_client_ca: Option<PathBuf>,
}

impl TlsArgs {
    /// Whether HTTPS was asked for.
    #[must_use]
    pub fn is_on(&self) -> bool {
        self.tls_cert.is_some() || self.tls_self_signed.is_some()
    }

    /// [`TlsArgs::server_tls_logged`], in the format the command line's
    /// `--log-format` asks for (text unless its last one says `json`).
    ///
    /// # Errors
    ///
    /// As [`TlsArgs::server_tls_logged`].
    pub fn server_tls(
        &self,
        host: &str,
        public_host: Option<&str>,
    ) -> Result<Option<ServerTls>, String> {
        let format = super::said::asked_format(std::env::args());
        self.server_tls_logged(host, public_host, format)
    }

    /// The listener's TLS, when asked for: for `--tls-self-signed`, the
    /// local CA's path goes to stderr in the log's `format` (as text, its
    /// line; as JSON, an `INFO` event with `tls_dir` and `ca`). `host` is
    /// the listening address, `public_host` the public URL's host.
    ///
    /// # Errors
    ///
    /// A file that cannot be read or is not PEM, a key that does not
    /// match, a directory that cannot be written, said in one line.
    pub fn server_tls_logged(
        &self,
        host: &str,
        public_host: Option<&str>,
        format: LogFormat,
    ) -> Result<Option<ServerTls>, String> {
        if self.tls_client_ca.is_some() && !self.is_on() {
            return Err(
                "--tls-client-ca needs --tls-cert and --tls-key, or --tls-self-signed".to_owned(),
            );
        }
        let client_ca = self.tls_client_ca.as_deref();
        let text = |e: TlsError| e.to_string();
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            return ServerTls::from_files(cert, key, client_ca)
                .map(Some)
                .map_err(text);
        }
        let Some(dir) = &self.tls_self_signed else {
            return Ok(None);
        };
        let mut names: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(str::to_owned).into();
        for name in [Some(host), public_host].into_iter().flatten() {
            let name = name.trim_start_matches('[').trim_end_matches(']');
            let unspecified = name
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_unspecified());
            if !name.is_empty() && !unspecified && !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
        let files = self_signed_dir(dir, &names).map_err(|e| format!("--tls-self-signed: {e}"))?;
        let made = if files.new_ca { "made" } else { "reused" };
        let renewed = if files.new_cert && !files.new_ca {
            ", server certificate issued again"
        } else {
            ""
        };
        let line = format!(
            "TLS: local CA {made} in {}{renewed}; clients trust it (payments --ca-cert {})",
            dir.display(),
            files.ca.display()
        );
        match format {
            LogFormat::Text => super::said::to_stderr(&format!("{line}\n")),
            LogFormat::Json => super::said::in_json(|| {
                tracing::info!(
                    target: "payments_serve::cli",
                    tls_dir = %dir.display(),
                    ca = %files.ca.display(),
                    "{line}"
                );
            }),
        }
        // What was in DIR under its lock: another process starting on the
        // same DIR may issue a new server certificate right after.
        let cert_name = files.cert.display().to_string();
        let key_name = files.key.display().to_string();
        let ca_bytes = client_ca
            .map(|path| {
                std::fs::read(path).map_err(|source| TlsError::Read {
                    path: path.to_owned(),
                    source,
                })
            })
            .transpose()
            .map_err(text)?;
        let ca_name = client_ca.map(|p| p.display().to_string());
        ServerTls::from_pem(
            Pem {
                bytes: files.server().cert_pem.as_bytes(),
                name: &cert_name,
            },
            Pem {
                bytes: files.server().key_pem().as_bytes(),
                name: &key_name,
            },
            ca_bytes
                .as_deref()
                .zip(ca_name.as_deref())
                .map(|(bytes, name)| Pem { bytes, name }),
        )
        .map(Some)
        .map_err(text)
    }
}
