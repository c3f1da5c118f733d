//! The network around the service: the environment's proxy (never for a
//! loopback service, named when it cannot be reached), connect failures
//! told apart (a name that does not resolve, plain HTTP on an https URL),
//! certificates for another host or expired, and what `-v` shows of the
//! URL requested and the credentials sent.

use std::net::TcpListener;

use payments_mock_server::MockServer;
use payments_mock_server::tls::LocalCa;

use crate::common::{MERCHANT, Sandbox, closed_port_url, run, stderr};

const ADMIN: &str = "adm_network_5c2e81";
const UNKNOWN: &str = "0193a0b4-0000-7000-8000-000000000000";

/// A listener that stands for a logging proxy: it never answers, and
/// [`nothing_came`] tells whether any connection reached it.
pub(crate) fn proxy_listener() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("loopback");
    listener.set_nonblocking(true).expect("non-blocking");
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    (listener, url)
}

fn nothing_came(listener: &TcpListener) -> bool {
    matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

#[tokio::test(flavor = "multi_thread")]
async fn tail_never_sends_a_loopback_services_requests_through_the_environment_proxy() {
    let server = MockServer::builder()
        .admin_key(ADMIN)
        .start()
        .await
        .expect("starts");
    let (proxy, proxy_url) = proxy_listener();
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    for variable in ["HTTP_PROXY", "http_proxy", "ALL_PROXY"] {
        cmd.env(variable, &proxy_url);
    }
    cmd.args(["--base-url", &server.base_url(), "--api-key", ADMIN])
        .args(["--timeout", "5", "-o", "json", "tail"]);
    let assert = run(cmd).await;
    let err = stderr(&assert);
    assert_eq!(assert.get_output().status.code(), Some(0), "{err}");
    assert!(nothing_came(&proxy), "tail went through the proxy: {err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn initiates_product_advice_reads_an_https_services_products_with_its_ca_and_no_proxy() {
    let server = MockServer::builder()
        .tls_self_signed()
        .start()
        .await
        .expect("starts");
    let sandbox = Sandbox::new();
    let ca = sandbox.write_file("ca.pem", server.ca_pem().expect("a CA"));
    let (proxy, proxy_url) = proxy_listener();
    let mut cmd = sandbox.payments();
    cmd.env("HTTPS_PROXY", &proxy_url)
        .args(["--base-url", &server.base_url(), "--ca-cert", path(&ca)])
        .args(["--merchant-id", MERCHANT, "--timeout", "5"])
        .args(["initiate", "--reference-no", "R1", "--amount", "1"])
        .args(["--product", "topup", "--store-id", "S1"]);
    let assert = run(cmd).await.code(1);
    let err = stderr(&assert);
    assert!(err.contains("did you mean TOPUP?"), "{err}");
    assert!(!err.contains("does not publish"), "{err}");
    assert!(
        nothing_came(&proxy),
        "the product list went through the proxy"
    );
}

/// `payments status UNKNOWN` against `base`, with `env` and `args`; the
/// exit code and stderr.
async fn status(base: &str, env: &[(&str, &str)], args: &[&str]) -> (i32, String) {
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.envs(env.iter().copied())
        .args(["--base-url", base, "--retries", "0", "--timeout", "5"])
        .args(args)
        .args(["status", UNKNOWN]);
    let assert = run(cmd).await;
    let code = assert.get_output().status.code().expect("an exit code");
    (code, stderr(&assert))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_environment_proxy_is_named_with_its_variable_and_never_its_password() {
    let dead = closed_port_url().replace("http://", "http://proxyuser:proxy-secret@");
    let shown = closed_port_url();
    let (code, err) = status(
        "http://mock.example.test:8080",
        &[("HTTP_PROXY", dead.as_str())],
        &[],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    let port = dead.rsplit(':').next().unwrap();
    assert!(
        err.contains(&format!(
            "failed: could not connect to the proxy http://127.0.0.1:{port} (from HTTP_PROXY); \
             is the proxy running? it comes from HTTP_PROXY: unset it, or list the service's \
             host in NO_PROXY"
        )),
        "{err}"
    );
    assert!(
        !err.contains("proxy-secret") && !err.contains("proxyuser"),
        "{err}"
    );
    assert!(!err.contains("is the service running"), "{err}");
    // NO_PROXY lists the host: no proxy, and the service is blamed.
    let (code, err) = status(
        &shown,
        &[
            ("HTTP_PROXY", "http://127.0.0.1:9"),
            ("NO_PROXY", "127.0.0.1"),
        ],
        &[],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("is the service running at"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_name_that_does_not_resolve_is_said() {
    let (code, err) = status("http://pay.example.invalid", &[], &[]).await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains(
            "failed: could not connect to the service: the host name could not be resolved; \
             check the host name of http://pay.example.invalid"
        ),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn https_to_a_plain_http_port_says_to_use_http() {
    let server = MockServer::start().await;
    let plain = server.base_url();
    let https = plain.replace("http://", "https://");
    let (code, err) = status(&https, &[], &[]).await;
    assert_eq!(code, 4, "{err}");
    let rest = plain.trim_start_matches("http://");
    assert!(
        err.contains(&format!(
            "failed: could not connect to the service: the server answered in plain HTTP, not \
             TLS (it speaks http://); the service speaks plain HTTP: use http://{rest}"
        )),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_certificate_for_another_host_or_expired_gets_its_own_hint_not_the_cas() {
    let ca = LocalCa::generate().expect("a CA");
    let sandbox = Sandbox::new();
    let trusted = sandbox.write_file("ca.pem", ca.cert_pem());
    let trusted = ["--ca-cert", path(&trusted)];
    let server =
        crate::common::https_mock(MockServer::builder(), &ca, &["wrong.example"], false).await;
    let (code, err) = status(&server.base_url(), &[], &trusted).await;
    assert_eq!(code, 4, "{err}");
    // OpenSSL (a build with every feature) says it in its own words.
    if !err.contains("failed: the TLS handshake with the service failed: error:") {
        assert!(
            err.contains(
                "; the certificate names wrong.example, not 127.0.0.1: use a host it names in \
                 --base-url, or a certificate that names 127.0.0.1"
            ),
            "{err}"
        );
        assert!(!err.contains("trust the service's CA"), "{err}");
    }

    let server = crate::common::https_mock(MockServer::builder(), &ca, &["127.0.0.1"], true).await;
    let (code, err) = status(&server.base_url(), &[], &trusted).await;
    assert_eq!(code, 4, "{err}");
    if !err.contains("failed: the TLS handshake with the service failed: error:") {
        let (_, hint) = err
            .split_once("; the certificate expired on ")
            .unwrap_or_else(|| panic!("no expiry: {err}"));
        assert!(hint.contains(" UTC: renew it"), "{err}");
        assert!(!err.contains("trust the service's CA"), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn verbose_prints_the_url_requested_not_the_base_url_as_typed() {
    let server = MockServer::start().await;
    let base = server.base_url();
    for typed in [
        format!("{base}/"),
        format!("  {base}  "),
        format!("{base}\r"),
        format!("{base}/\r\n"),
    ] {
        let (code, err) = status(&typed, &[], &["-v"]).await;
        assert_eq!(code, 3, "{typed:?}: {err}");
        assert!(
            err.contains(&format!(
                "> GET {base}/api/payments/{UNKNOWN}/status (no API key)"
            )),
            "{typed:?}: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn credentials_in_the_base_url_are_named_by_verbose_and_the_401_hint_never_shown() {
    let server = MockServer::builder()
        .api_key("sk_network_only_key", None)
        .start()
        .await
        .expect("starts");
    let base = server
        .base_url()
        .replace("http://", "http://alice:s3cr3t-pw@");
    let (code, err) = status(&base, &[], &["-v"]).await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "/status (authorization: Basic [REDACTED], from the user:pass@ of the service URL)"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "; check the user:pass@ of the service URL (--base-url, PAYMENTS_BASE_URL or \
             base_url in the profile): the credentials sent came from it"
        ),
        "{err}"
    );
    assert!(!err.contains("check the API key"), "{err}");
    assert!(!err.contains("alice") && !err.contains("s3cr3t"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_ending_in_a_carriage_return_is_said_to_hold_one() {
    let (code, err) = status(
        "http://127.0.0.1:9",
        &[("PAYMENTS_API_KEY", "sk_network_crlf_key\r")],
        &[],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "holds a control character (a carriage return: a file with Windows line endings?)"
        ),
        "{err}"
    );
    assert!(!err.contains("sk_network_crlf_key"), "{err}");
}
