//! Through the contract proxy: the caller's span, the proxy's server
//! span, its call upstream (a client span) and the mock's span in one
//! trace; a call refused or failed is an error span.

use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode as SpanStatus;
use payments_contract_proxy::{Proxy, ProxyConfig};
use payments_mock_server::MockServer;

use super::receiver::{Receiver, Seen, named};
use super::{PARENT, TRACE, mock_exporting_to, traceparent};
use crate::common::initiate_body;

#[tokio::test]
async fn one_trace_runs_from_the_caller_through_the_proxy_to_the_mock() {
    let mut receiver = Receiver::start().await;
    let mock = mock_exporting_to(&receiver).await;
    let mut config = ProxyConfig::new(mock.base_url().parse().expect("a URL"));
    config.otlp_endpoint = Some(receiver.endpoint());
    let proxy = Proxy::start(config).await.expect("the proxy starts");
    let reply = reqwest::Client::new()
        .post(format!("{}/api/payments/initiate", proxy.base_url()))
        .header("traceparent", traceparent())
        .json(&initiate_body("OT-P", "TOPUP"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(reply.status(), 200);
    // The proxy's exchange still names the caller's trace and span.
    let listed = proxy.exchanges();
    assert_eq!(listed.len(), 1);
    proxy.shutdown().await;
    let journal = mock.requests().await;
    let (upstream_port, upstream_base) = (mock.addr().port(), mock.base_url());
    mock.shutdown().await;

    let spans = receiver.spans();
    let initiate = named(&spans, "POST /api/payments/initiate");
    let by = |service: &str| {
        initiate
            .iter()
            .find(|s| s.service() == Some(service))
            .unwrap_or_else(|| panic!("a span of {service}: {spans:#?}"))
    };
    let (at_proxy, at_mock) = (by("payments-contract-proxy"), by("payments-mock-server"));
    assert_eq!(at_proxy.trace_id(), TRACE);
    assert_eq!(at_proxy.parent_id(), PARENT);
    assert_eq!(at_proxy.span.kind, SpanKind::Server as i32);
    assert_eq!(
        at_proxy.instance(),
        Some(proxy_address(&spans).as_str()),
        "the proxy's HOST:PORT"
    );
    // The call upstream: a client span under the proxy's server span.
    let call = named(&spans, "POST")
        .into_iter()
        .find(|s| s.service() == Some("payments-contract-proxy"))
        .unwrap_or_else(|| panic!("the proxy's call span: {spans:#?}"));
    assert_eq!(call.span.kind, SpanKind::Client as i32);
    assert_eq!(call.trace_id(), TRACE);
    assert_eq!(
        call.parent_id(),
        at_proxy.span_id(),
        "under the proxy's span"
    );
    assert_eq!(call.text("http.request.method"), Some("POST"));
    assert_eq!(call.text("server.address"), Some("127.0.0.1"));
    assert_eq!(
        call.int("server.port"),
        Some(i64::from(upstream_port)),
        "the upstream's port"
    );
    assert_eq!(
        call.text("url.full"),
        Some(format!("{upstream_base}/api/payments/initiate").as_str())
    );
    assert_eq!(call.int("http.response.status_code"), Some(200));
    assert_eq!(call.text("error.type"), None);
    assert_eq!(at_mock.trace_id(), TRACE, "one trace");
    assert_eq!(at_mock.parent_id(), call.span_id(), "the call's child");
    // What the mock's journal saw: the proxy's call span, not the caller's.
    let entry = journal.last().expect("a journal entry");
    let sent = payments_serve::trace::TraceParent::from_pairs(
        entry.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    )
    .expect("a traceparent");
    assert_eq!(sent.trace_id(), TRACE);
    assert_eq!(sent.span_id(), call.span_id());
}

/// The caller's `tracestate` goes upstream with its trace, and only then:
/// with no well-formed `traceparent` (none, an upper-case one, two) the
/// trace upstream is the proxy's own, and the state of the caller's is
/// not passed on.
#[tokio::test]
async fn the_callers_tracestate_goes_upstream_only_with_its_trace() {
    let receiver = Receiver::start().await;
    let mock = MockServer::start().await;
    let mut config = ProxyConfig::new(mock.base_url().parse().expect("a URL"));
    config.otlp_endpoint = Some(receiver.endpoint());
    let proxy = Proxy::start(config).await.expect("the proxy starts");
    let http = reqwest::Client::new();
    let cases: [(&str, &[String], bool); 4] = [
        ("kept", &[traceparent()], true),
        ("none", &[], false),
        ("upper case", &[traceparent().to_uppercase()], false),
        ("two", &[traceparent(), traceparent()], false),
    ];
    for (n, (what, parents, kept)) in cases.into_iter().enumerate() {
        let mut request = http
            .post(format!("{}/api/payments/initiate", proxy.base_url()))
            .header("tracestate", "vendor=opaque")
            .json(&initiate_body(&format!("OT-TS-{n}"), "TOPUP"));
        for parent in parents {
            request = request.header("traceparent", parent);
        }
        assert_eq!(
            request.send().await.expect("an answer").status(),
            200,
            "{what}"
        );
        let entry = mock.requests().await.pop().expect("journaled");
        let state = entry
            .headers
            .iter()
            .find(|(k, _)| k == "tracestate")
            .map(|(_, v)| v.as_str());
        assert_eq!(state, kept.then_some("vendor=opaque"), "{what}");
    }
    proxy.shutdown().await;
    mock.shutdown().await;
}

#[tokio::test]
async fn a_call_upstream_that_fails_or_is_refused_is_an_error_span() {
    let mut receiver = Receiver::start().await;
    let mock = MockServer::start().await;
    let mut config = ProxyConfig::new(mock.base_url().parse().expect("a URL"));
    config.otlp_endpoint = Some(receiver.endpoint());
    let proxy = Proxy::start(config).await.expect("the proxy starts");
    // Answered 404 by the mock: a client span's 4xx is an error.
    let missing = reqwest::Client::new()
        .get(format!(
            "{}/api/payments/01a2269a-4271-7261-9406-1a90300163bd/status",
            proxy.base_url()
        ))
        .header("traceparent", traceparent())
        .send()
        .await
        .expect("an answer");
    assert_eq!(missing.status(), 404);
    // The upstream gone: the call fails to connect.
    mock.shutdown().await;
    let down = reqwest::Client::new()
        .get(format!(
            "{}/api/payments/reference/SECRET-REF/status",
            proxy.base_url()
        ))
        .header("traceparent", traceparent())
        .send()
        .await
        .expect("an answer");
    assert_eq!(
        down.status(),
        502,
        "the proxy answers for an upstream it cannot reach"
    );
    proxy.shutdown().await;

    let spans = receiver.spans();
    let calls: Vec<&Seen> = named(&spans, "GET")
        .into_iter()
        .filter(|s| s.span.kind == SpanKind::Client as i32)
        .collect();
    assert_eq!(calls.len(), 2, "{spans:#?}");
    let refused = calls
        .iter()
        .find(|s| s.int("http.response.status_code") == Some(404))
        .expect("the 404");
    assert_eq!(refused.text("error.type"), Some("404"));
    assert_eq!(
        refused.span.status.as_ref().map(|s| s.code),
        Some(SpanStatus::Error as i32)
    );
    let failed = calls
        .iter()
        .find(|s| s.int("http.response.status_code").is_none())
        .expect("the failed call");
    assert_eq!(failed.text("error.type"), Some("connect"));
    assert_eq!(
        failed.span.status.as_ref().map(|s| s.code),
        Some(SpanStatus::Error as i32)
    );
    assert!(
        failed
            .text("url.full")
            .is_some_and(|url| url.ends_with("/api/payments/reference/SECRET-REF/status")),
        "{failed:?}"
    );
}

/// The proxy's own `HOST:PORT`, from its span's `server.port`.
fn proxy_address(spans: &[Seen]) -> String {
    let at_proxy = spans
        .iter()
        .find(|s| {
            s.service() == Some("payments-contract-proxy") && s.span.kind == SpanKind::Server as i32
        })
        .expect("a proxy span");
    format!(
        "127.0.0.1:{}",
        at_proxy
            .int("server.port")
            .expect("the port it was asked on")
    )
}
