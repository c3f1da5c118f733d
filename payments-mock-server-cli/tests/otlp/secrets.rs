//! A path that echoes a secret (a key in a reference, a payer id an
//! initiate carried) is shown in a span as every other output shows it:
//! the mock's `url.path` without the request's key, the configured keys
//! or a key in the query; the proxy's `url.path` and its call's
//! `url.full` as its recording shows the path.

use payments_contract_proxy::{Proxy, ProxyConfig};
use payments_mock_server::MockServer;
use serde_json::json;

use super::receiver::{Receiver, Seen, all_values};
use super::traceparent;
use crate::common::initiate_body;

const KEY: &str = "sk_test_SPANKEYCANARY1";
const OTHER_KEY: &str = "sk_test_SPANOTHERCANARY2";
const QUERY_KEY: &str = "QUERYKEYCANARY3";
const ADMIN_KEY: &str = "adm_SPANADMINCANARY4";

/// Every value of a span's attributes, its name's and its resource's.
fn values(seen: &Seen) -> Vec<String> {
    let mut values = all_values(&seen.span.attributes);
    values.extend(all_values(&seen.resource));
    values.push(seen.span.name.clone());
    values
}

fn status_by_reference(base: &str, reference: &str) -> String {
    format!("{base}/api/payments/reference/{reference}/status")
}

#[tokio::test]
async fn the_mocks_span_shows_no_key_a_path_echoes() {
    let mut receiver = Receiver::start().await;
    let mock = MockServer::builder()
        .api_key(KEY, None)
        .api_key(OTHER_KEY, None)
        .admin_key(ADMIN_KEY)
        .otlp_endpoint(receiver.endpoint())
        .start()
        .await
        .expect("the mock starts");
    let http = reqwest::Client::new();
    for url in [
        // The key it was sent with; another configured key; a key in the
        // query (percent-encoded in the path); a key sent in the query
        // and not configured.
        status_by_reference(&mock.base_url(), &format!("REF-{KEY}")),
        status_by_reference(&mock.base_url(), &format!("REF-{OTHER_KEY}")),
        // The admin key, which the request does not carry.
        status_by_reference(&mock.base_url(), &format!("REF-{ADMIN_KEY}")),
        status_by_reference(&mock.base_url(), "REF-sk%5Ftest%5FSPANKEYCANARY1"),
        format!(
            "{}?api_key={QUERY_KEY}",
            status_by_reference(&mock.base_url(), &format!("REF-{QUERY_KEY}"))
        ),
    ] {
        let answer = http
            .get(&url)
            .bearer_auth(KEY)
            .header("traceparent", traceparent())
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status(), 404, "{url}");
    }
    mock.shutdown().await;

    let spans = receiver.spans();
    let paths: Vec<&str> = spans.iter().filter_map(|s| s.text("url.path")).collect();
    assert_eq!(
        paths, ["/api/payments/reference/REF-[redacted]/status"; 5],
        "{spans:#?}"
    );
    for seen in &spans {
        for value in values(seen) {
            assert!(!value.contains("CANARY"), "{value}: {seen:?}");
        }
    }
}

#[tokio::test]
async fn the_proxys_spans_show_the_path_as_its_recording_does() {
    let mut receiver = Receiver::start().await;
    let mock = MockServer::builder()
        .api_key(KEY, None)
        .otlp_endpoint(receiver.endpoint())
        .start()
        .await
        .expect("the mock starts");
    let mut config = ProxyConfig::new(mock.base_url().parse().expect("a URL"));
    config.otlp_endpoint = Some(receiver.endpoint());
    let proxy = Proxy::start(config).await.expect("the proxy starts");
    let http = reqwest::Client::new();
    // An initiate whose reference carries its payer id, then reads.
    let mut body = initiate_body("TOPUP-PAYERCANARY60999-1", "TOPUP");
    body["payerId"] = json!("PAYERCANARY60999");
    let initiated = http
        .post(format!("{}/api/payments/initiate", proxy.base_url()))
        .bearer_auth(KEY)
        .json(&body)
        .send()
        .await
        .expect("an answer");
    assert_eq!(initiated.status(), 200);
    for (reference, query) in [
        ("TOPUP-PAYERCANARY60999-1", ""),
        (&*format!("REF-{KEY}"), ""),
        (
            &*format!("REF-{QUERY_KEY}"),
            &*format!("?api_key={QUERY_KEY}"),
        ),
    ] {
        let url = status_by_reference(&proxy.base_url(), reference) + query;
        let answer = http
            .get(&url)
            .bearer_auth(KEY)
            .header("traceparent", traceparent())
            .send()
            .await
            .expect("an answer");
        assert!(answer.status() == 200 || answer.status() == 404, "{url}");
    }
    let recorded: Vec<String> = proxy
        .exchanges()
        .into_iter()
        .map(|(exchange, _, _)| exchange.request.path)
        .filter(|path| path.contains("/reference/"))
        .collect();
    let upstream = mock.base_url();
    proxy.shutdown().await;
    mock.shutdown().await;

    assert_eq!(recorded.len(), 3, "{recorded:?}");
    assert!(
        recorded[0].starts_with("/api/payments/reference/TOPUP-payer-"),
        "the payer's token: {recorded:?}"
    );
    assert_eq!(recorded[1], "/api/payments/reference/REF-[redacted]/status");
    assert_eq!(recorded[2], "/api/payments/reference/REF-[redacted]/status");
    let spans = receiver.spans();
    let of_proxy: Vec<&Seen> = spans
        .iter()
        .filter(|s| s.service() == Some("payments-contract-proxy"))
        .collect();
    let mut server_paths: Vec<&str> = of_proxy
        .iter()
        .filter_map(|s| s.text("url.path"))
        .filter(|path| path.contains("/reference/"))
        .collect();
    server_paths.sort_unstable();
    let mut sorted = recorded.clone();
    sorted.sort_unstable();
    assert_eq!(server_paths, sorted, "{spans:#?}");
    let mut call_urls: Vec<&str> = of_proxy
        .iter()
        .filter_map(|s| s.text("url.full"))
        .filter(|url| url.contains("/reference/"))
        .collect();
    call_urls.sort_unstable();
    let expected: Vec<String> = sorted.iter().map(|p| format!("{upstream}{p}")).collect();
    assert_eq!(call_urls, expected, "{spans:#?}");
    for seen in &of_proxy {
        for value in values(seen) {
            assert!(!value.contains("CANARY"), "{value}: {seen:?}");
        }
    }
    // The mock's spans: no key either (a reference is the merchant's
    // text, and the mock knows no payer id for one).
    for seen in spans
        .iter()
        .filter(|s| s.service() == Some("payments-mock-server"))
    {
        for value in values(seen) {
            for secret in [KEY, QUERY_KEY] {
                assert!(!value.contains(secret), "{value}: {seen:?}");
            }
        }
    }
}
