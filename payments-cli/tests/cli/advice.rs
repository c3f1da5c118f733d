//! The advice after a refused certificate's dates (not valid yet: the
//! clock; expired from a CA not given: both the renewal and the CA), the
//! same advice from `tail` as from the payment commands (a proxy, a
//! certificate, the base URL's `user:pass@`), and what `-v` says the
//! product list request sends.

use std::path::{Path, PathBuf};

use payments_mock_server::MockServer;
use payments_mock_server::tls::LocalCa;

use crate::common::{MERCHANT, Sandbox, closed_port_url, run, stderr};

const ADMIN: &str = "adm_advice_3b91c7";
const UNKNOWN: &str = "0193a0b4-0000-7000-8000-000000000000";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/fixtures")
        .join(name)
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).expect("a fixture")
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `payments ARGS`: exit code and stderr.
async fn payments(env: &[(&str, &str)], args: &[&str]) -> (i32, String) {
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.envs(env.iter().copied())
        .args(["--retries", "0", "--timeout", "5"])
        .args(args);
    let assert = run(cmd).await;
    let code = assert.get_output().status.code().expect("an exit code");
    (code, stderr(&assert))
}

/// The TLS handshake failed in OpenSSL's words (a build with every
/// feature): the advice from rustls's reason is not given then.
fn openssl(err: &str) -> bool {
    err.contains("handshake with the service failed: error:")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_certificate_not_valid_yet_says_to_check_the_clock_not_to_trust_a_ca() {
    // Valid from 2099-01-01, for 127.0.0.1, issued by the fixture's CA.
    let server = MockServer::builder()
        .tls_pem(
            text(&fixture("not-yet.pem")),
            text(&fixture("not-yet-key.pem")),
        )
        .start()
        .await
        .expect("starts");
    let ca = fixture("not-yet-ca.pem");
    let base = server.base_url();
    for command in [vec!["status", UNKNOWN], vec!["--api-key", ADMIN, "tail"]] {
        let mut args = vec!["--base-url", base.as_str(), "--ca-cert", path(&ca)];
        args.extend(command);
        let (code, err) = payments(&[], &args).await;
        assert_eq!(code, 4, "{err}");
        if openssl(&err) {
            continue;
        }
        assert!(
            err.contains(
                "; the certificate is not valid before 2099-01-01 00:00:00 UTC: check this \
                 machine's clock"
            ),
            "{err}"
        );
        assert!(!err.contains("--ca-cert"), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_certificate_without_a_ca_given_says_both() {
    let ca = LocalCa::generate().expect("a CA");
    let server = crate::common::https_mock(MockServer::builder(), &ca, &["127.0.0.1"], true).await;
    let (code, err) = payments(&[], &["--base-url", &server.base_url(), "status", UNKNOWN]).await;
    assert_eq!(code, 4, "{err}");
    if !openssl(&err) {
        assert!(
            err.contains(
                "; the certificate expired on 2001-01-01 00:00:00 UTC: renew it; if it is from a \
                 private CA, also trust that CA with --ca-cert FILE"
            ),
            "{err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tail_gives_the_payment_commands_advice() {
    // A dead proxy from the environment.
    let dead = closed_port_url();
    let (code, err) = payments(
        &[("HTTP_PROXY", &dead)],
        &[
            "--base-url",
            "http://mock.example.test:8080",
            "--api-key",
            ADMIN,
            "tail",
        ],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("; is the proxy running? it comes from HTTP_PROXY: unset it"),
        "{err}"
    );
    assert!(!err.contains("is the mock running"), "{err}");

    // A certificate for another host, its CA given.
    let ca = LocalCa::generate().expect("a CA");
    let sandbox = Sandbox::new();
    let trusted = sandbox.write_file("ca.pem", ca.cert_pem());
    let server = crate::common::https_mock(
        MockServer::builder().admin_key(ADMIN),
        &ca,
        &["wrong.example"],
        false,
    )
    .await;
    let (code, err) = payments(
        &[],
        &[
            "--base-url",
            &server.base_url(),
            "--ca-cert",
            path(&trusted),
            "--api-key",
            ADMIN,
            "tail",
        ],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    if !err.contains("error:0A") {
        assert!(
            err.contains("; the certificate names wrong.example, not 127.0.0.1"),
            "{err}"
        );
        assert!(!err.contains("trust its CA"), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tail_with_credentials_in_the_url_says_what_it_sends() {
    let server = MockServer::builder()
        .admin_key(ADMIN)
        .start()
        .await
        .expect("starts");
    let base = server
        .base_url()
        .replace("http://", "http://alice:s3cr3t-pw@");
    let (code, err) = payments(&[], &["-v", "--base-url", &base, "tail"]).await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "/_mock/requests?after=0&limit=100 (authorization: Basic [REDACTED], from the user:pass@ \
             of the service URL)"
        ),
        "{err}"
    );
    assert!(
        err.contains("; check the user:pass@ of the service URL"),
        "{err}"
    );
    assert!(!err.contains("(no API key)"), "{err}");
    assert!(!err.contains("alice") && !err.contains("s3cr3t"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn verbose_says_the_product_list_is_read_without_the_api_key() {
    let server = MockServer::start().await;
    let (code, err) = payments(
        &[],
        &[
            "-v",
            "--base-url",
            &server.base_url(),
            "--api-key",
            "sk_advice_any_key",
            "--merchant-id",
            MERCHANT,
            "initiate",
            "--reference-no",
            "R1",
            "--amount",
            "1",
            "--product",
            "topup",
            "--store-id",
            "S1",
        ],
    )
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("/openapi.json (no authorization: the API key is not sent)"),
        "{err}"
    );
    assert!(
        !err.contains("/openapi.json (authorization: Bearer"),
        "{err}"
    );
}
