//! HTTPS (CONTRACT section 18): `--ca-cert`, `--client-cert` and
//! `--client-key` (and their environment and profile keys) against the
//! mock over real TLS. A status of an unknown id exits 3 when the call got
//! through; a refused handshake exits 4 with rustls's reason and what to
//! give; a certificate file that is missing or not PEM is a usage error.

use payments_mock_server::MockServer;
use payments_mock_server::tls::LocalCa;

use crate::common::{Sandbox, run, stderr};

const UNKNOWN: &str = "0193a0b4-0000-7000-8000-000000000000";

/// `payments status UNKNOWN` against `base` with `args` before it.
async fn status(sandbox: &Sandbox, base: &str, args: &[&str]) -> (i32, String) {
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", base, "--retries", "1"])
        .args(args)
        .args(["status", UNKNOWN]);
    let assert = run(cmd).await;
    let code = assert.get_output().status.code().expect("an exit code");
    let err = stderr(&assert);
    assert!(!err.contains("PRIVATE KEY"), "key material printed: {err}");
    (code, err)
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

const PREFIX: &str = "failed: the TLS handshake with the service failed: ";

/// The binary's reason for a refused handshake: after [`PREFIX`], the TLS
/// library's own words up to the hint (`; `). A default build speaks
/// rustls, whose words are `rustls`; a workspace built with every feature
/// (`--all-features`, so with the payments client's `native-tls`) speaks
/// OpenSSL for a call without a client certificate, whose error
/// (`error:...`) holds every piece of `openssl`. Each library names the
/// cause. (The crate has no TLS feature of its own to tell the two apart
/// by: the client's, which decides, is a dependency's.)
fn assert_tls_reason(err: &str, rustls: &str, openssl: &[&str]) {
    let (_, after) = err
        .split_once(PREFIX)
        .unwrap_or_else(|| panic!("no TLS failure: {err}"));
    let (reason, _hint) = after
        .split_once("; ")
        .unwrap_or_else(|| panic!("no hint: {err}"));
    if reason.starts_with("error:") {
        for piece in openssl {
            assert!(reason.contains(piece), "{piece:?} in: {err}");
        }
    } else {
        assert!(reason.starts_with(rustls), "{rustls:?} in: {err}");
    }
}

/// Writes a client certificate and its key as `<name>.pem` and
/// `<name>-key.pem`; returns their paths.
fn write_client_cert(
    sandbox: &Sandbox,
    name: &str,
    cert_pem: &str,
    key_pem: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let cert = sandbox.write_file(&format!("{name}.pem"), cert_pem);
    let key = sandbox.write_file(&format!("{name}-key.pem"), key_pem);
    (cert, key)
}

/// [`status`] with `--ca-cert <ca> --client-cert <cert> --client-key <key>`.
async fn status_with_client_cert(
    sandbox: &Sandbox,
    base: &str,
    ca: &std::path::Path,
    (cert, key): (&std::path::Path, &std::path::Path),
) -> (i32, String) {
    let args = [
        "--ca-cert",
        path(ca),
        "--client-cert",
        path(cert),
        "--client-key",
        path(key),
    ];
    status(sandbox, base, &args).await
}

#[tokio::test(flavor = "multi_thread")]
async fn ca_cert_from_flag_env_or_profile_trusts_the_mock_and_none_fails_with_exit_4() {
    let server = MockServer::builder()
        .tls_self_signed()
        .start()
        .await
        .expect("starts");
    let sandbox = Sandbox::new();
    let ca = sandbox.write_file("ca.pem", server.ca_pem().expect("a CA"));
    let base = server.base_url();

    let (code, err) = status(&sandbox, &base, &["--ca-cert", path(&ca)]).await;
    assert_eq!(code, 3, "{err}");

    let mut cmd = sandbox.payments();
    cmd.env("PAYMENTS_CA_CERT", &ca)
        .args(["--base-url", &base, "status", UNKNOWN]);
    run(cmd).await.code(3);

    sandbox.write_config(&format!(
        "[profiles.default]\nbase_url = \"{base}\"\nca_cert = \"{}\"\n",
        path(&ca)
    ));
    let mut cmd = sandbox.payments();
    cmd.args(["status", UNKNOWN]);
    run(cmd).await.code(3);

    let (code, err) = status(
        &sandbox,
        &base,
        &["--config", path(&sandbox.path().join("none.toml"))],
    )
    .await;
    assert_eq!(code, 2, "an explicit missing config file: {err}");
    let empty = sandbox.write_file("empty.toml", "");
    let (code, err) = status(&sandbox, &base, &["--config", path(&empty)]).await;
    assert_eq!(code, 4, "{err}");
    assert_tls_reason(
        &err,
        "invalid peer certificate: UnknownIssuer",
        &[
            "certificate verify failed",
            "(unable to get local issuer certificate)",
        ],
    );
    assert!(
        err.contains("; trust the service's CA with --ca-cert FILE"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ca_cert_of_another_ca_or_an_expired_certificate_exits_4() {
    let sandbox = Sandbox::new();
    let empty = sandbox.write_file("empty.toml", "");
    let ca = LocalCa::generate().expect("a CA");
    let other = sandbox.write_file("other.pem", LocalCa::generate().expect("a CA").cert_pem());
    let server = MockServer::builder()
        .tls_self_signed()
        .start()
        .await
        .expect("starts");
    let (code, err) = status(
        &sandbox,
        &server.base_url(),
        &["--config", path(&empty), "--ca-cert", path(&other)],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    assert_tls_reason(
        &err,
        "invalid peer certificate: UnknownIssuer",
        &[
            "certificate verify failed",
            "(unable to get local issuer certificate)",
        ],
    );

    let server = crate::common::https_mock(MockServer::builder(), &ca, &["127.0.0.1"], true).await;
    let trusted = sandbox.write_file("ca.pem", ca.cert_pem());
    let (code, err) = status(
        &sandbox,
        &server.base_url(),
        &["--config", path(&empty), "--ca-cert", path(&trusted)],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    assert_tls_reason(
        &err,
        "invalid peer certificate: certificate expired",
        &["certificate verify failed", "(certificate has expired)"],
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn mutual_tls_needs_the_client_certificate_of_the_servers_client_ca() {
    let clients = LocalCa::generate().expect("a client CA");
    let server = MockServer::builder()
        .tls_self_signed()
        .tls_client_ca(clients.cert_pem())
        .start()
        .await
        .expect("starts");
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let ca = sandbox.write_file("ca.pem", server.ca_pem().expect("a CA"));

    let (code, err) = status(&sandbox, &base, &["--ca-cert", path(&ca)]).await;
    assert_eq!(code, 4, "{err}");
    // TLS 1.3: the service's alert, in answer to the request.
    assert_tls_reason(
        &err,
        "received fatal alert: CertificateRequired",
        &["tlsv13 alert certificate required", "SSL alert number 116"],
    );
    assert!(
        err.contains("the service wants a client certificate it accepts: give --client-cert FILE and --client-key FILE"),
        "{err}"
    );

    let stranger = LocalCa::generate()
        .expect("a CA")
        .client_cert("stranger")
        .expect("a cert");
    let (foreign_cert, foreign_key) =
        write_client_cert(&sandbox, "foreign", &stranger.cert_pem, stranger.key_pem());
    let (code, err) =
        status_with_client_cert(&sandbox, &base, &ca, (&foreign_cert, &foreign_key)).await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("received fatal alert: UnknownCA"), "{err}");

    let mine = clients.client_cert("support").expect("a cert");
    let (cert, key) = write_client_cert(&sandbox, "client", &mine.cert_pem, mine.key_pem());
    let (code, err) = status_with_client_cert(&sandbox, &base, &ca, (&cert, &key)).await;
    assert_eq!(code, 3, "{err}");

    let mut cmd = sandbox.payments();
    cmd.env("PAYMENTS_CA_CERT", &ca)
        .env("PAYMENTS_CLIENT_CERT", &cert)
        .env("PAYMENTS_CLIENT_KEY", &key)
        .args(["--base-url", &base, "status", UNKNOWN]);
    run(cmd).await.code(3);

    // `tail` reads the journal with the same certificate (its own HTTP
    // client: rustls, as the payments client's, whatever else is built in).
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &base, "--ca-cert", path(&ca)])
        .args(["--client-cert", path(&cert), "--client-key", path(&key)])
        .args(["tail", "-o", "json"]);
    let assert = run(cmd).await;
    let out = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let err = stderr(&assert);
    assert_eq!(assert.get_output().status.code(), Some(0), "{err}");
    assert!(
        out.contains(UNKNOWN),
        "the status calls above in the journal: {out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn certificate_files_that_are_missing_or_not_pem_are_usage_errors() {
    let sandbox = Sandbox::new();
    let base = "https://127.0.0.1:9";
    let notes = sandbox.write_file("notes.txt", "hello\n");
    let missing = sandbox.path().join("missing.pem");

    let (code, err) = status(&sandbox, base, &["--ca-cert", path(&missing)]).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("cannot read {}", path(&missing))),
        "{err}"
    );

    let (code, err) = status(&sandbox, base, &["--ca-cert", path(&notes)]).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "--ca-cert {}: not a PEM certificate",
            path(&notes)
        )),
        "{err}"
    );

    let (code, err) = status(&sandbox, base, &["--client-cert", path(&notes)]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--client-cert needs --client-key"), "{err}");

    let (code, err) = status(
        &sandbox,
        base,
        &["--client-cert", path(&notes), "--client-key", path(&notes)],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("not a PEM certificate and its PEM private key"),
        "{err}"
    );

    // A certificate with another one's key: said as that, never blamed on
    // the base URL.
    let ca = LocalCa::generate().expect("a CA");
    let one = ca.client_cert("one").expect("a cert");
    let two = ca.client_cert("two").expect("a cert");
    let cert = sandbox.write_file("one.pem", &one.cert_pem);
    let key = sandbox.write_file("two-key.pem", two.key_pem());
    let (code, err) = status(
        &sandbox,
        base,
        &["--client-cert", path(&cert), "--client-key", path(&key)],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the private key is not the certificate's"),
        "{err}"
    );
    assert!(!err.contains("invalid service URL"), "{err}");

    // A path of 1,000 bytes is repeated 200 at most.
    let long = sandbox
        .path()
        .join("d".repeat(200))
        .join("e".repeat(200))
        .join("f".repeat(200));
    let (code, err) = status(&sandbox, base, &["--ca-cert", path(&long)]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("(the first 200 of "), "{err}");
    assert!(err.len() < 500, "{} bytes: {err}", err.len());
}

/// An X.509 v1 certificate (`openssl x509 -req` without `-extfile`) and
/// its key, made for this test only: PEM that the TLS stack refuses.
const V1_CERT: &str = "-----BEGIN CERTIFICATE-----
MIIBDjCBtAIBATAKBggqhkjOPQQDAjASMRAwDgYDVQQDDAd0ZXN0LWNhMCAXDTI2
MTEzMDAyMzcxMFoYDzIxMjYxMTA2MDIzNzEwWjASMRAwDgYDVQQDDAd2MS10ZXN0
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEDOXKShOK0st+vBzoGpcNdqvM+n6A
+2ikY5pTDC5ix2hhzCnLVt2HO7XmiSejoTeyd7XOPRgbBMfA9HV4U7JOxTAKBggq
hkjOPQQDAgNJADBGAiEA8BkVC9/xfxFsKTG0pWuUPJImuD6dR8HMO3O7/92psMUC
IQC0j2FRnk8chd06SGatnb6qy2FUb3R3b0chD7YwQQpQqA==
-----END CERTIFICATE-----
";
const V1_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgLv/tsxGbHlSs/YRp
V4Br3HGcYPaLk7EerutxQgCxDzGhRANCAAQM5cpKE4rSy368HOgalw12q8z6foD7
aKRjmlMMLmLHaGHMKctW3Yc7teaJJ6OhN7J3tc49GBsEx8D0dXhTsk7F
-----END PRIVATE KEY-----
";

/// A client certificate the TLS stack refuses was reported as `invalid
/// service URL https://…: … UnsupportedCertVersion`, naming neither file.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_certificate_tls_refuses_is_named_with_its_flag() {
    let sandbox = Sandbox::new();
    let cert = sandbox.write_file("v1.pem", V1_CERT);
    let key = sandbox.write_file("v1-key.pem", V1_KEY);
    let (code, err) = status(
        &sandbox,
        "https://127.0.0.1:9",
        &["--client-cert", path(&cert), "--client-key", path(&key)],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "the client certificate {} (--client-cert or PAYMENTS_CLIENT_CERT) with the key {} (--client-key or PAYMENTS_CLIENT_KEY) cannot be used",
            path(&cert),
            path(&key)
        )),
        "{err}"
    );
    assert!(
        err.contains("X.509 v1 certificate, and TLS takes v3 only (`openssl x509 -req`"),
        "{err}"
    );
    assert!(!err.contains("invalid service URL"), "{err}");
}

/// Issue 40: `ca_cert = "ca.pem"` in a profile (as the docs show) was read
/// from the working directory. Relative paths in a profile are read beside
/// the config file, from any working directory; a file that is not there
/// is named with its profile and key.
#[tokio::test(flavor = "multi_thread")]
async fn relative_paths_in_a_profile_are_read_beside_the_config_file() {
    let server = MockServer::builder()
        .tls_self_signed()
        .start()
        .await
        .expect("starts");
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let config = sandbox.write_config(&format!(
        "[profiles.staging]\nbase_url = \"{base}\"\nca_cert = \"ca.pem\"\n"
    ));
    let dir = config.parent().expect("the config's directory");
    std::fs::write(dir.join("ca.pem"), server.ca_pem().expect("a CA")).expect("written");
    let elsewhere = tempfile::tempdir().expect("a directory");
    let mut cmd = sandbox.payments();
    cmd.current_dir(elsewhere.path())
        .args(["--profile", "staging", "status", UNKNOWN]);
    run(cmd).await.code(3);

    // --config in another directory: beside that file.
    let other = sandbox.path().join("other");
    std::fs::create_dir_all(other.join("certs")).expect("made");
    std::fs::write(other.join("certs/ca.pem"), server.ca_pem().expect("a CA")).expect("written");
    let other_config = other.join("payments.toml");
    std::fs::write(
        &other_config,
        format!("[profiles.default]\nbase_url = \"{base}\"\nca_cert = \"certs/ca.pem\"\nclient_cert = \"certs/none.pem\"\nclient_key = \"certs/none-key.pem\"\n"),
    )
    .expect("written");
    let mut cmd = sandbox.payments();
    cmd.current_dir(elsewhere.path())
        .arg("--config")
        .arg(&other_config)
        .args(["status", UNKNOWN]);
    let assert = run(cmd).await.code(2);
    let err = stderr(&assert);
    assert_eq!(
        err.trim_end(),
        format!(
            "error: cannot read {} (client_cert of profile 'default' in {}): No such file or directory (os error 2)",
            other.join("certs/none.pem").display(),
            other_config.display()
        ),
        "{err}"
    );

    // A flag's relative path is the working directory's, as any flag's.
    let mut cmd = sandbox.payments();
    cmd.current_dir(elsewhere.path()).args([
        "--profile",
        "staging",
        "--ca-cert",
        "ca.pem",
        "status",
        UNKNOWN,
    ]);
    let assert = run(cmd).await.code(2);
    let err = stderr(&assert);
    assert!(
        err.contains("cannot read ca.pem (--ca-cert or PAYMENTS_CA_CERT): No such file"),
        "{err}"
    );
}
