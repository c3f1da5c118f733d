//! OpenTelemetry (feature `opentelemetry`, CONTRACT section 21): each
//! attempt carries the W3C trace context of its own span, so the service
//! (and the contract proxy in front of it) can continue the application's
//! trace.
//!
//! The client's spans are `tracing` spans, named and attributed by
//! OpenTelemetry's HTTP client conventions; an application that installs
//! `tracing-opentelemetry`'s layer sees them as OpenTelemetry spans. This
//! module reads the current span's OpenTelemetry context through that
//! layer and writes it with the application's global propagator (set
//! `opentelemetry::global::set_text_map_propagator` to the W3C
//! `TraceContextPropagator`): `traceparent` and `tracestate`.

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram};
use opentelemetry::propagation::Injector;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// A request's headers as the propagator writes them.
struct Headers<'a>(&'a mut HeaderMap);

impl Injector for Headers<'_> {
    fn set(&mut self, key: &str, value: String) {
        // A propagator's header that is not a valid header is left out
        // rather than sent broken.
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(key.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            self.0.insert(name, value);
        }
    }
}

/// Writes the current span's trace context on `headers`, with the global
/// propagator (none is written while the application has set none, or
/// the span is not recorded by an OpenTelemetry layer).
pub(crate) fn inject(headers: &mut HeaderMap) {
    let context = tracing::Span::current().context();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut Headers(headers));
    });
}

/// The client's instruments, made from the global meter provider when the
/// client is built (set the provider first): no-ops until one is set.
#[derive(Debug, Clone)]
pub(crate) struct Metrics {
    /// `http.client.request.duration`: seconds per attempt, by the HTTP
    /// client conventions' attributes.
    duration: Histogram<f64>,
    /// `payments.client.retries`: attempts made again.
    retries: Counter<u64>,
    /// `payments.client.unknown_outcomes`: calls that ended not knowing
    /// whether the service carried them out.
    unknown: Counter<u64>,
    /// `payments.client.refused_answers`: answers the answer guard refused
    /// (about another transaction or request).
    refused: Counter<u64>,
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let meter = opentelemetry::global::meter("payments-client");
        Self {
            duration: meter
                .f64_histogram("http.client.request.duration")
                .with_unit("s")
                .with_description("Duration of HTTP client requests.")
                .with_boundaries(vec![
                    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
                ])
                .build(),
            retries: meter
                .u64_counter("payments.client.retries")
                .with_description("Attempts the client made again after a retryable failure.")
                .build(),
            unknown: meter
                .u64_counter("payments.client.unknown_outcomes")
                .with_description(
                    "Calls that ended without knowing whether the service carried them out.",
                )
                .build(),
            refused: meter
                .u64_counter("payments.client.refused_answers")
                .with_description("Answers refused as about another transaction or request.")
                .build(),
        }
    }

    /// One attempt of `template` to `server:port`, `seconds` long, answered
    /// `status` or failed as `error`.
    pub(crate) fn attempt(
        &self,
        attempt: Attempt<'_>,
        seconds: f64,
        status: Option<u16>,
        error: Option<&str>,
    ) {
        let mut attributes = vec![
            KeyValue::new("http.request.method", attempt.method),
            KeyValue::new("server.address", attempt.server.to_owned()),
            KeyValue::new("server.port", i64::from(attempt.port)),
            KeyValue::new("url.template", attempt.template),
        ];
        if let Some(status) = status {
            attributes.push(KeyValue::new(
                "http.response.status_code",
                i64::from(status),
            ));
        }
        if let Some(error) = error {
            attributes.push(KeyValue::new("error.type", error.to_owned()));
        }
        self.duration.record(seconds, &attributes);
    }

    /// A retry of `template`.
    pub(crate) fn retry(&self, template: &'static str) {
        self.retries
            .add(1, &[KeyValue::new("url.template", template)]);
    }

    /// How a call of `call` ended: `outcome` as its span says it.
    pub(crate) fn finished(&self, call: &'static str, outcome: &'static str) {
        let attributes = [KeyValue::new("payments.call", call)];
        match outcome {
            "unknown" => self.unknown.add(1, &attributes),
            "mismatch" => self.refused.add(1, &attributes),
            _ => {}
        }
    }
}

/// What a metric says of an attempt.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attempt<'a> {
    pub method: &'static str,
    pub server: &'a str,
    pub port: u16,
    pub template: &'static str,
}
