//! The local CA's tests: kept, reused, issued again, refused.

use super::*;

fn names() -> Vec<String> {
    ["localhost", "127.0.0.1"].map(str::to_owned).into()
}

/// A kept directory whose server certificate is replaced by `issued`.
fn with_server_cert(dir: &Path, issued: &Issued) {
    std::fs::write(dir.join("server.pem"), &issued.cert_pem).expect("written");
    std::fs::write(dir.join("server-key.pem"), issued.key_pem()).expect("written");
}

fn kept_ca(dir: &Path) -> LocalCa {
    let key = std::fs::read_to_string(dir.join("ca-key.pem")).expect("the CA key");
    LocalCa {
        key: KeyPair::from_pem(&key).expect("a key"),
        cert_pem: std::fs::read_to_string(dir.join("ca.pem")).expect("the CA"),
    }
}

#[test]
fn a_kept_certificate_is_reused_while_it_lasts() {
    let dir = tempfile::tempdir().expect("a directory");
    let first = self_signed_dir(dir.path(), &names()).expect("made");
    assert!(first.new_ca && first.new_cert);
    let cert = std::fs::read_to_string(&first.cert).expect("the certificate");
    let ca = std::fs::read_to_string(&first.ca).expect("the CA");
    assert!(lasts(&ca, &cert, &names()));
    let again = self_signed_dir(dir.path(), &names()).expect("reused");
    assert!(!again.new_ca && !again.new_cert);
    assert_eq!(std::fs::read_to_string(&again.cert).expect("kept"), cert);
}

#[test]
fn an_expired_or_soon_expiring_certificate_is_issued_again_by_the_same_ca() {
    let dir = tempfile::tempdir().expect("a directory");
    let first = self_signed_dir(dir.path(), &names()).expect("made");
    let ca_pem = std::fs::read_to_string(&first.ca).expect("the CA");
    let ca = kept_ca(dir.path());

    with_server_cert(
        dir.path(),
        &ca.expired_server_cert(&names()).expect("issued"),
    );
    let renewed = self_signed_dir(dir.path(), &names()).expect("renewed");
    assert!(renewed.new_cert && !renewed.new_ca, "{renewed:?}");
    let cert = std::fs::read_to_string(&renewed.cert).expect("the certificate");
    assert!(lasts(&ca_pem, &cert, &names()));
    assert_eq!(std::fs::read_to_string(&renewed.ca).expect("kept"), ca_pem);

    // Ten days left: within RENEW_BEFORE, so issued again; 60 days
    // left: kept.
    for (days, renew) in [(10, true), (60, false)] {
        let mut params = leaf_params(&names(), "soon").expect("params");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.not_after =
            (std::time::SystemTime::now() + std::time::Duration::from_secs(days * 86_400)).into();
        with_server_cert(dir.path(), &ca.issue(&params).expect("issued"));
        let files = self_signed_dir(dir.path(), &names()).expect("checked");
        assert_eq!(files.new_cert, renew, "{days} days left");
    }
}

#[test]
fn a_certificate_of_another_ca_or_not_a_certificate_is_replaced() {
    let dir = tempfile::tempdir().expect("a directory");
    let first = self_signed_dir(dir.path(), &names()).expect("made");
    let other = LocalCa::generate().expect("another CA");
    with_server_cert(dir.path(), &other.server_cert(&names()).expect("issued"));
    assert!(
        self_signed_dir(dir.path(), &names())
            .expect("replaced")
            .new_cert
    );
    std::fs::write(&first.cert, "not a certificate").expect("written");
    assert!(
        self_signed_dir(dir.path(), &names())
            .expect("replaced")
            .new_cert
    );
    std::fs::remove_file(&first.cert).expect("removed");
    assert!(
        self_signed_dir(dir.path(), &names())
            .expect("replaced")
            .new_cert
    );
    let ca = std::fs::read_to_string(&first.ca).expect("the CA");
    let cert = std::fs::read_to_string(&first.cert).expect("the certificate");
    assert!(lasts(&ca, &cert, &names()));
    assert!(!lasts(&ca, &cert, &["elsewhere.example".to_owned()]));
    assert!(!lasts(&ca, &cert, &[]));
}

/// A kept `ca.pem` that is not a certificate, or the certificate of
/// another CA, stops the start naming the file: it would be announced
/// to clients to trust while every server certificate is the key's.
#[test]
fn a_kept_ca_certificate_that_is_not_the_keys_stops_the_start() {
    let dir = tempfile::tempdir().expect("a directory");
    let first = self_signed_dir(dir.path(), &names()).expect("made");
    let kept = std::fs::read_to_string(&first.ca).expect("the CA");
    std::fs::write(&first.ca, "garbage\n").expect("written");
    let err = self_signed_dir(dir.path(), &names()).expect_err("garbage");
    assert!(matches!(err, TlsError::NotPem { .. }), "{err}");
    assert!(err.to_string().contains("ca.pem"), "{err}");
    let other = LocalCa::generate().expect("another CA");
    std::fs::write(&first.ca, &other.cert_pem).expect("written");
    let err = self_signed_dir(dir.path(), &names()).expect_err("foreign");
    assert!(matches!(err, TlsError::KeyMismatch { .. }), "{err}");
    std::fs::write(&first.ca, kept).expect("written");
    let again = self_signed_dir(dir.path(), &names()).expect("its own again");
    assert!(!again.new_ca);
}

/// One half of the CA alone stops the start naming both files, and
/// changes nothing: the `ca.pem` clients were given, or the CA's key, is
/// never replaced by a new CA's.
#[test]
fn one_half_of_a_kept_ca_stops_the_start_unchanged() {
    for missing in ["ca-key.pem", "ca.pem"] {
        let dir = tempfile::tempdir().expect("a directory");
        let first = self_signed_dir(dir.path(), &names()).expect("made");
        let there = if missing == "ca.pem" {
            dir.path().join("ca-key.pem")
        } else {
            first.ca.clone()
        };
        let kept = std::fs::read(&there).expect("kept");
        std::fs::remove_file(dir.path().join(missing)).expect("removed");
        let err = self_signed_dir(dir.path(), &names()).expect_err("half a CA");
        assert!(matches!(err, TlsError::HalfCa { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains(missing) && text.contains("delete both"),
            "{text}"
        );
        assert_eq!(std::fs::read(&there).expect("kept"), kept, "{missing}");
        assert!(!dir.path().join(missing).exists(), "{missing}");
    }
}

/// A server certificate lasts two years from the day it is issued, and
/// the CA ten years from the day it is made (not to 1 January of a later
/// year: made on 30 November, that was a year and a month).
#[test]
fn certificates_last_two_and_ten_years_from_now() {
    let day = std::time::Duration::from_secs(86_400);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970");
    let ca = LocalCa::generate().expect("a CA");
    let server = ca.server_cert(&names()).expect("issued");
    assert!(holds_at(
        &ca.cert_pem,
        &server.cert_pem,
        &names(),
        now + day * 729
    ));
    assert!(!holds_at(
        &ca.cert_pem,
        &server.cert_pem,
        &names(),
        now + day * 731
    ));
    // webpki never checks a trust anchor's dates: read the CA's.
    let today = i64::try_from(now.as_secs() / 86_400).expect("days");
    let ends = ends_on_day(&ca.cert_pem) - today;
    assert!(
        (3_651..=3_653).contains(&ends),
        "the CA ends in {ends} days"
    );
    let ends = ends_on_day(&server.cert_pem) - today;
    assert!(
        (729..=731).contains(&ends),
        "the server's ends in {ends} days"
    );
}

/// The day (since 1970) a certificate ends: its second time (`notAfter`),
/// a UTCTime (`YYMMDDhhmmssZ`) or from 2050 a GeneralizedTime.
fn ends_on_day(pem: &str) -> i64 {
    use rustls_pki_types::pem::PemObject as _;
    let der = rustls_pki_types::CertificateDer::from_pem_slice(pem.as_bytes()).expect("PEM");
    let number = |d: &[u8]| {
        std::str::from_utf8(d)
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
    };
    let times: Vec<(i64, i64, i64)> = der
        .windows(17)
        .filter_map(|w| {
            let (len, year) = match w[..2] {
                [0x17, 13] => (13, number(&w[2..4]).map(|y| 2000 + y)?),
                [0x18, 15] => (15, number(&w[2..6])?),
                _ => return None,
            };
            let text = &w[2..2 + len];
            let at = len - 11;
            (text[len - 1] == b'Z').then_some(())?;
            Some((
                year,
                number(&text[at..at + 2])?,
                number(&text[at + 2..at + 4])?,
            ))
        })
        .collect();
    let (y, m, d) = times[1];
    // Days from the civil date (H. Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// What a directory holds besides the five files: a lock or a temporary
/// file left behind.
fn leftovers(dir: &Path) -> Vec<String> {
    let kept = [
        "ca.pem",
        "ca-key.pem",
        "server.pem",
        "server-key.pem",
        "server.names",
    ];
    std::fs::read_dir(dir)
        .expect("listed")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| !kept.contains(&name.as_str()))
        .collect()
}

/// Processes starting at once on a new directory (threads here: the lock
/// is a file, the same for both) make one CA: each serves a certificate
/// of the `ca.pem` left in the directory, with its own key, and no lock
/// or temporary file is left.
#[test]
fn starts_at_once_on_a_new_directory_make_one_ca() {
    const STARTS: usize = 8;
    let dir = tempfile::tempdir().expect("a directory");
    let tls = dir.path().join("tls");
    let barrier = std::sync::Barrier::new(STARTS);
    let made: Vec<SelfSignedFiles> = std::thread::scope(|scope| {
        let starts: Vec<_> = (0..STARTS)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    self_signed_dir(&tls, &names()).expect("made or reused")
                })
            })
            .collect();
        starts
            .into_iter()
            .map(|start| start.join().expect("no panic"))
            .collect()
    });
    assert_eq!(made.iter().filter(|files| files.new_ca).count(), 1);
    let ca = std::fs::read_to_string(tls.join("ca.pem")).expect("the CA");
    for files in &made {
        let served = files.server();
        assert!(lasts(&ca, &served.cert_pem, &names()), "{files:?}");
        let key = KeyPair::from_pem(served.key_pem()).expect("a key");
        assert!(holds_key(&served.cert_pem, &key));
    }
    assert_eq!(leftovers(&tls), Vec::<String>::new());
    #[cfg(unix)]
    for key in ["ca-key.pem", "server-key.pem"] {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(tls.join(key))
            .expect("there")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{key}");
    }
}

/// A lock left by a process killed while it made the files is taken over
/// once old; a temporary file left so is removed.
#[test]
fn a_stale_lock_and_temporary_files_are_taken_over() {
    let dir = tempfile::tempdir().expect("a directory");
    let lock = std::fs::File::create(dir.path().join(".lock")).expect("a lock");
    lock.set_modified(std::time::SystemTime::now() - files::STALE_AFTER * 2)
        .expect("aged");
    std::fs::write(dir.path().join(".server-key.pem.tmp"), "half a key").expect("written");
    let made = self_signed_dir(dir.path(), &names()).expect("made");
    assert!(made.new_ca);
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

/// A new CA's key put in place and its certificate, written, not (the
/// process killed between the two renames): the next start puts the
/// certificate in place instead of refusing half a CA.
#[test]
fn a_ca_key_whose_written_certificate_was_not_put_in_place_gets_it() {
    let dir = tempfile::tempdir().expect("a directory");
    let first = self_signed_dir(dir.path(), &names()).expect("made");
    let ca = std::fs::read_to_string(&first.ca).expect("the CA");
    std::fs::rename(&first.ca, files::temporary(&first.ca)).expect("moved");
    let again = self_signed_dir(dir.path(), &names()).expect("finished");
    assert!(!again.new_ca && !again.new_cert, "{again:?}");
    assert_eq!(std::fs::read_to_string(&again.ca).expect("in place"), ca);
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

/// A server key that is not the certificate's (a renewal whose second
/// write failed) is issued again, not served.
#[test]
fn a_server_key_of_another_certificate_is_issued_again() {
    let dir = tempfile::tempdir().expect("a directory");
    let first = self_signed_dir(dir.path(), &names()).expect("made");
    let other = kept_ca(dir.path()).server_cert(&names()).expect("issued");
    std::fs::write(&first.key, other.key_pem()).expect("written");
    let again = self_signed_dir(dir.path(), &names()).expect("issued again");
    assert!(again.new_cert && !again.new_ca, "{again:?}");
    let key = KeyPair::from_pem(again.server().key_pem()).expect("a key");
    assert!(holds_key(&again.server().cert_pem, &key));
}

/// A file that cannot be written leaves the one there as it was, and no
/// temporary file (here its temporary path is taken by a directory).
#[test]
fn a_write_that_fails_leaves_the_file_as_it_was() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("server-key.pem");
    std::fs::write(&path, "the old key").expect("written");
    std::fs::create_dir(files::temporary(&path)).expect("in the way");
    std::fs::write(files::temporary(&path).join("x"), "").expect("written");
    let err = files::write_whole(&path, b"the new key", true).expect_err("cannot");
    assert!(err.to_string().contains("server-key.pem"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).expect("kept"), "the old key");
}

/// What `dir` holds: each file's name and bytes, sorted.
fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("listed")
        .map(|entry| {
            let entry = entry.expect("an entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(entry.path()).unwrap_or_default())
        })
        .collect();
    files.sort();
    files
}

/// [`self_signed_dir`] where the lock file cannot be made, the system
/// saying `errno` (30 EROFS, 13 EACCES, 1 EPERM, 28 ENOSPC): a file
/// system that refuses, as a read-only mount or another user's directory
/// does (`tests/containers.rs` of the mock runs the binary so, as
/// another user).
fn refused(dir: &Path, names: &[String], errno: i32) -> Result<SelfSignedFiles, TlsError> {
    self_signed_dir_with(dir, names, |dir| {
        files::DirLock::take_with(dir, |_| Err(std::io::Error::from_raw_os_error(errno)))
    })
}

#[test]
fn a_directory_that_cannot_be_written_serves_its_complete_files_as_they_are() {
    let dir = tempfile::tempdir().expect("a directory");
    let first = self_signed_dir(dir.path(), &names()).expect("made");
    let before = listing(dir.path());
    for errno in [30, 13, 1] {
        let kept = refused(dir.path(), &names(), errno).expect("served read-only");
        assert!(!kept.new_ca && !kept.new_cert, "{errno}: {kept:?}");
        assert_eq!(kept.server().cert_pem, first.server().cert_pem);
        assert_eq!(kept.server().key_pem(), first.server().key_pem());
        // A name the certificate holds already: still nothing to write.
        let fewer = refused(dir.path(), &names()[..1], errno).expect("served");
        assert!(!fewer.new_cert);
        assert_eq!(listing(dir.path()), before, "{errno}: nothing written");
    }
    // Any other failure to make the lock is a failure to write, as before.
    let full = refused(dir.path(), &names(), 28).expect_err("a full disk");
    assert!(matches!(full, TlsError::Write { .. }), "{full}");
}

#[test]
fn a_directory_that_cannot_be_written_says_what_it_lacks() {
    let empty = tempfile::tempdir().expect("a directory");
    let text = refused(empty.path(), &names(), 30)
        .expect_err("no CA to read")
        .to_string();
    assert!(
        text.contains("cannot be written (Read-only file system")
            && text.contains("it holds no local CA (ca.pem and ca-key.pem)"),
        "{text}"
    );
    assert_eq!(listing(empty.path()), Vec::new(), "nothing made");

    let dir = tempfile::tempdir().expect("a directory");
    self_signed_dir(dir.path(), &names()).expect("made");
    let before = listing(dir.path());
    let mut more = names();
    more.push("mock.internal".to_owned());
    let text = refused(dir.path(), &more, 13)
        .expect_err("a name it lacks")
        .to_string();
    assert!(
        text.contains("cannot be written (Permission denied")
            && text.contains("server certificate would have to be issued again")
            && text.contains("not for mock.internal"),
        "{text}"
    );
    let ca = kept_ca(dir.path());
    with_server_cert(
        dir.path(),
        &ca.expired_server_cert(&names()).expect("issued"),
    );
    let expired = listing(dir.path());
    let text = refused(dir.path(), &names(), 30)
        .expect_err("expired")
        .to_string();
    assert!(text.contains("ends within 30 days"), "{text}");
    std::fs::remove_file(dir.path().join("server-key.pem")).expect("removed");
    let text = refused(dir.path(), &names(), 30)
        .expect_err("no key")
        .to_string();
    assert!(
        text.contains("cannot read") && text.contains("server-key.pem"),
        "{text}"
    );
    assert_ne!(expired, before);
    assert!(
        !listing(dir.path()).iter().any(|(name, _)| name == ".lock"),
        "no lock left"
    );
}
