//! The mock's per-request log line ([`log_request`]), written straight to
//! the binary's log when the binary's own log set-up is the subscriber.
//!
//! As an event, the line went through the subscriber's dispatch: the
//! filter, the fmt layer's buffer, a visitor call per field, each `%value`
//! through `Debug` of a `Display` wrapper and `core::fmt`, then the line
//! copied to the writer: about 2.6k instructions of a 21k-instruction
//! status look-up, and 7 % of its throughput (BENCHMARKS.md, "The request
//! line written directly"). When the current subscriber is the one
//! `logging::init_logging` installed with the text format (it carries a
//! [`DirectLines`] layer), the line is written here instead, byte for byte
//! the line the event would have made (`logging/tests.rs` holds the two
//! together). Under any other subscriber (an embedding test's, a JSON
//! log, colours on a terminal, inside a span), it is the event, as before.

use std::fmt;
use std::time::Duration;

/// The fields of one request line (target `payments_mock_server::request`,
/// message `request`).
#[derive(Clone, Copy)]
pub struct RequestLine<'a> {
    /// The request's method.
    pub method: &'a str,
    /// The path as logged (the mock's `ShownPath`: a sandbox's prefix, a
    /// long path cut).
    pub path: &'a dyn fmt::Display,
    /// The answer's status code.
    pub status: u16,
    /// From the request's arrival to its answer.
    pub elapsed: Duration,
    /// The request id sent back in `X-Request-Id`.
    pub request_id: &'a str,
    /// The answer's `errorCode`, or empty.
    pub error_code: &'a str,
    /// The faults injected into the answer (the mock's `X-Mock-Fault`
    /// tokens or a fault rule's kind, as its journal names them), or
    /// empty: then the line has no `fault` field.
    pub fault: &'a str,
    /// The fault rule that injected them, or empty: then the line has no
    /// `fault_rule` field.
    pub fault_rule: &'a str,
}

impl fmt::Debug for RequestLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestLine")
            .field("method", &self.method)
            .field("path", &format_args!("{}", self.path))
            .field("status", &self.status)
            .field("elapsed", &self.elapsed)
            .field("request_id", &self.request_id)
            .field("error_code", &self.error_code)
            .field("fault", &self.fault)
            .field("fault_rule", &self.fault_rule)
            .finish()
    }
}

/// The layer that marks the binary's own subscriber, and writes request
/// lines for it ([`log_request`] finds it with `Dispatch::downcast_ref`).
pub(crate) struct DirectLines {
    /// Writes the whole line; false when it cannot (the event is made).
    pub(crate) write: Box<dyn Fn(&RequestLine<'_>) -> bool + Send + Sync>,
}

/// Logs one request line at INFO: directly when the current subscriber is
/// the binary's text log, as a tracing event otherwise.
pub fn log_request(line: &RequestLine<'_>) {
    if !tracing::enabled!(target: "payments_mock_server::request", tracing::Level::INFO) {
        return;
    }
    if written_directly(line) {
        return;
    }
    // Whole microseconds as milliseconds: a short number, and cheap to
    // write (`logging/`). Exact below 2^53 microseconds (285 years).
    #[allow(clippy::cast_precision_loss)]
    let latency_ms = line.elapsed.as_micros() as f64 / 1000.0;
    // A field only when there is something to say: an answer without a
    // fault logs as it always did.
    match (line.fault, line.fault_rule) {
        ("", _) => tracing::info!(
            target: "payments_mock_server::request",
            method = %line.method,
            path = %line.path,
            status = line.status,
            latency_ms,
            request_id = %line.request_id,
            error_code = line.error_code,
            "request"
        ),
        (fault, "") => tracing::info!(
            target: "payments_mock_server::request",
            method = %line.method,
            path = %line.path,
            status = line.status,
            latency_ms,
            request_id = %line.request_id,
            error_code = line.error_code,
            fault,
            "request"
        ),
        (fault, fault_rule) => tracing::info!(
            target: "payments_mock_server::request",
            method = %line.method,
            path = %line.path,
            status = line.status,
            latency_ms,
            request_id = %line.request_id,
            error_code = line.error_code,
            fault,
            fault_rule,
            "request"
        ),
    }
}

/// Whether the current subscriber is the binary's own and wrote `line`.
fn written_directly(line: &RequestLine<'_>) -> bool {
    tracing::dispatcher::get_default(|dispatch| {
        // Inside a span the default format writes the span's context.
        dispatch.current_span().id().is_none()
            && dispatch
                .downcast_ref::<DirectLines>()
                .is_some_and(|direct| (direct.write)(line))
    })
}
