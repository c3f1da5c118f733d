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

impl RequestLine<'_> {
    /// Longest path a log line writes, in bytes: the mock's request line
    /// and the proxy's exchange line cut a longer one (a span's `url.path`
    /// has the same bound).
    pub const MAX_PATH: usize = 256;

    /// How a log line shows a request's `path`: the part shown, and what
    /// follows it. A payment page's token (`/pay/{token}`, or
    /// `/sandboxes/{id}/pay/{token}`), the payer's capability, is never
    /// shown: `[redacted]` in its place. A path longer than
    /// [`MAX_PATH`](Self::MAX_PATH) bytes is cut on a character, then
    /// `…`. Any other path is shown whole, nothing after it.
    ///
    /// ```
    /// use payments_serve::RequestLine;
    ///
    /// assert_eq!(RequestLine::shown_path("/pay/Da6vPJYw"), ("/pay/", "[redacted]"));
    /// assert_eq!(RequestLine::shown_path("/api/payments/x"), ("/api/payments/x", ""));
    /// let long = "/".repeat(300);
    /// assert_eq!(RequestLine::shown_path(&long), (&long[..256], "…"));
    /// ```
    #[must_use]
    pub fn shown_path(path: &str) -> (&str, &'static str) {
        if let Some(page) = before_payment_token(path) {
            return (cut(page, Self::MAX_PATH), "[redacted]");
        }
        match cut(path, Self::MAX_PATH) {
            shown if shown.len() < path.len() => (shown, "…"),
            shown => (shown, ""),
        }
    }
}

/// `text` cut at `max` bytes, on a character.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Where a payment page is served: its path's last segment is its token,
/// the payer's capability, which neither a log line nor a span shows.
const PAYMENT_PAGES: &str = "/pay/";

/// Where sandboxes are served (CONTRACT section 19).
pub(crate) const SANDBOXES: &str = "/sandboxes/";

/// The start of `path` up to its payment page's token (`/pay/`, or a
/// sandbox's `/sandboxes/{id}/pay/`), when it is one: what may be shown
/// of it. The rule of [`RequestLine::shown_path`], and the one a span's
/// `url.path` follows.
pub(crate) fn before_payment_token(path: &str) -> Option<&str> {
    let page = match path.strip_prefix(SANDBOXES) {
        Some(rest) => SANDBOXES.len() + rest.find('/')?,
        None => 0,
    };
    path[page..]
        .starts_with(PAYMENT_PAGES)
        .then(|| &path[..page + PAYMENT_PAGES.len()])
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A payment page's token, at the root or under a sandbox, is never
    /// shown, however long; another path is cut at the bound.
    #[test]
    fn a_logged_path_hides_a_payment_pages_token_and_is_cut() {
        for (path, shown) in [
            ("/pay/TOKEN", Some("/pay/")),
            ("/pay/", Some("/pay/")),
            (
                "/sandboxes/2dca662f/pay/TOKEN",
                Some("/sandboxes/2dca662f/pay/"),
            ),
            ("/sandboxes/x/pay/", Some("/sandboxes/x/pay/")),
            ("/payments/x", None),
            ("/api/payments/pay/status", None),
            ("/sandboxes/x/api/payments/initiate", None),
            ("/sandboxes/pay/TOKEN", None),
            ("/sandboxes/", None),
            ("/x/pay/TOKEN", None),
        ] {
            assert_eq!(before_payment_token(path), shown, "{path}");
            match shown {
                Some(page) => {
                    assert_eq!(RequestLine::shown_path(path), (page, "[redacted]"));
                }
                None => assert_eq!(RequestLine::shown_path(path), (path, "")),
            }
        }
        let token = format!("/pay/{}", "T".repeat(400));
        assert_eq!(RequestLine::shown_path(&token), ("/pay/", "[redacted]"));
        let long = format!("/api/payments/x{}/status", "\u{e9}".repeat(200));
        let (shown, cut) = RequestLine::shown_path(&long);
        assert_eq!((shown.len(), cut), (255, "…"));
        assert!(long.starts_with(shown));
        let exact = "/".repeat(RequestLine::MAX_PATH);
        assert_eq!(RequestLine::shown_path(&exact), (exact.as_str(), ""));
    }
}
