//! A local certificate authority (rcgen): the CA of `--tls-self-signed
//! DIR` and of the embedded server's TLS, which issues the server's
//! certificate and, for tests of mutual TLS, client certificates.
//!
//! A CA kept in a directory is read back from its key alone: the issuer's
//! name and key-identifier method are fixed here, so certificates issued
//! after a restart chain to the same `ca.pem` without parsing it.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, date_time_ymd,
};

use super::TlsError;

/// The CA's common name, what a person sees when asked to trust it, is
/// this and the start of its key's identifier: two local CAs never share
/// a name, so a certificate of one is "unknown issuer" to the other.
const CA_NAME: &str = "payments mock local CA";

/// A certificate authority in memory: its certificate (to trust) and its
/// key (to issue with).
pub struct LocalCa {
    key: KeyPair,
    cert_pem: String,
}

impl fmt::Debug for LocalCa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalCa").finish_non_exhaustive()
    }
}

/// A certificate and its private key, in PEM. `Debug` never shows the key.
#[derive(Clone)]
pub struct Issued {
    /// The certificate, PEM.
    pub cert_pem: String,
    key_pem: String,
}

impl fmt::Debug for Issued {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Issued")
            .field("cert_pem", &self.cert_pem)
            .field("key_pem", &"[redacted]")
            .finish()
    }
}

impl Issued {
    /// The private key, PEM (PKCS#8).
    #[must_use]
    pub fn key_pem(&self) -> &str {
        &self.key_pem
    }

    /// Certificate then key in one PEM text: what a client's identity
    /// takes.
    #[must_use]
    pub fn identity_pem(&self) -> String {
        format!("{}{}", self.cert_pem, self.key_pem)
    }
}

fn generate_error(e: rcgen::Error) -> TlsError {
    TlsError::Generate(e.to_string())
}

/// This year, from the system clock (close enough for validity bounds a
/// year either side).
fn this_year() -> i32 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    1970 + i32::try_from(secs / 31_556_952).unwrap_or(0)
}

/// How long a CA lasts from the day it is made: ten years.
const CA_DAYS: u64 = 3_652;
/// How long a server certificate lasts from the day it is issued: two years.
const SERVER_DAYS: u64 = 730;

/// Makes a certificate made now end `days` days from now.
fn ends_in(params: &mut CertificateParams, days: u64) {
    params.not_after =
        (std::time::SystemTime::now() + std::time::Duration::from_secs(days * 86_400)).into();
}

fn ca_params(key: &KeyPair) -> CertificateParams {
    let mut params = CertificateParams::default();
    let id: String = params
        .key_identifier(key)
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, format!("{CA_NAME} {id}"));
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.not_before = date_time_ymd(this_year() - 1, 1, 1);
    ends_in(&mut params, CA_DAYS);
    params
}

fn leaf_params(names: &[String], common_name: &str) -> Result<CertificateParams, TlsError> {
    let mut params = CertificateParams::new(names.to_vec()).map_err(generate_error)?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    params.distinguished_name = name;
    params.use_authority_key_identifier_extension = true;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.not_before = date_time_ymd(this_year() - 1, 1, 1);
    ends_in(&mut params, SERVER_DAYS);
    Ok(params)
}

impl LocalCa {
    /// A new CA with a fresh key.
    ///
    /// # Errors
    ///
    /// [`TlsError::Generate`] when rcgen cannot make the key or certificate.
    pub fn generate() -> Result<Self, TlsError> {
        let key = KeyPair::generate().map_err(generate_error)?;
        let cert_pem = ca_params(&key)
            .self_signed(&key)
            .map_err(generate_error)?
            .pem();
        Ok(Self { key, cert_pem })
    }

    /// The CA's certificate, PEM: what clients trust.
    #[must_use]
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    fn issuer(&self) -> Issuer<'static, &KeyPair> {
        Issuer::new(ca_params(&self.key), &self.key)
    }

    fn issue(&self, params: &CertificateParams) -> Result<Issued, TlsError> {
        let key = KeyPair::generate().map_err(generate_error)?;
        let cert = params
            .signed_by(&key, &self.issuer())
            .map_err(generate_error)?;
        Ok(Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// A server certificate for these names (DNS names or IP addresses),
    /// valid from a year ago to two years ahead.
    ///
    /// # Errors
    ///
    /// [`TlsError::Generate`] for a name that is neither.
    pub fn server_cert(&self, names: &[String]) -> Result<Issued, TlsError> {
        let mut params = leaf_params(names, names.first().map_or("localhost", String::as_str))?;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.issue(&params)
    }

    /// A server certificate for these names whose validity ended in 2001:
    /// for tests that a client refuses an expired certificate.
    ///
    /// # Errors
    ///
    /// As [`LocalCa::server_cert`].
    pub fn expired_server_cert(&self, names: &[String]) -> Result<Issued, TlsError> {
        let mut params = leaf_params(names, "expired")?;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.not_before = date_time_ymd(2000, 1, 1);
        params.not_after = date_time_ymd(2001, 1, 1);
        self.issue(&params)
    }

    /// A client certificate (mutual TLS) with this common name.
    ///
    /// # Errors
    ///
    /// [`TlsError::Generate`] when rcgen cannot make it.
    pub fn client_cert(&self, common_name: &str) -> Result<Issued, TlsError> {
        let mut params = leaf_params(&[], common_name)?;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.issue(&params)
    }
}

/// The files of a local CA kept in a directory.
#[derive(Debug, Clone)]
pub struct SelfSignedFiles {
    /// `DIR/ca.pem`: the CA's certificate, to trust.
    pub ca: PathBuf,
    /// `DIR/server.pem`: the server's certificate.
    pub cert: PathBuf,
    /// `DIR/server-key.pem`: its key (mode 0600).
    pub key: PathBuf,
    /// Whether this call made a new CA (else it reused the one in `DIR`).
    pub new_ca: bool,
    /// Whether this call issued a new server certificate.
    pub new_cert: bool,
}

/// How long before it ends a kept server certificate is issued again: a
/// sandbox that runs for years never starts with a certificate that is
/// about to expire (clients would refuse it mid-run).
pub const RENEW_BEFORE: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// Whether the server certificate `cert_pem` chains to `ca_pem` and holds
/// for every one of `names` still [`RENEW_BEFORE`] from now, as rustls's
/// own verifier (webpki) judges it: an expired or soon-expiring
/// certificate, one of another CA, one without a name, or a file that is
/// not one is not.
fn lasts(ca_pem: &str, cert_pem: &str, names: &[String]) -> bool {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .is_ok_and(|now| holds_at(ca_pem, cert_pem, names, now + RENEW_BEFORE))
}

/// [`lasts`] at `at` (since the Unix epoch) instead of [`RENEW_BEFORE`]
/// from now.
fn holds_at(ca_pem: &str, cert_pem: &str, names: &[String], at: std::time::Duration) -> bool {
    use rustls::client::WebPkiServerVerifier;
    use rustls::client::danger::ServerCertVerifier as _;
    use rustls_pki_types::pem::PemObject as _;
    use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

    let (Ok(ca), Ok(leaf)) = (
        CertificateDer::from_pem_slice(ca_pem.as_bytes()),
        CertificateDer::from_pem_slice(cert_pem.as_bytes()),
    ) else {
        return false;
    };
    let mut roots = rustls::RootCertStore::empty();
    if roots.add(ca).is_err() {
        return false;
    }
    let Ok(verifier) =
        WebPkiServerVerifier::builder_with_provider(std::sync::Arc::new(roots), super::provider())
            .build()
    else {
        return false;
    };
    let then = UnixTime::since_unix_epoch(at);
    !names.is_empty()
        && names.iter().all(|name| {
            ServerName::try_from(name.as_str()).is_ok_and(|name| {
                verifier
                    .verify_server_cert(&leaf, &[], &name, &[], then)
                    .is_ok()
            })
        })
}

/// Whether a kept `ca.pem` is a certificate of the kept CA key: a corrupt
/// or foreign one would be announced to clients ("trust it") while every
/// server certificate is signed by the key.
fn check_ca_cert(
    cert_pem: &str,
    key: &KeyPair,
    cert_path: &Path,
    key_path: &Path,
) -> Result<(), TlsError> {
    use rustls_pki_types::pem::PemObject as _;
    let der =
        rustls_pki_types::CertificateDer::from_pem_slice(cert_pem.as_bytes()).map_err(|_| {
            TlsError::NotPem {
                name: cert_path.display().to_string(),
                expected: "a PEM certificate (the local CA's)",
            }
        })?;
    // The key's public key is in the certificate's subject public key
    // info, as it was written (rcgen writes the raw point or modulus).
    let public = key.public_key_raw();
    if public.is_empty() || !der.windows(public.len()).any(|w| w == public) {
        return Err(TlsError::KeyMismatch {
            key: key_path.display().to_string(),
            cert: cert_path.display().to_string(),
        });
    }
    Ok(())
}

/// The local CA in `dir` and a server certificate for `names`: made on
/// first use (the directory too), reused after. The server certificate is
/// issued again when it lacks one of `names` (a new `--host` or public
/// URL), when the CA is new, and when it would not hold [`RENEW_BEFORE`]
/// from now (it expires within 30 days, or it does not chain to the CA).
/// The CA itself lasts ten years; delete `ca.pem` and `ca-key.pem` for a
/// new one (one of them alone is [`TlsError::HalfCa`], never made again
/// over). Keys are written with mode 0600.
///
/// Files: `ca.pem`, `ca-key.pem`, `server.pem`, `server-key.pem`, and
/// `server.names` (the names the server certificate was issued for).
///
/// # Errors
///
/// [`TlsError::Write`] naming the directory or file that cannot be
/// written; [`TlsError::NotPem`] for a CA key in `dir` that is not one.
pub fn self_signed_dir(dir: &Path, names: &[String]) -> Result<SelfSignedFiles, TlsError> {
    std::fs::create_dir_all(dir).map_err(|source| TlsError::Write {
        path: dir.to_owned(),
        source,
    })?;
    let ca_path = dir.join("ca.pem");
    let ca_key_path = dir.join("ca-key.pem");
    let cert_path = dir.join("server.pem");
    let key_path = dir.join("server-key.pem");
    let names_path = dir.join("server.names");

    // One half of the pair alone is never made again over: a new CA would
    // replace the `ca.pem` clients were given, or its key.
    for (there, missing) in [(&ca_path, &ca_key_path), (&ca_key_path, &ca_path)] {
        if there.exists() && !missing.exists() {
            return Err(TlsError::HalfCa {
                there: there.clone(),
                missing: missing.clone(),
            });
        }
    }
    let (ca, new_ca) = if ca_path.exists() && ca_key_path.exists() {
        let key_text = std::fs::read_to_string(&ca_key_path).map_err(|source| TlsError::Read {
            path: ca_key_path.clone(),
            source,
        })?;
        let key = KeyPair::from_pem(&key_text).map_err(|_| TlsError::NotPem {
            name: ca_key_path.display().to_string(),
            expected: "a PEM private key (PKCS#8)",
        })?;
        let cert_pem = std::fs::read_to_string(&ca_path).map_err(|source| TlsError::Read {
            path: ca_path.clone(),
            source,
        })?;
        check_ca_cert(&cert_pem, &key, &ca_path, &ca_key_path)?;
        (LocalCa { key, cert_pem }, false)
    } else {
        let ca = LocalCa::generate()?;
        write_file(&ca_key_path, ca.key.serialize_pem().as_bytes(), true)?;
        write_file(&ca_path, ca.cert_pem.as_bytes(), false)?;
        (ca, true)
    };

    let issued_for: Vec<String> = std::fs::read_to_string(&names_path)
        .map(|text| text.lines().map(str::to_owned).collect())
        .unwrap_or_default();
    let covered = names.iter().all(|n| issued_for.contains(n));
    let lasting = || {
        std::fs::read_to_string(&cert_path)
            .is_ok_and(|cert| lasts(&ca.cert_pem, &cert, &issued_for))
    };
    let new_cert = new_ca || !covered || !key_path.exists() || !lasting();
    if new_cert {
        let mut all = issued_for;
        if !covered || new_ca {
            for name in names {
                if !all.contains(name) {
                    all.push(name.clone());
                }
            }
        }
        let issued = ca.server_cert(&all)?;
        write_file(&key_path, issued.key_pem.as_bytes(), true)?;
        write_file(&cert_path, issued.cert_pem.as_bytes(), false)?;
        let mut listed = all.join("\n");
        listed.push('\n');
        write_file(&names_path, listed.as_bytes(), false)?;
    }
    Ok(SelfSignedFiles {
        ca: ca_path,
        cert: cert_path,
        key: key_path,
        new_ca,
        new_cert,
    })
}

/// Writes `bytes` to `path` (replacing it); a key is created with mode 0600
/// so no other user can read it, even for a moment.
fn write_file(path: &Path, bytes: &[u8], secret: bool) -> Result<(), TlsError> {
    let error = |source| TlsError::Write {
        path: path.to_owned(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = secret;
    let mut file = options.open(path).map_err(error)?;
    #[cfg(unix)]
    if secret {
        // A file that existed keeps its mode through open(): set it.
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(error)?;
    }
    file.write_all(bytes).map_err(error)?;
    Ok(())
}

#[cfg(test)]
mod tests;
