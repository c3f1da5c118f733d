//! The proxy and TLS (CONTRACT section 18): in front of an https upstream
//! that demands a client certificate (the embedded mock with a client CA),
//! with `--upstream-ca`, `--upstream-client-cert` and
//! `--upstream-client-key`; without the certificate, a clear 502; and the
//! proxy's own listener over HTTPS with `--tls-self-signed`.

use std::process::Child;

use payments_mock_server::MockServer;
use payments_mock_server::tls::LocalCa;
use serde_json::Value;

use crate::MERCHANT;

/// `proxy --port 0 ARGS`, its banner read.
fn spawn(args: &[&str]) -> (Child, String) {
    let mut all = vec!["proxy", "--port", "0"];
    all.extend_from_slice(args);
    crate::binary::spawn(&all)
}

/// SIGTERM, then stderr.
fn stop(child: Child) -> String {
    crate::binary::stop(child).1
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// An upstream that demands a client certificate, the files a proxy
/// needs to reach it, and the directory that holds them.
async fn mutual_upstream() -> (MockServer, tempfile::TempDir) {
    let clients = LocalCa::generate().expect("a client CA");
    let server = MockServer::builder()
        .tls_self_signed()
        .tls_client_ca(clients.cert_pem())
        .start()
        .await
        .expect("starts");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mine = clients.client_cert("proxy").expect("a cert");
    std::fs::write(dir.path().join("ca.pem"), server.ca_pem().expect("a CA")).expect("written");
    std::fs::write(dir.path().join("client.pem"), &mine.cert_pem).expect("written");
    std::fs::write(dir.path().join("client-key.pem"), mine.key_pem()).expect("written");
    (server, dir)
}

async fn initiate(client: &reqwest::Client, base: &str, reference: &str) -> (u16, Value) {
    let body = serde_json::json!({
        "merchantId": MERCHANT, "referenceNo": reference, "amount": 1000,
        "productCode": "GIFTCARD", "storeId": "S1",
    });
    let answer = client
        .post(format!("{base}/api/payments/initiate"))
        .json(&body)
        .send()
        .await
        .expect("the proxy answers");
    let status = answer.status().as_u16();
    (status, answer.json().await.expect("an envelope"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_presents_its_client_certificate_to_an_https_upstream() {
    let (server, dir) = mutual_upstream().await;
    let (child, base) = spawn(&[
        "--upstream",
        &server.base_url(),
        "--upstream-ca",
        path(&dir.path().join("ca.pem")),
        "--upstream-client-cert",
        path(&dir.path().join("client.pem")),
        "--upstream-client-key",
        path(&dir.path().join("client-key.pem")),
        "--tls-self-signed",
        path(&dir.path().join("proxy-tls")),
    ]);
    assert!(base.starts_with("https://127.0.0.1:"), "{base}");
    let proxy_ca = std::fs::read(dir.path().join("proxy-tls/ca.pem")).expect("the proxy's CA");
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&proxy_ca).expect("a CA"))
        .build()
        .expect("a client");
    let (status, envelope) = initiate(&client, &base, "PROXY-TLS-1").await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(envelope["isSuccess"], true, "{envelope}");
    assert_eq!(server.answered(), 1);
    let stderr = stop(child);
    assert!(!stderr.contains("PRIVATE KEY"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_client_certificate_the_proxy_answers_a_clear_upstream_error() {
    let (server, dir) = mutual_upstream().await;
    let (child, base) = spawn(&[
        "--upstream",
        &server.base_url(),
        "--upstream-ca",
        path(&dir.path().join("ca.pem")),
    ]);
    let (status, envelope) = initiate(&reqwest::Client::new(), &base, "PROXY-TLS-2").await;
    assert_eq!(status, 502, "{envelope}");
    assert_eq!(envelope["errorCode"], "UPSTREAM_UNAVAILABLE", "{envelope}");
    let message = envelope["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("refused TLS (received fatal alert: CertificateRequired)"),
        "{message}"
    );
    assert_eq!(server.answered(), 0);
    // Counted as a TLS failure of the upstream, not a connect failure.
    let scrape = reqwest::get(format!("{base}/metrics"))
        .await
        .expect("scraped")
        .text()
        .await
        .expect("a body");
    let samples = crate::metrics_text::parse(&scrape);
    let failures = |reason| {
        crate::metrics_text::value(
            &samples,
            "payments_proxy_upstream_failures_total",
            &[("reason", reason)],
        )
    };
    assert_eq!(failures("tls"), 1.0, "{scrape}");
    assert_eq!(failures("connect"), 0.0, "{scrape}");
    stop(child);

    // Without --upstream-ca, the upstream's local CA is unknown.
    let (child, base) = spawn(&["--upstream", &server.base_url()]);
    let (status, envelope) = initiate(&reqwest::Client::new(), &base, "PROXY-TLS-3").await;
    assert_eq!(status, 502, "{envelope}");
    let message = envelope["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("refused TLS (invalid peer certificate: UnknownIssuer)"),
        "{message}"
    );
    stop(child);
}

#[test]
fn bad_upstream_tls_files_are_named_and_exit_2() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "hello\n").expect("written");
    for (args, expected) in [
        (vec!["--upstream-ca", path(&notes)], "--upstream-ca: "),
        (
            vec!["--upstream-client-cert", path(&notes)],
            "--upstream-client-key",
        ),
        (
            vec![
                "--upstream-client-cert",
                path(&notes),
                "--upstream-client-key",
                path(&notes),
            ],
            "--upstream-client-cert: ",
        ),
    ] {
        let mut all = vec!["proxy", "--port", "0", "--upstream", "https://127.0.0.1:9"];
        all.extend_from_slice(&args);
        let (code, _, stderr) = crate::binary::run(&all);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        if expected.ends_with(": ") {
            assert!(stderr.contains(path(&notes)), "{stderr}");
        }
    }
}
