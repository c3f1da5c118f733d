//! [`Calls`]: a span of kind client for each call a server makes while
//! serving a request (the contract proxy's to its upstream), a child of
//! the request's server span, by the OpenTelemetry HTTP client
//! conventions: named by the method, with `http.request.method`,
//! `server.address`, `server.port`, `url.full` (no query, a payment
//! page's token left out, and the path as the server gives it: the
//! contract proxy's, as the request's server span shows it,
//! [`super::ShownPath`]), `http.response.status_code`, and `error.type`
//! with an error status for a 4xx, a 5xx or a failure. The called service's
//! server span is then this span's child, so a trace shows the time spent
//! waiting on the call apart from the server's own.

use opentelemetry::KeyValue;
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceState, Tracer as _};
use opentelemetry_sdk::trace::{SdkTracer, Span};

use crate::trace::{Call, CallSpan, StartCall, TraceParent};

/// Opens client spans on the export's tracer.
pub(super) struct Calls(pub(super) SdkTracer);

impl StartCall for Calls {
    fn start(&self, call: Call<'_>) -> Box<dyn CallSpan> {
        let method = super::spans::known_method(call.method);
        let path = match super::spans::before_token(call.path) {
            Some(page) => std::borrow::Cow::Owned(format!("{page}REDACTED")),
            None => std::borrow::Cow::Borrowed(call.path),
        };
        let mut attributes = vec![
            KeyValue::new("http.request.method", method),
            KeyValue::new("server.address", call.host.to_owned()),
            KeyValue::new("server.port", i64::from(call.port)),
            KeyValue::new(
                "url.full",
                format!("{}://{}:{}{}", call.scheme, call.host, call.port, path),
            ),
        ];
        if method == "_OTHER" {
            attributes.push(KeyValue::new(
                "http.request.method_original",
                call.method.as_str().chars().take(32).collect::<String>(),
            ));
        }
        let name = if method == "_OTHER" { "HTTP" } else { method };
        // The server span is this process's own, not a remote one.
        let parent = super::spans::under(&call.parent, false, TraceState::default());
        let builder = self
            .0
            .span_builder(name)
            .with_kind(SpanKind::Client)
            .with_attributes(attributes);
        let span = self.0.build_with_context(builder, &parent);
        let sent = super::spans::traceparent_of(span.span_context());
        Box::new(Open(Some(span), sent))
    }
}

/// A call's span until it is answered or fails, and its `traceparent`.
struct Open(Option<Span>, Option<TraceParent>);

impl CallSpan for Open {
    fn traceparent(&self) -> Option<TraceParent> {
        self.1
    }

    fn answered(mut self: Box<Self>, status: u16) {
        if let Some(mut span) = self.0.take() {
            span.set_attribute(KeyValue::new(
                "http.response.status_code",
                i64::from(status),
            ));
            // A client span's 4xx is an error too (the conventions).
            if status >= 400 {
                span.set_attribute(KeyValue::new("error.type", status.to_string()));
                span.set_status(Status::error(""));
            }
            span.end();
        }
    }

    fn failed(mut self: Box<Self>, error_type: &'static str) {
        if let Some(mut span) = self.0.take() {
            span.set_attribute(KeyValue::new("error.type", error_type));
            span.set_status(Status::error(""));
            span.end();
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        if let Some(mut span) = self.0.take() {
            span.set_attribute(KeyValue::new("error.type", "cancelled"));
            span.set_status(Status::error("the call was given up before an answer"));
            span.end();
        }
    }
}
