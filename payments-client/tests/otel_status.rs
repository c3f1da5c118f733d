//! OpenTelemetry span status (feature `opentelemetry`): by the HTTP client
//! conventions an attempt answered 4xx or 5xx, or failed below HTTP, is
//! status Error, and so is a call that fails; a success, and an attempt
//! the next one made good, leave the call's status Unset. Read back from
//! the SDK's in-memory exporter through `tracing-opentelemetry`.
//!
//! Alone in its own test binary (one test): the subscriber is
//! thread-scoped.

#![cfg(feature = "opentelemetry")]

mod common;

use std::time::Duration;

use common::*;
use opentelemetry::trace::Status;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use payments_client::{Client, ConfirmRequest};
use wiremock::MockServer;

const CONFIRM: &str = "POST /api/payments/confirm";

fn confirm_request() -> ConfirmRequest {
    ConfirmRequest::builder(TX_ID, "INV-1")
        .build()
        .expect("a request")
}

fn is_error(span: &SpanData) -> bool {
    matches!(span.status, Status::Error { .. })
}

/// The finished spans of the confirm since the last reset: its attempts,
/// then the call.
fn spans(
    provider: &SdkTracerProvider,
    exporter: &InMemorySpanExporter,
) -> (Vec<SpanData>, SpanData) {
    let _ = provider.force_flush();
    let spans = exporter.get_finished_spans().expect("spans");
    exporter.reset();
    let attempts = spans
        .iter()
        .filter(|s| s.name == CONFIRM)
        .cloned()
        .collect();
    let calls: Vec<SpanData> = spans
        .iter()
        .filter(|s| s.name == "payments confirm")
        .cloned()
        .collect();
    let [call] = &calls[..] else {
        panic!("one call span: {spans:#?}");
    };
    (attempts, call.clone())
}

#[tokio::test]
async fn failed_attempts_and_calls_have_status_error() {
    let Traced {
        exporter,
        provider,
        guard: _guard,
    } = traced();

    // A 500 made good by the retry: that attempt is Error, the call not.
    let server = MockServer::start().await;
    post_fails_once_then(&server, json(200, ok_envelope(&confirm_data()))).await;
    client(&server)
        .confirm(confirm_request())
        .await
        .expect("confirmed");
    let (attempts, call) = spans(&provider, &exporter);
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    assert!(is_error(&attempts[0]), "{:?}", attempts[0].status);
    assert_eq!(attempts[1].status, Status::Unset);
    assert_eq!(call.status, Status::Unset);

    // A 4xx: the attempt and the call are Error.
    let server = MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(json(400, err_envelope("TRANSACTION_EXPIRED", "expired")))
        .mount(&server)
        .await;
    client(&server)
        .confirm(confirm_request())
        .await
        .expect_err("refused");
    let (attempts, call) = spans(&provider, &exporter);
    assert_eq!(attempts.len(), 1, "{attempts:#?}");
    assert!(is_error(&attempts[0]), "{:?}", attempts[0].status);
    assert!(is_error(&call), "{:?}", call.status);

    // No connection (refused), a connection dropped unanswered: every
    // attempt and the call are Error.
    let refused = refused_url().await;
    let (dropping, _) = scripted_server(vec![None; 8]).await;
    for base in [refused, dropping] {
        Client::builder(base)
            .retry_policy(fast_retries())
            .timeout(Duration::from_secs(5))
            .build()
            .expect("a client")
            .confirm(confirm_request())
            .await
            .expect_err("no answer");
        let (attempts, call) = spans(&provider, &exporter);
        assert_eq!(attempts.len(), 3, "{attempts:#?}");
        assert!(attempts.iter().all(is_error), "{attempts:#?}");
        assert!(is_error(&call), "{:?}", call.status);
    }
}
