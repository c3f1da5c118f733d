//! OpenTelemetry metrics (feature `opentelemetry`, CONTRACT section 21):
//! `http.client.request.duration` per attempt, and counts of retries,
//! unknown outcomes and refused answers, read back from the SDK's
//! in-memory exporter through the global meter provider.
//!
//! Alone in its own test binary: the meter provider is the process's.

#![cfg(feature = "opentelemetry")]

mod common;

use common::*;
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use payments_client::{Client, ConfirmRequest, Error};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

/// The data points of `name`: (attributes, count for a histogram or value
/// for a sum).
fn points(metrics: &[ResourceMetrics], name: &str) -> Vec<(Vec<KeyValue>, u64)> {
    let mut found = Vec::new();
    for resource in metrics {
        for scope in resource.scope_metrics() {
            for metric in scope.metrics().filter(|m| m.name() == name) {
                match metric.data() {
                    AggregatedMetrics::F64(MetricData::Histogram(h)) => {
                        for p in h.data_points() {
                            found.push((p.attributes().cloned().collect(), p.count()));
                        }
                    }
                    AggregatedMetrics::U64(MetricData::Sum(s)) => {
                        for p in s.data_points() {
                            found.push((p.attributes().cloned().collect(), p.value()));
                        }
                    }
                    other => panic!("{name}: {other:?}"),
                }
            }
        }
    }
    found
}

fn has(attributes: &[KeyValue], key: &str, value: &str) -> bool {
    attributes
        .iter()
        .any(|kv| kv.key.as_str() == key && kv.value.to_string() == value)
}

#[tokio::test]
async fn attempts_retries_unknown_outcomes_and_refused_answers_are_counted() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    opentelemetry::global::set_meter_provider(provider.clone());

    let server = MockServer::start().await;
    // A retry (500, then the confirmation); then an answer about another
    // transaction (refused); then 500 three times (an unknown outcome).
    Mock::given(method("POST"))
        .respond_with(json(500, err_envelope("INTERNAL_ERROR", "boom")))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(json(200, ok_envelope(&confirm_data())))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(json(
            200,
            ok_envelope(&confirm_data().replace(TX_ID, "0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e99")),
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(json(500, err_envelope("INTERNAL_ERROR", "boom")))
        .mount(&server)
        .await;
    let client = Client::builder(server.uri())
        .retry_policy(fast_retries())
        .build()
        .expect("a client");
    let confirm = || {
        ConfirmRequest::builder(TX_ID, "INV-1")
            .build()
            .expect("a request")
    };
    client
        .confirm(confirm())
        .await
        .expect("confirmed on a retry");
    let refused = client
        .confirm(confirm())
        .await
        .expect_err("another transaction");
    assert!(matches!(refused, Error::AnswerMismatch(_)), "{refused:?}");
    let unknown = client.confirm(confirm()).await.expect_err("500s");
    assert_eq!(unknown.outcome(), payments_client::Outcome::Unknown);
    provider.force_flush().expect("flushed");
    let metrics = exporter.get_finished_metrics().expect("metrics");

    let durations = points(&metrics, "http.client.request.duration");
    let attempts: u64 = durations.iter().map(|(_, n)| n).sum();
    let sent = server.received_requests().await.unwrap_or_default().len() as u64;
    assert_eq!(attempts, sent, "one duration per attempt: {durations:?}");
    for (attributes, _) in &durations {
        assert!(
            has(attributes, "http.request.method", "POST"),
            "{attributes:?}"
        );
        assert!(has(attributes, "url.template", "/api/payments/confirm"));
        assert!(has(attributes, "server.address", "127.0.0.1"));
    }
    let failed: u64 = durations
        .iter()
        .filter(|(a, _)| has(a, "error.type", "500") && has(a, "http.response.status_code", "500"))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(failed, sent - 2, "every attempt but the two 200s");
    let count = |name: &str| -> u64 { points(&metrics, name).iter().map(|(_, n)| n).sum() };
    assert_eq!(
        count("payments.client.retries"),
        sent - 3,
        "attempts after the first of each call"
    );
    assert_eq!(count("payments.client.unknown_outcomes"), 1);
    assert_eq!(count("payments.client.refused_answers"), 1);
    let _ = provider.shutdown();
}
