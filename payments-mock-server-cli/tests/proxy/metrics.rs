//! The proxy's `GET /metrics` through the binary (CONTRACT section 18):
//! exchanges by endpoint and verdict, findings by rule and level, the
//! upstream's answer time and failures; `promtool check metrics` accepts
//! the scrape.

use payments_mock_server::MockServer;

use crate::binary::{broken_upstream, post, spawn_proxy, stop, topup};
use crate::metrics_text::{assert_histograms_consistent, parse, promtool_check, value};

async fn scrape(base: &str) -> (String, String) {
    let reply = reqwest::get(format!("{base}/metrics"))
        .await
        .expect("answered");
    assert_eq!(reply.status(), 200);
    let content_type = reply.headers()["content-type"]
        .to_str()
        .expect("ASCII")
        .to_owned();
    (content_type, reply.text().await.expect("a body"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exchanges_findings_and_upstream_failures_are_counted() {
    let mock = MockServer::start().await;
    let (proxy, base) = spawn_proxy(&mock.base_url(), &[]);
    let answer = post(&base, "/api/payments/initiate", &topup("MET-P1")).await;
    assert_eq!(answer["isSuccess"], true);
    let (content_type, text) = scrape(&base).await;
    assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
    let samples = parse(&text);
    assert_eq!(
        value(
            &samples,
            "payments_proxy_exchanges_total",
            &[("endpoint", "initiate"), ("verdict", "pass")]
        ),
        1.0,
        "{text}"
    );
    assert_eq!(
        value(
            &samples,
            "payments_proxy_upstream_duration_seconds_count",
            &[]
        ),
        1.0,
        "{text}"
    );
    assert_histograms_consistent(&samples);
    promtool_check(&text, "the proxy's scrape");
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(0), "{stderr}");

    // An upstream that answers HTML: a violation of envelope.shape.
    let upstream = broken_upstream().await;
    let (proxy, base) = spawn_proxy(&upstream, &[]);
    let reply = reqwest::get(format!("{base}/api/payments/x/status"))
        .await
        .expect("answered");
    assert_eq!(reply.headers()["x-contract-verdict"], "violation");
    let (_, text) = scrape(&base).await;
    let samples = parse(&text);
    assert_eq!(
        value(
            &samples,
            "payments_proxy_exchanges_total",
            &[("endpoint", "statusById"), ("verdict", "violation")]
        ),
        1.0,
        "{text}"
    );
    assert_eq!(
        value(
            &samples,
            "payments_proxy_findings_total",
            &[("rule", "envelope.shape"), ("level", "violation")]
        ),
        1.0,
        "{text}"
    );
    promtool_check(&text, "the proxy's scrape with findings");
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(1), "{stderr}");

    // No upstream at all: a connection failure, answered 502 unchecked.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        listener.local_addr().expect("an address")
    };
    let (proxy, base) = spawn_proxy(&format!("http://{closed}"), &[]);
    let reply = reqwest::get(format!("{base}/api/payments/x/status"))
        .await
        .expect("answered");
    assert_eq!(reply.status(), 502);
    let (_, text) = scrape(&base).await;
    let samples = parse(&text);
    assert_eq!(
        value(
            &samples,
            "payments_proxy_upstream_failures_total",
            &[("reason", "connect")]
        ),
        1.0,
        "{text}"
    );
    assert_eq!(
        value(
            &samples,
            "payments_proxy_exchanges_total",
            &[("verdict", "unchecked")]
        ),
        1.0,
        "{text}"
    );
    promtool_check(&text, "the proxy's scrape with a failure");
    let _ = stop(proxy);
}
