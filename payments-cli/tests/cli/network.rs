//! The network around the service: the environment's proxy (never for a
//! loopback service, named when it cannot be reached), connect failures
//! told apart (a name that does not resolve, plain HTTP on an https URL),
//! certificates for another host or expired, and what `-v` shows of the
//! URL requested and the credentials sent.

use std::net::TcpListener;

use payments_mock_server::MockServer;

use crate::common::{MERCHANT, Sandbox, run, stderr};

const ADMIN: &str = "adm_network_5c2e81";

/// A listener that stands for a logging proxy: it never answers, and
/// [`nothing_came`] tells whether any connection reached it.
fn proxy_listener() -> (TcpListener, String) {
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
