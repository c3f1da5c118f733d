//! HTTPS (CONTRACT section 18): the binary's --tls-* flags as processes
//! (a generated local CA kept and reused, mutual TLS, bad input named
//! without key material, exit 2), and the embedded server's TLS.

use std::process::{Command, Stdio};

use payments_mock_server::MockServer;
use payments_mock_server::tls::LocalCa;

use crate::common::{spawn_with_banner, terminate_expecting_success};

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");

fn mock(args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(["--port", "0"])
        .args(args)
        .env_remove("PAYMENTS_MOCK_STORE")
        .env_remove("PAYMENTS_MOCK_ADMIN_KEY")
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// A client that trusts `ca_pem` only (no built-in roots), and presents
/// `identity` when given. rustls, named: the test's reqwest asks for
/// `rustls-tls`, whose PEM identity this is, but a workspace build with
/// every feature (`--all-features`: the payments client's `native-tls`)
/// also turns on reqwest's `native-tls`, which reqwest would take, and
/// which refuses this identity ("incompatible TLS identity type").
fn https_client(ca_pem: &[u8], identity: Option<String>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca_pem).expect("a CA"));
    if let Some(identity) = identity {
        builder = builder
            .identity(reqwest::Identity::from_pem(identity.as_bytes()).expect("an identity"));
    }
    builder.build().expect("a client")
}

/// Runs the binary to its end (it refuses to start): exit code, stderr.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let output = mock(args).stdout(Stdio::piped()).output().expect("runs");
    assert!(output.stdout.is_empty(), "no banner expected");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        !stderr.contains("PRIVATE KEY"),
        "key material printed: {stderr}"
    );
    (output.status.code(), stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn self_signed_serves_https_and_reuses_its_ca_at_the_next_start() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ca_dir = dir.path().join("tls");
    let ca_dir_text = ca_dir.to_str().expect("UTF-8 path");

    let (child, base) = spawn_with_banner(&mut mock(&["--tls-self-signed", ca_dir_text]));
    assert!(base.starts_with("https://127.0.0.1:"), "{base}");
    let ca = std::fs::read(ca_dir.join("ca.pem")).expect("ca.pem written");
    let health = https_client(&ca, None)
        .get(format!("{base}/_mock/health"))
        .send()
        .await
        .expect("a trusting client gets an answer");
    assert_eq!(health.status(), 200);
    // Payment pages are announced under https by default.
    let body: serde_json::Value = health.json().await.expect("JSON");
    assert_eq!(body["isSuccess"], true);
    #[cfg(unix)]
    for key in ["ca-key.pem", "server-key.pem"] {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(ca_dir.join(key))
            .expect("a key")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{key}");
    }
    let stderr = terminate_expecting_success(child);
    assert!(
        stderr.contains("local CA made in") && stderr.contains(&format!("{ca_dir_text}/ca.pem")),
        "{stderr}"
    );
    let first_cert = std::fs::read(ca_dir.join("server.pem")).expect("server.pem");

    // Next start: the same CA; a new --public-url host gets a new server
    // certificate from it, which a client trusting the first ca.pem accepts.
    let (child, base) = spawn_with_banner(&mut mock(&[
        "--tls-self-signed",
        ca_dir_text,
        "--public-url",
        "https://sandbox.internal:8443/",
    ]));
    assert_eq!(std::fs::read(ca_dir.join("ca.pem")).expect("ca.pem"), ca);
    assert_ne!(
        std::fs::read(ca_dir.join("server.pem")).expect("server.pem"),
        first_cert
    );
    let names = std::fs::read_to_string(ca_dir.join("server.names")).expect("names");
    assert!(names.lines().any(|n| n == "sandbox.internal"), "{names}");
    let health = https_client(&ca, None)
        .get(format!("{base}/_mock/health"))
        .send()
        .await
        .expect("the kept CA is still trusted");
    assert_eq!(health.status(), 200);
    let stderr = terminate_expecting_success(child);
    assert!(stderr.contains("local CA reused in"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_server_certificate_that_no_longer_holds_is_issued_again() {
    // An expired certificate of another CA in the kept directory (the
    // same CA's expired or soon-expiring one is a unit test of
    // payments-serve's local_ca): the binary issues a new one from the
    // kept CA, says so, and a client trusting that CA is answered.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ca_dir = dir.path().join("tls");
    let ca_dir_text = ca_dir.to_str().expect("UTF-8");
    let (child, _) = spawn_with_banner(&mut mock(&["--tls-self-signed", ca_dir_text]));
    terminate_expecting_success(child);
    let ca = std::fs::read(ca_dir.join("ca.pem")).expect("ca.pem");
    let stale = LocalCa::generate()
        .expect("another CA")
        .expired_server_cert(&["localhost".to_owned(), "127.0.0.1".to_owned()])
        .expect("issued");
    std::fs::write(ca_dir.join("server.pem"), &stale.cert_pem).expect("written");
    std::fs::write(ca_dir.join("server-key.pem"), stale.key_pem()).expect("written");

    let (child, base) = spawn_with_banner(&mut mock(&["--tls-self-signed", ca_dir_text]));
    let health = https_client(&ca, None)
        .get(format!("{base}/_mock/health"))
        .send()
        .await
        .expect("the renewed certificate chains to the kept CA");
    assert_eq!(health.status(), 200);
    assert_eq!(std::fs::read(ca_dir.join("ca.pem")).expect("kept"), ca);
    let stderr = terminate_expecting_success(child);
    assert!(
        stderr.contains("local CA reused in") && stderr.contains("server certificate issued again"),
        "{stderr}"
    );
    assert!(!stderr.contains("PRIVATE KEY"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_ca_makes_the_binary_refuse_clients_without_its_certificate() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let clients = LocalCa::generate().expect("a client CA");
    let client_ca = dir.path().join("clients.pem");
    std::fs::write(&client_ca, clients.cert_pem()).expect("written");
    let ca_dir = dir.path().join("tls");
    let (child, base) = spawn_with_banner(&mut mock(&[
        "--tls-self-signed",
        ca_dir.to_str().expect("UTF-8"),
        "--tls-client-ca",
        client_ca.to_str().expect("UTF-8"),
    ]));
    let ca = std::fs::read(ca_dir.join("ca.pem")).expect("ca.pem");
    let url = format!("{base}/_mock/health");

    let without = https_client(&ca, None).get(&url).send().await;
    assert!(
        without.is_err(),
        "no client certificate, no answer: {without:?}"
    );

    let stranger = LocalCa::generate()
        .expect("another CA")
        .client_cert("stranger")
        .expect("a cert");
    let other = https_client(&ca, Some(stranger.identity_pem()))
        .get(&url)
        .send()
        .await;
    assert!(
        other.is_err(),
        "a certificate of another CA, no answer: {other:?}"
    );

    let mine = clients.client_cert("team").expect("a cert");
    let answered = https_client(&ca, Some(mine.identity_pem()))
        .get(&url)
        .send()
        .await
        .expect("the right certificate is answered");
    assert_eq!(answered.status(), 200);
    terminate_expecting_success(child);
}

#[test]
fn bad_tls_input_is_named_without_key_material_and_exits_2() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ca = LocalCa::generate().expect("a CA");
    let server = ca.server_cert(&["localhost".to_owned()]).expect("a cert");
    let other = ca
        .server_cert(&["localhost".to_owned()])
        .expect("another cert");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("written");
        path.to_str().expect("UTF-8").to_owned()
    };
    let cert = write("server.pem", &server.cert_pem);
    let key = write("server-key.pem", server.key_pem());
    let other_key = write("other-key.pem", other.key_pem());
    let not_pem = write("notes.txt", "hello\n");
    let missing = dir
        .path()
        .join("missing.pem")
        .to_str()
        .expect("UTF-8")
        .to_owned();

    let cases: [(&[&str], &str); 6] = [
        (&["--tls-cert", &missing, "--tls-key", &key], "cannot read"),
        (
            &["--tls-cert", &not_pem, "--tls-key", &key],
            "not PEM certificates",
        ),
        (
            &["--tls-cert", &cert, "--tls-key", &not_pem],
            "not a PEM private key",
        ),
        (
            &["--tls-cert", &cert, "--tls-key", &other_key],
            "does not match the certificate",
        ),
        (&["--tls-cert", &cert], "--tls-key"),
        (
            &[
                "--tls-cert",
                &cert,
                "--tls-key",
                &key,
                "--tls-self-signed",
                "x",
            ],
            "cannot be used with",
        ),
    ];
    for (args, expected) in cases {
        let (code, stderr) = refused(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    // Each message names the file at fault.
    assert!(
        refused(&["--tls-cert", &missing, "--tls-key", &key])
            .1
            .contains(&missing)
    );
    assert!(
        refused(&["--tls-cert", &not_pem, "--tls-key", &key])
            .1
            .contains(&not_pem)
    );
    assert!(
        refused(&["--tls-cert", &cert, "--tls-key", &other_key])
            .1
            .contains(&other_key)
    );

    // A directory that cannot be made: under a regular file.
    let blocked = format!("{not_pem}/tls");
    let (code, stderr) = refused(&["--tls-self-signed", &blocked]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot write") && stderr.contains(&blocked),
        "{stderr}"
    );

    let (code, stderr) = refused(&["--tls-client-ca", &cert]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--tls-client-ca needs"), "{stderr}");
}

#[tokio::test]
async fn the_embedded_server_hands_tests_its_ca_and_an_https_base_url() {
    let server = MockServer::builder()
        .tls_self_signed()
        .start()
        .await
        .expect("starts");
    assert!(server.base_url().starts_with("https://127.0.0.1:"));
    let ca = server.ca_pem().expect("a CA to trust").as_bytes().to_vec();
    let url = format!("{}/_mock/health", server.base_url());
    let answered = https_client(&ca, None)
        .get(&url)
        .send()
        .await
        .expect("answered");
    assert_eq!(answered.status(), 200);
    // Plain HTTP on the same port gets no HTTP answer: a TLS alert, then the
    // connection closes (curl: "Received HTTP/0.9 when not allowed").
    let plain = reqwest::get(url.replacen("https://", "http://", 1)).await;
    assert!(plain.is_err(), "{plain:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn the_embedded_server_with_a_client_ca_answers_only_its_certificates() {
    let clients = LocalCa::generate().expect("a client CA");
    let server = MockServer::builder()
        .tls_self_signed()
        .tls_client_ca(clients.cert_pem())
        .start()
        .await
        .expect("starts");
    let ca = server.ca_pem().expect("a CA").as_bytes().to_vec();
    let url = format!("{}/_mock/health", server.base_url());
    assert!(https_client(&ca, None).get(&url).send().await.is_err());
    let mine = clients.client_cert("test").expect("a cert").identity_pem();
    let answered = https_client(&ca, Some(mine))
        .get(&url)
        .send()
        .await
        .expect("answered");
    assert_eq!(answered.status(), 200);
}

#[tokio::test]
async fn a_given_certificate_that_is_not_pem_fails_the_start() {
    let error = MockServer::builder()
        .tls_pem("not a certificate", "not a key")
        .start()
        .await
        .expect_err("refused");
    let text = error.to_string();
    assert!(text.contains("the embedded server's certificate"), "{text}");
    assert_eq!(error.exit_code(), 2);
}
