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
    /// shown: `[redacted]` in its place. That holds however the path is
    /// spelt around a token (`//pay/{token}` from a proxy that strips a
    /// prefix badly, `/PAY/{token}`, `/Sandboxes/{id}/pay/{token}`): a
    /// segment of a token's shape after a segment `pay` in any case is
    /// hidden with all that follows it. A path longer than
    /// [`MAX_PATH`](Self::MAX_PATH) bytes is cut on a character, then
    /// `…`. Any other path is shown whole, nothing after it.
    ///
    /// ```
    /// use payments_serve::RequestLine;
    ///
    /// assert_eq!(RequestLine::shown_path("/pay/Da6vPJYw"), ("/pay/", "[redacted]"));
    /// assert_eq!(
    ///     RequestLine::shown_path("//PAY/Da6vPJYwBvZFHi471juYGLIVrenoMSk5"),
    ///     ("//PAY/", "[redacted]")
    /// );
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

/// The start of `path` up to its payment page's token, when it is one:
/// what may be shown of it. The rule of [`RequestLine::shown_path`], and
/// the one a span's `url.path` follows.
///
/// The routes' own spelling (`/pay/`, or a sandbox's
/// `/sandboxes/{id}/pay/`) hides whatever follows. Any other spelling is
/// no route, but its token still works: a reverse proxy that strips a
/// prefix badly sends `//pay/{token}`, one that strips none
/// `/mock/pay/{token}`, and a hand-typed address may be `/PAY/{token}` or
/// `/Sandboxes/{id}/pay/{token}`. So a token-shaped segment
/// ([`token_shaped`]) that follows a segment `pay` (in any case, empty
/// segments between them skipped) is hidden too, with all that follows it.
pub(crate) fn before_payment_token(path: &str) -> Option<&str> {
    let page = match path.strip_prefix(SANDBOXES) {
        Some(rest) => rest.find('/').map(|end| SANDBOXES.len() + end),
        None => Some(0),
    };
    if let Some(page) = page
        && path[page..].starts_with(PAYMENT_PAGES)
    {
        return Some(&path[..page + PAYMENT_PAGES.len()]);
    }
    before_misspelt_token(path)
}

/// [`before_payment_token`] for a path the routes do not spell: the start
/// of `path` up to a token-shaped segment that follows a segment `pay` in
/// any case. One pass over the path's bytes, no allocation: every request
/// that is no payment page (an API call's path) goes through it.
fn before_misspelt_token(path: &str) -> Option<&str> {
    let mut after_pay = false;
    let mut start = 0;
    for segment in path.split('/') {
        if !segment.is_empty() {
            if after_pay && token_shaped(segment) {
                return Some(&path[..start]);
            }
            after_pay = segment.eq_ignore_ascii_case("pay");
        }
        start += segment.len() + 1;
    }
    None
}

/// How long a payment page's token is: 32 ASCII letters and digits (the
/// mock's `domain::redirect::TOKEN_LEN`; this crate is below the mock's).
const TOKEN_LEN: usize = 32;

/// Whether `segment` has a payment page token's shape: [`TOKEN_LEN`] ASCII
/// letters and digits, any of them percent-encoded (`%41` is `A`: a path
/// the payer's page decodes still names the token).
fn token_shaped(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    if bytes.len() < TOKEN_LEN || bytes.len() > 3 * TOKEN_LEN {
        return false;
    }
    let (mut at, mut count) = (0, 0);
    while at < bytes.len() {
        let byte = if bytes[at] == b'%' {
            let Some(byte) = bytes.get(at + 1..at + 3).and_then(hex_byte) else {
                return false;
            };
            at += 3;
            byte
        } else {
            at += 1;
            bytes[at - 1]
        };
        if !byte.is_ascii_alphanumeric() {
            return false;
        }
        count += 1;
    }
    count == TOKEN_LEN
}

/// The byte two hex digits write.
fn hex_byte(digits: &[u8]) -> Option<u8> {
    let digit = |d: u8| char::from(d).to_digit(16);
    let value = digit(digits[0])? * 16 + digit(digits[1])?;
    u8::try_from(value).ok()
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
mod tests;
