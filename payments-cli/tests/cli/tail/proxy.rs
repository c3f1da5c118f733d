//! `payments tail --proxy`: a contract proxy's exchanges and verdicts,
//! read once and followed.

use std::process::Command as StdCommand;

use payments_contract_proxy::{Proxy, ProxyConfig};
use serde_json::{Value, json};
use unicode_width::UnicodeWidthStr as _;

use crate::common::{Sandbox, run, stderr, stdout};

use super::follow::{exit_of, follow, line_reader, next_line};
use super::{ADMIN, PROXY_KEY, UNKNOWN, lines, mock, story, tail};

#[tokio::test(flavor = "multi_thread")]
async fn the_proxys_exchanges_and_verdicts() {
    let server = mock().await;
    let mut config = ProxyConfig::new(server.base_url().parse().expect("a URL"));
    config.admin_keys = vec![PROXY_KEY.parse().expect("an admin key")];
    let proxy = Proxy::start(config).await.expect("a proxy");
    let base = proxy.base_url();
    let id = story(&base).await;
    let sandbox = Sandbox::new();

    let entries = lines(&stdout(
        &run(tail(&sandbox, &base, PROXY_KEY, "json", &["--proxy"]))
            .await
            .success(),
    ));
    assert_eq!(entries.len(), 7, "{entries:?}");
    for entry in &entries {
        for field in [
            "seq",
            "time",
            "method",
            "path",
            "status",
            "durationMs",
            "verdict",
            "findings",
        ] {
            assert!(entry.get(field).is_some(), "{field} in {entry}");
        }
    }
    // The status read by id knows its reference (the proxy remembers it).
    let by_id = entries
        .iter()
        .find(|e| e["path"] == format!("/api/payments/{id}/status"))
        .expect("the read by id");
    assert_eq!(by_id["referenceNo"], "INV-A1");
    assert_eq!(by_id["verdict"], "pass");

    // --reference-no through the proxy: what the proxy ties to INV-A1.
    let about = lines(&stdout(
        &run(tail(
            &sandbox,
            &base,
            PROXY_KEY,
            "json",
            &["--proxy", "--reference-no", "INV-A1"],
        ))
        .await
        .success(),
    ));
    assert_eq!(about.len(), 4, "{about:?}");
    // --path and --status, applied here.
    let reads = lines(&stdout(
        &run(tail(
            &sandbox,
            &base,
            PROXY_KEY,
            "json",
            &[
                "--proxy",
                "--path",
                "/api/payments/initiate",
                "--since",
                "1",
            ],
        ))
        .await
        .success(),
    ));
    assert_eq!(reads.len(), 2, "{reads:?}");
    let mut cmd = tail(
        &sandbox,
        &base,
        PROXY_KEY,
        "table",
        &["--proxy", "--status", "404"],
    );
    cmd.env("COLUMNS", "80");
    let table = stdout(&run(cmd).await.success());
    assert!(
        table.starts_with("SEQ TIME     METHOD HTTP VERDICT      REQUEST  PATH"),
        "{table}"
    );
    assert_eq!(table.lines().count(), 2, "{table}");
    assert!(table.contains(" 404 pass "), "{table}");
    for line in table.lines() {
        assert!(line.width() <= 80, "{line}");
    }

    // The proxy's admin key only.
    let refused = run(tail(&sandbox, &base, ADMIN, "json", &["--proxy"]))
        .await
        .code(1);
    let err = stderr(&refused);
    assert!(
        err.contains("cannot read the contract proxy's exchanges"),
        "{err}"
    );
    assert!(err.contains("UNAUTHORIZED (HTTP 401)"), "{err}");
    assert!(err.contains("give the proxy's admin key"), "{err}");
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn follow_through_the_proxy_shows_violations_as_they_happen() {
    // An upstream that answers a status read with an HTML page.
    let upstream = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::any())
        .respond_with(
            wiremock::ResponseTemplate::new(502)
                .insert_header("content-type", "text/html")
                .set_body_string("<html>bad gateway</html>"),
        )
        .mount(&upstream)
        .await;
    let proxy = Proxy::start(ProxyConfig::new(upstream.uri().parse().expect("a URL")))
        .await
        .expect("a proxy");
    let base = proxy.base_url();
    let sandbox = Sandbox::new();
    let mut child = follow(&sandbox, &base, "unused", &["--proxy"]);
    let mut lines = line_reader(&mut child);
    // Before or after its first read: shown either way.
    let _ = reqwest::get(format!("{base}/api/payments/{UNKNOWN}/status")).await;
    let shown: Value = serde_json::from_str(&next_line(&mut lines).await).expect("JSON");
    assert_eq!(shown["verdict"], "violation");
    assert_eq!(shown["status"], 502);
    assert!(
        shown["findings"]
            .as_array()
            .is_some_and(|f| f.contains(&json!({"rule": "envelope.shape", "level": "violation"}))),
        "{shown}"
    );
    let _ = StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    assert_eq!(exit_of(child).await.0, Some(0));
}

/// A server that answers `/_mock/requests` with a page whose content type
/// is not readable text (a byte past ASCII): said as such, quoted and
/// escaped, never "no content type".
#[tokio::test(flavor = "multi_thread")]
async fn a_content_type_that_is_not_readable_is_named_escaped() {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::any())
        .respond_with(
            wiremock::ResponseTemplate::new(502)
                .insert_header(
                    "content-type",
                    reqwest::header::HeaderValue::from_bytes(b"text/html\x9b0;T")
                        .expect("a header value"),
                )
                .set_body_bytes(b"<html>bad gateway</html>".to_vec()),
        )
        .mount(&server)
        .await;
    let sandbox = Sandbox::new();
    let failed = run(tail(&sandbox, &server.uri(), ADMIN, "json", &[])).await;
    let err = stderr(&failed);
    assert!(
        err.contains("a content type that is not readable text ('text/html\\u{9b}0;T')"),
        "{err}"
    );
    assert!(!err.contains("no content type"), "{err}");
}
