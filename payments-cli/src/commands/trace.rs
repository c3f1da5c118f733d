//! `-v`'s trace ids (CONTRACT section 21): each call's span starts a trace
//! of its own, and the client sends it as the W3C `traceparent`.
//!
//! The CLI exports no span, so it takes no OpenTelemetry SDK (whose ids
//! would need `rand` 0.9 beside the workspace's 0.10): a new trace and span
//! id from the system's random source, set as the call span's parent, and
//! the W3C header written from the span context (the header's form is the
//! specification's, `payments_serve::trace` reads it back in the mock).

use opentelemetry::Context;
use opentelemetry::propagation::{
    Extractor, Injector, TextMapPropagator, text_map_propagator::FieldIter,
};
use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// The header the propagator writes.
const HEADER: &str = "traceparent";

/// Gives `span` a new trace: a random trace id and span id as its remote
/// parent, sampled. Without random bytes (never on a working system) the
/// span keeps no trace and nothing is sent.
pub(super) fn begin(span: &tracing::Span) {
    if let Some(parent) = fresh() {
        let _ = span.set_parent(Context::new().with_remote_span_context(parent));
    }
}

/// A new trace for a request the CLI sends without the client (`tail`'s
/// pages): its trace id as `-v` shows it, and the `traceparent` to send.
pub(super) fn header() -> Option<(String, String)> {
    let ids = fresh()?;
    let mut headers = std::collections::HashMap::new();
    W3c.inject_context(
        &Context::new().with_remote_span_context(ids.clone()),
        &mut headers,
    );
    let value = headers.remove(HEADER)?;
    Some((ids.trace_id().to_string(), value))
}

/// A random trace id and span id, sampled; `None` without random bytes.
fn fresh() -> Option<SpanContext> {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).ok()?;
    let mut trace = [0u8; 16];
    let mut id = [0u8; 8];
    trace.copy_from_slice(&bytes[..16]);
    id.copy_from_slice(&bytes[16..]);
    let ids = SpanContext::new(
        TraceId::from_bytes(trace),
        SpanId::from_bytes(id),
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    ids.is_valid().then_some(ids)
}

/// The W3C Trace Context propagator, writing only (`traceparent`).
#[derive(Debug)]
pub(super) struct W3c;

impl TextMapPropagator for W3c {
    fn inject_context(&self, cx: &Context, injector: &mut dyn Injector) {
        let span = cx.span();
        let ids = span.span_context();
        if ids.is_valid() {
            injector.set(
                HEADER,
                format!(
                    "00-{}-{}-{:02x}",
                    ids.trace_id(),
                    ids.span_id(),
                    ids.trace_flags().to_u8()
                ),
            );
        }
    }

    fn extract_with_context(&self, cx: &Context, _: &dyn Extractor) -> Context {
        cx.clone()
    }

    fn fields(&self) -> FieldIter<'_> {
        FieldIter::new(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn the_header_is_the_w3c_form_of_the_span_context() {
        let ids = SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").expect("hex"),
            SpanId::from_hex("00f067aa0ba902b7").expect("hex"),
            TraceFlags::SAMPLED,
            true,
            TraceState::default(),
        );
        let cx = Context::new().with_remote_span_context(ids);
        let mut headers: HashMap<String, String> = HashMap::new();
        W3c.inject_context(&cx, &mut headers);
        assert_eq!(
            headers.get(HEADER).map(String::as_str),
            Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        );
        let mut none: HashMap<String, String> = HashMap::new();
        W3c.inject_context(&Context::new(), &mut none);
        assert!(none.is_empty(), "no trace, no header");
    }
}
