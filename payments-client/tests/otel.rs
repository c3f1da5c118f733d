//! OpenTelemetry (feature `opentelemetry`, CONTRACT section 21): a span per
//! call and a child span per attempt, named and attributed by the HTTP
//! client conventions, read back from the SDK's in-memory exporter through
//! `tracing-opentelemetry`; each attempt sends the W3C `traceparent` of its
//! own span, so the service sees the application's trace.
//!
//! Alone in its own test binary (one test): the subscriber is
//! thread-scoped, and the global propagator is the process's.

#![cfg(feature = "opentelemetry")]

mod common;

use std::collections::HashMap;

use common::*;
use opentelemetry::trace::{SpanId, TraceContextExt as _};
use opentelemetry::{Key, Value};
use opentelemetry_sdk::trace::SpanData;
use payments_client::{Client, ConfirmRequest};
use tracing::Instrument as _;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

const KEY: &str = "sk_live_TOP_SECRET_42";

fn attributes(span: &SpanData) -> HashMap<String, Value> {
    span.attributes
        .iter()
        .map(|kv| (kv.key.as_str().to_owned(), kv.value.clone()))
        .collect()
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key == Key::from(key.to_owned()))
        .map(|kv| kv.value.to_string())
}

/// Asserts that `span`'s attribute `key` reads `expected`.
#[track_caller]
fn assert_attribute(span: &SpanData, key: &str, expected: &str) {
    assert_eq!(attribute(span, key).as_deref(), Some(expected), "{key}");
}

/// The `traceparent` each request the server received carried: (trace id,
/// span id).
async fn sent_traceparents(server: &MockServer) -> Vec<(String, String)> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| {
            let value = r
                .headers
                .get("traceparent")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_else(|| panic!("no traceparent on {} {}", r.method, r.url));
            let parts: Vec<&str> = value.split('-').collect();
            assert_eq!(parts.len(), 4, "{value}");
            assert_eq!(parts[0], "00", "{value}");
            (parts[1].to_owned(), parts[2].to_owned())
        })
        .collect()
}

#[tokio::test]
async fn calls_and_attempts_are_spans_of_the_applications_trace() {
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    let Traced {
        exporter,
        provider,
        guard: _guard,
    } = traced();

    // A retry: 500, then the confirmation.
    let server = MockServer::start().await;
    post_fails_once_then(&server, json(200, ok_envelope(&confirm_data()))).await;
    let client = client_with_key(&server.uri(), KEY);
    let checkout = tracing::info_span!("checkout");
    let trace_id = checkout.context().span().span_context().trace_id();
    let reply = client
        .confirm(
            ConfirmRequest::builder(TX_ID, "INV-1")
                .confirmation_code("123456")
                .build()
                .expect("a request"),
        )
        .instrument(checkout.clone())
        .await
        .expect("confirmed");
    assert_eq!(reply.attempts(), 2);
    drop(checkout);
    let _ = provider.force_flush();
    let spans = exporter.get_finished_spans().expect("spans");
    let by_name =
        |name: &str| -> Vec<&SpanData> { spans.iter().filter(|s| s.name == name).collect() };
    let [shop] = by_name("checkout")[..] else {
        panic!("one checkout span: {spans:#?}");
    };
    let [call] = by_name("payments confirm")[..] else {
        panic!("one call span: {spans:#?}");
    };
    let attempts = by_name("POST /api/payments/confirm");
    assert_eq!(attempts.len(), 2, "{spans:#?}");
    // One trace: the shop's span, the call under it, the attempts under
    // the call.
    for span in &spans {
        assert_eq!(span.span_context.trace_id(), trace_id, "{}", span.name);
    }
    assert_eq!(call.parent_span_id, shop.span_context.span_id());
    for attempt in &attempts {
        assert_eq!(attempt.parent_span_id, call.span_context.span_id());
        assert_eq!(attempt.span_kind, opentelemetry::trace::SpanKind::Client);
        assert_attribute(attempt, "http.request.method", "POST");
        assert_attribute(attempt, "url.template", "/api/payments/confirm");
        assert_attribute(attempt, "server.address", "127.0.0.1");
        let port = server.address().port().to_string();
        assert_eq!(attribute(attempt, "server.port"), Some(port));
    }
    assert_attribute(attempts[0], "http.response.status_code", "500");
    assert_attribute(attempts[0], "error.type", "500");
    assert_eq!(attribute(attempts[0], "http.request.resend_count"), None);
    assert_attribute(attempts[1], "http.response.status_code", "200");
    assert_eq!(attribute(attempts[1], "error.type"), None);
    assert_attribute(attempts[1], "http.request.resend_count", "1");
    assert_attribute(call, "payments.outcome", "ok");
    assert_attribute(call, "payments.reconciled", "false");
    assert_attribute(call, "payments.reference_no", "INV-1");
    assert_attribute(call, "payments.transaction_id", TX_ID);
    // Never a key or an OTP, in any attribute.
    for span in &spans {
        for (key, value) in attributes(span) {
            let value = value.to_string();
            assert!(
                !value.contains(KEY) && !value.contains("123456"),
                "{key}={value}"
            );
        }
    }
    // Each attempt sent its own span as the parent of what the service does.
    let sent = sent_traceparents(&server).await;
    let ids: Vec<(String, String)> = attempts
        .iter()
        .map(|a| {
            (
                a.span_context.trace_id().to_string(),
                a.span_context.span_id().to_string(),
            )
        })
        .collect();
    assert_eq!(sent, ids);

    // A reconciliation: 500, then TRANSACTION_ALREADY_CONFIRMED, settled by
    // reading the status back: the read-back is a call under the confirm.
    exporter.reset();
    let server = MockServer::start().await;
    post_fails_once_then(
        &server,
        json(
            400,
            err_envelope("TRANSACTION_ALREADY_CONFIRMED", "already"),
        ),
    )
    .await;
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{TX_ID}/status")))
        .respond_with(status_answer("SUCCESSFUL", "150.00", "TOPUP"))
        .mount(&server)
        .await;
    let client = client_with_key(&server.uri(), KEY);
    let reply = client
        .confirm(
            ConfirmRequest::builder(TX_ID, "INV-1")
                .build()
                .expect("a request"),
        )
        .await
        .expect("reconciled");
    assert!(reply.is_reconciled());
    let _ = provider.force_flush();
    let spans = exporter.get_finished_spans().expect("spans");
    let one = |name: &str| -> &SpanData {
        let found: Vec<&SpanData> = spans.iter().filter(|s| s.name == name).collect();
        assert_eq!(found.len(), 1, "{name}: {spans:#?}");
        found[0]
    };
    let confirm = one("payments confirm");
    let read_back = one("payments status");
    let get = one("GET /api/payments/{transactionId}/status");
    assert_eq!(
        confirm.parent_span_id,
        SpanId::INVALID,
        "a root: no app span"
    );
    assert_eq!(read_back.parent_span_id, confirm.span_context.span_id());
    assert_eq!(get.parent_span_id, read_back.span_context.span_id());
    assert_attribute(confirm, "payments.reconciled", "true");
    assert_attribute(confirm, "payments.outcome", "ok");
    assert_attribute(read_back, "payments.transaction_id", TX_ID);
    let posts = spans
        .iter()
        .filter(|s| s.name == "POST /api/payments/confirm")
        .count();
    assert_eq!(posts, 2);
    for span in &spans {
        assert_eq!(
            span.span_context.trace_id(),
            confirm.span_context.trace_id(),
            "{}",
            span.name
        );
    }
    // The service saw every attempt, the read-back's too, in that trace.
    let sent = sent_traceparents(&server).await;
    assert_eq!(sent.len(), 3);
    assert!(
        sent.iter()
            .all(|(trace, _)| *trace == confirm.span_context.trace_id().to_string())
    );

    // End to end against the mock: the journal entry of the initiate names
    // the attempt span's trace and span.
    exporter.reset();
    let mock = payments_mock_server::MockServer::start().await;
    let client = Client::builder(mock.base_url()).build().expect("a client");
    let request = payments_client::InitiateRequest::builder(
        MERCHANT.parse().expect("a merchant"),
        "TRACE-E2E",
        payments_client::MinorAmount::new(1050).expect("an amount"),
        "TOPUP",
        "S1",
    )
    .payer_id("60123456789")
    .build()
    .expect("a request");
    let order = tracing::info_span!("order");
    let reply = client
        .initiate(request)
        .instrument(order)
        .await
        .expect("initiated");
    let _ = provider.force_flush();
    let spans = exporter.get_finished_spans().expect("spans");
    let attempt = spans
        .iter()
        .find(|s| s.name == "POST /api/payments/initiate")
        .expect("an attempt span");
    let call = spans
        .iter()
        .find(|s| s.name == "payments initiate")
        .expect("a call span");
    assert_attribute(
        call,
        "payments.transaction_id",
        reply.data().transaction_id.as_ref(),
    );
    assert_attribute(call, "payments.reference_no", "TRACE-E2E");
    let text = reqwest::get(format!("{}/_mock/requests", mock.base_url()))
        .await
        .expect("the journal")
        .text()
        .await
        .expect("a body");
    let journal: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let entry = &journal["data"]["items"][0];
    assert_eq!(
        entry["traceId"].as_str(),
        Some(attempt.span_context.trace_id().to_string().as_str())
    );
    assert_eq!(
        entry["spanId"].as_str(),
        Some(attempt.span_context.span_id().to_string().as_str())
    );

    // A read by reference names the transaction it found, a read by id
    // the reference; so does an initiate's read-back by reference (500,
    // then DUPLICATE_REFERENCE_NO, settled by reading INV-1 back).
    exporter.reset();
    let server = MockServer::start().await;
    post_fails_once_then(
        &server,
        json(400, err_envelope("DUPLICATE_REFERENCE_NO", "dup")),
    )
    .await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .mount(&server)
        .await;
    let client = Client::builder(server.uri())
        .retry_policy(fast_retries())
        .build()
        .expect("a client");
    let request = plain_initiate_request();
    assert!(
        client
            .initiate(request)
            .await
            .expect("reconciled")
            .is_reconciled()
    );
    client
        .status_by_reference("INV-1", Some(merchant()))
        .await
        .expect("read by reference");
    client.status(TX_ID).await.expect("read by id");
    let _ = provider.force_flush();
    let spans = exporter.get_finished_spans().expect("spans");
    let by_reference: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == "payments status_by_reference")
        .collect();
    assert_eq!(
        by_reference.len(),
        2,
        "the read-back and the read: {spans:#?}"
    );
    let initiate = spans
        .iter()
        .find(|s| s.name == "payments initiate")
        .expect("an initiate span");
    assert_eq!(
        by_reference[0].parent_span_id,
        initiate.span_context.span_id()
    );
    for read in by_reference {
        assert_attribute(read, "payments.transaction_id", TX_ID);
        assert_attribute(read, "payments.reference_no", "INV-1");
    }
    let by_id = spans
        .iter()
        .find(|s| s.name == "payments status")
        .expect("a status span");
    assert_attribute(by_id, "payments.reference_no", "INV-1");
}
