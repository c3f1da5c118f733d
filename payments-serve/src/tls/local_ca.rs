//! A local certificate authority (rcgen): the CA of `--tls-self-signed
//! DIR` and of the embedded server's TLS, which issues the server's
//! certificate and, for tests of mutual TLS, client certificates.
//!
//! A CA kept in a directory is read back from its key alone: the issuer's
//! name and key-identifier method are fixed here, so certificates issued
//! after a restart chain to the same `ca.pem` without parsing it.

mod files;

pub(super) use files::give_up;

use std::fmt;
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
    server: Issued,
}

impl SelfSignedFiles {
    /// The server certificate and its key as they were in `DIR` while this
    /// process held its lock: what to serve. Reading `cert` and `key` again
    /// could pair this certificate with the key of one another process
    /// issued since.
    #[must_use]
    pub fn server(&self) -> &Issued {
        &self.server
    }
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

/// Whether the certificate `der` is one of `key`: the key's public key
/// is in the certificate's subject public key info, as it was written
/// (rcgen writes the raw point or modulus).
fn der_holds_key(der: &[u8], key: &KeyPair) -> bool {
    let public = key.public_key_raw();
    !public.is_empty() && der.windows(public.len()).any(|w| w == public)
}

/// Whether `cert_pem` is a PEM certificate of `key`.
fn holds_key(cert_pem: &str, key: &KeyPair) -> bool {
    use rustls_pki_types::pem::PemObject as _;
    rustls_pki_types::CertificateDer::from_pem_slice(cert_pem.as_bytes())
        .is_ok_and(|der| der_holds_key(&der, key))
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
    if !der_holds_key(&der, key) {
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
/// URL), when the CA is new, when its key is not the certificate's, and
/// when it would not hold [`RENEW_BEFORE`] from now (it expires within 30
/// days, or it does not chain to the CA). The CA itself lasts ten years;
/// delete `ca.pem` and `ca-key.pem` for a new one (one of them alone is
/// [`TlsError::HalfCa`], never made again over). Keys are written with
/// mode 0600.
///
/// Files: `ca.pem`, `ca-key.pem`, `server.pem`, `server-key.pem`, and
/// `server.names` (the names the server certificate was issued for).
///
/// Processes starting at once on one directory take turns (a lock file,
/// `DIR/.lock`, there while one of them works, taken over when left more
/// than 30 seconds ago by a process killed meanwhile): the first makes
/// the CA, the others reuse it, so all serve certificates of one CA. Each
/// file is written to a temporary file in `DIR`, synced and renamed over:
/// a write that fails (a full disk) leaves the files as they were. A new
/// CA's key and certificate are both written before either is put in
/// place; a key put in place whose certificate could not be is removed
/// again, and one whose certificate was written but not put in place (the
/// process killed between) gets it at the next start.
///
/// The server certificate and key returned ([`SelfSignedFiles::server`])
/// are the ones in `DIR` when the lock was held: another process issuing
/// a new certificate right after never pairs one's key with the other's
/// certificate.
///
/// A directory the process cannot write (a read-only file system, as a
/// Kubernetes secret volume; one of another user): its files are read
/// without the lock and served when they are complete and the server
/// certificate holds for `names` (nothing to write); otherwise
/// [`TlsError::ReadOnlyDir`] says what is missing.
///
/// # Errors
///
/// [`TlsError::Write`] naming the directory or file that cannot be
/// written; [`TlsError::ReadOnlyDir`]; [`TlsError::NotPem`] for a CA key
/// in `dir` that is not one.
pub fn self_signed_dir(dir: &Path, names: &[String]) -> Result<SelfSignedFiles, TlsError> {
    self_signed_dir_with(dir, names, files::DirLock::take)
}

/// [`self_signed_dir`], the directory's lock taken by `take` (a test's
/// stands for a file system that refuses it).
fn self_signed_dir_with(
    dir: &Path,
    names: &[String],
    take: impl FnOnce(&Path) -> Result<files::Taken, TlsError>,
) -> Result<SelfSignedFiles, TlsError> {
    std::fs::create_dir_all(dir).map_err(|source| TlsError::Write {
        path: dir.to_owned(),
        source,
    })?;
    // Held until the files are read and written: dropped at the return.
    let (_lock, read_only) = match take(dir)? {
        files::Taken::Held(lock) => (Some(lock), None),
        files::Taken::ReadOnly(e) => (None, Some(e)),
    };
    let cannot = |needed: String| TlsError::ReadOnlyDir {
        dir: dir.to_owned(),
        reason: read_only
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        needed,
    };
    let ca_path = dir.join("ca.pem");
    let ca_key_path = dir.join("ca-key.pem");
    let cert_path = dir.join("server.pem");
    let key_path = dir.join("server-key.pem");
    let names_path = dir.join("server.names");

    if read_only.is_none() {
        finish_ca(&ca_path, &ca_key_path);
        // Left by a process killed while it wrote: under the lock, no one's.
        for path in [&ca_path, &ca_key_path, &cert_path, &key_path, &names_path] {
            let _ = std::fs::remove_file(files::temporary(path));
        }
    }
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
        (read_ca(&ca_path, &ca_key_path)?, false)
    } else if read_only.is_some() {
        return Err(cannot(
            "it holds no local CA (ca.pem and ca-key.pem) and none can be made there".to_owned(),
        ));
    } else {
        (make_ca(&ca_path, &ca_key_path)?, true)
    };

    let issued_for: Vec<String> = std::fs::read_to_string(&names_path)
        .map(|text| text.lines().map(str::to_owned).collect())
        .unwrap_or_default();
    let covered = names.iter().all(|n| issued_for.contains(n));
    let kept = if new_ca {
        Err(String::new())
    } else {
        kept_server(&ca, [&cert_path, &key_path], names, &issued_for)
    };
    let new_cert = kept.is_err();
    let server = match kept {
        Ok(kept) => kept,
        Err(why) if read_only.is_some() => {
            return Err(cannot(format!(
                "its server certificate would have to be issued again: {why}"
            )));
        }
        Err(_) => {
            let mut all = issued_for;
            if !covered || new_ca {
                for name in names {
                    if !all.contains(name) {
                        all.push(name.clone());
                    }
                }
            }
            let issued = ca.server_cert(&all)?;
            // A key without its certificate (the second write failed) is
            // issued again at the next start: it does not match.
            files::write_whole(&key_path, issued.key_pem.as_bytes(), true)?;
            files::write_whole(&cert_path, issued.cert_pem.as_bytes(), false)?;
            let mut listed = all.join("\n");
            listed.push('\n');
            files::write_whole(&names_path, listed.as_bytes(), false)?;
            issued
        }
    };
    Ok(SelfSignedFiles {
        ca: ca_path,
        cert: cert_path,
        key: key_path,
        new_ca,
        new_cert,
        server,
    })
}

/// The kept server certificate and key (`paths`), when they serve
/// `names` (all in `issued_for`, the names `server.names` lists) and
/// last: else why not, as a user is told when the directory cannot be
/// written.
fn kept_server(
    ca: &LocalCa,
    [cert_path, key_path]: [&Path; 2],
    names: &[String],
    issued_for: &[String],
) -> Result<Issued, String> {
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let (cert_pem, key_pem) = (read(cert_path)?, read(key_path)?);
    let missing: Vec<&str> = names
        .iter()
        .filter(|n| !issued_for.contains(n))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "it is not for {} (server.names lists the names it was issued for)",
            missing.join(", ")
        ));
    }
    if !lasts(&ca.cert_pem, &cert_pem, issued_for) {
        return Err(format!(
            "{} ends within 30 days, or is not of the CA in ca.pem",
            cert_path.display()
        ));
    }
    if !KeyPair::from_pem(&key_pem).is_ok_and(|key| holds_key(&cert_pem, &key)) {
        return Err(format!(
            "{} is not the key of {}",
            key_path.display(),
            cert_path.display()
        ));
    }
    Ok(Issued { cert_pem, key_pem })
}

/// The kept CA: its key, and its certificate checked to be the key's.
fn read_ca(ca_path: &Path, ca_key_path: &Path) -> Result<LocalCa, TlsError> {
    let key_text = std::fs::read_to_string(ca_key_path).map_err(|source| TlsError::Read {
        path: ca_key_path.to_owned(),
        source,
    })?;
    let key = KeyPair::from_pem(&key_text).map_err(|_| TlsError::NotPem {
        name: ca_key_path.display().to_string(),
        expected: "a PEM private key (PKCS#8)",
    })?;
    let cert_pem = std::fs::read_to_string(ca_path).map_err(|source| TlsError::Read {
        path: ca_path.to_owned(),
        source,
    })?;
    check_ca_cert(&cert_pem, &key, ca_path, ca_key_path)?;
    Ok(LocalCa { key, cert_pem })
}

/// A new CA, its key and certificate written: both to temporary files
/// first, then put in place, the key first. A certificate that cannot be
/// put in place takes its key away again: no half CA is left of a CA no
/// client was ever given.
fn make_ca(ca_path: &Path, ca_key_path: &Path) -> Result<LocalCa, TlsError> {
    let ca = LocalCa::generate()?;
    let key_temp = files::write_temporary(ca_key_path, ca.key.serialize_pem().as_bytes(), true)?;
    let cert_temp = match files::write_temporary(ca_path, ca.cert_pem.as_bytes(), false) {
        Ok(temp) => temp,
        Err(e) => {
            let _ = std::fs::remove_file(&key_temp);
            return Err(e);
        }
    };
    if let Err(e) = files::put_in_place(&key_temp, ca_key_path) {
        let _ = std::fs::remove_file(&cert_temp);
        return Err(e);
    }
    if let Err(e) = files::put_in_place(&cert_temp, ca_path) {
        let _ = std::fs::remove_file(ca_key_path);
        return Err(e);
    }
    files::sync_dir(ca_path);
    Ok(ca)
}

/// A CA key put in place whose certificate was written but not (the
/// process killed between the two renames): the certificate is put in
/// place, when it is the key's. Anything else is left for
/// [`TlsError::HalfCa`].
fn finish_ca(ca_path: &Path, ca_key_path: &Path) {
    let temp = files::temporary(ca_path);
    if ca_path.exists() || !ca_key_path.exists() {
        return;
    }
    let (Ok(key_text), Ok(cert_pem)) = (
        std::fs::read_to_string(ca_key_path),
        std::fs::read_to_string(&temp),
    ) else {
        return;
    };
    if KeyPair::from_pem(&key_text).is_ok_and(|key| holds_key(&cert_pem, &key)) {
        let _ = files::put_in_place(&temp, ca_path);
        files::sync_dir(ca_path);
    }
}

#[cfg(test)]
mod tests;
