//! One exchange through the proxy (a request and its answer) as the rules
//! read it: which endpoint of the interface document it hit, and its bodies
//! parsed once, borrowed.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::json::{self, Body, Json, Object, Shape};

/// A request and its answer, whole (bodies up to the judging limit), as the
/// proxy saw them and a recording keeps them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Exchange {
    /// 1 for the first exchange, counting on.
    pub seq: u64,
    /// When the request arrived (real time).
    pub time: DateTime<Utc>,
    /// The request.
    pub request: Message,
    /// The answer: the upstream's, or the proxy's own when the upstream
    /// could not be reached (`UPSTREAM_UNAVAILABLE`).
    pub response: Message,
    /// Milliseconds from the request to the answer's last byte.
    pub duration_ms: f64,
    /// Whether the answer is the proxy's own (the upstream failed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub proxy_answer: bool,
    /// Whether the rules judged it: not when a body was too large to read
    /// whole or compressed, nor the proxy's own answer. `check` and
    /// `--seed-from` honour it, so offline they see what the live proxy saw.
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub judged: bool,
    /// The caller's W3C trace id, from its `traceparent` (CONTRACT section
    /// 21), when it sent one well-formed header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// The id of the caller's span that sent the request, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_id: Option<String>,
}

/// The trace and span id of a request's `traceparent`: one well-formed
/// header, else none (a malformed one is ignored, never an error).
pub(crate) fn traced(headers: &[(String, String)]) -> (Option<String>, Option<String>) {
    let read = payments_serve::trace::TraceParent::from_pairs(
        headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    );
    (read.map(|t| t.trace_id()), read.map(|t| t.span_id()))
}

fn yes() -> bool {
    true
}

/// One side of an exchange.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Message {
    /// The request's method (empty on a response).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub method: String,
    /// The request's path, as sent (empty on a response).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// The request's query, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The response's status (0 on a request).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub status: u16,
    /// Headers in order (lossy UTF-8 values).
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// The body as text (lossy UTF-8); `None` when it was too large to
    /// keep (streamed through unjudged).
    #[serde(default)]
    pub body: Option<String>,
    /// The body's length in bytes; for a body streamed through, the bytes
    /// read before it was (its whole length is not known when the exchange
    /// is judged).
    #[serde(default)]
    pub body_bytes: u64,
    /// The body's bytes were not UTF-8: `body` is their lossy text (each
    /// bad sequence U+FFFD), and the rules read the body as not JSON (RFC
    /// 8259 section 8.1: JSON between systems is UTF-8), whatever that
    /// text reads as. Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub body_not_utf8: bool,
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}

impl Message {
    /// Keeps `bytes` as the whole body: its text (lossy, when the bytes
    /// are not UTF-8: then [`Message::body_not_utf8`]), and its length.
    pub(crate) fn keep_body(&mut self, bytes: &[u8]) {
        self.body_bytes = bytes.len() as u64;
        let (text, not_utf8) = match std::str::from_utf8(bytes) {
            Ok(text) => (text.to_owned(), false),
            Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
        };
        self.body = Some(text);
        self.body_not_utf8 = not_utf8;
    }

    /// Cuts a body longer than `at` bytes there (at a character boundary)
    /// and puts `note` after it, in a buffer of its own: the whole body's
    /// allocation is freed, not kept as spare room behind a short text.
    pub(crate) fn cut_body(&mut self, at: usize, note: &str) {
        if let Some(body) = self.body.as_mut()
            && body.len() > at
        {
            let mut end = at;
            while !body.is_char_boundary(end) {
                end -= 1;
            }
            let mut cut = String::with_capacity(end + note.len());
            cut.push_str(&body[..end]);
            cut.push_str(note);
            *body = cut;
        }
    }

    /// The body's text, when it is whole and UTF-8: what the rules read
    /// (a body that is not UTF-8 is not JSON, whatever its lossy text
    /// reads as).
    fn utf8_body(&self) -> Option<&str> {
        self.body.as_deref().filter(|_| !self.body_not_utf8)
    }

    /// Whether the body was kept whole (not streamed through unjudged).
    pub fn is_whole(&self) -> bool {
        self.body.is_some() || self.body_bytes == 0
    }

    /// The first value of header `name` (any letter case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Which operation of the interface document an exchange is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// `POST /api/payments/initiate` (4.1).
    Initiate,
    /// `POST /api/payments/confirm` (4.2).
    Confirm,
    /// `GET /api/payments/{transactionId}/status` (4.3), the id decoded.
    StatusById(String),
    /// `GET /api/payments/reference/{referenceNo}/status` (4.4).
    StatusByReference(String),
    /// Anything else under `/api/`: the document defines nothing to check.
    Other,
}

impl Endpoint {
    /// The endpoint a method and path (after the upstream's prefix was
    /// taken off, as the application sent it) name: the interface's path
    /// matching (`payments_interface::route`, the mock's too), with the
    /// document's method (a `HEAD` is not judged).
    pub fn of(method: &str, path: &str) -> Self {
        use payments_interface::Endpoint as Operation;
        let Some(route) = payments_interface::route(path) else {
            return Self::Other;
        };
        if route.endpoint.method() != method {
            return Self::Other;
        }
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        match route.endpoint {
            Operation::Initiate => Self::Initiate,
            Operation::Confirm => Self::Confirm,
            Operation::StatusById => Self::StatusById(decode(route.raw)),
            Operation::StatusByReference => Self::StatusByReference(decode(route.raw)),
        }
    }

    /// The interface's operation, unless it is none of them.
    pub fn operation(&self) -> Option<payments_interface::Endpoint> {
        use payments_interface::Endpoint as Operation;
        match self {
            Self::Initiate => Some(Operation::Initiate),
            Self::Confirm => Some(Operation::Confirm),
            Self::StatusById(_) => Some(Operation::StatusById),
            Self::StatusByReference(_) => Some(Operation::StatusByReference),
            Self::Other => None,
        }
    }

    /// The name the report counts exchanges under: the operation's
    /// (`initiate`, `statusById`…), or `other`.
    pub fn name(&self) -> &'static str {
        self.operation()
            .map_or("other", payments_interface::Endpoint::name)
    }

    /// Whether it is one of the two status reads.
    pub fn is_status(&self) -> bool {
        matches!(self, Self::StatusById(_) | Self::StatusByReference(_))
    }
}

/// The envelope of interface section 2.1, read leniently: each field as it
/// came (`None` when missing).
#[derive(Debug, Clone, Copy)]
pub struct Envelope<'a> {
    /// `isSuccess`.
    pub is_success: Option<Json<'a>>,
    /// `errorCode`.
    pub error_code: Option<Json<'a>>,
    /// `message`.
    pub message: Option<Json<'a>>,
    /// What `data` is (its fields are [`Parsed::success_data`]'s).
    pub data: Option<Shape>,
}

impl<'a> Envelope<'a> {
    /// `isSuccess` when it is a boolean.
    pub fn success(&self) -> Option<bool> {
        self.is_success.and_then(Json::as_bool)
    }

    /// `errorCode` when it is a string.
    pub fn code(&self) -> Option<Cow<'a, str>> {
        self.error_code.and_then(Json::as_str)
    }
}

/// An exchange parsed once for every rule: each body read once, borrowed
/// (`json.rs`), the envelope and a success's `data` picked out in the
/// same pass.
#[derive(Debug)]
pub struct Parsed<'a> {
    /// The exchange.
    pub exchange: &'a Exchange,
    /// Its endpoint.
    pub endpoint: Endpoint,
    /// The request body as a JSON object, when it is one.
    pub request: Option<Object<'a>>,
    /// The request body is not JSON (or not an object).
    pub request_not_json: bool,
    /// The response body is JSON.
    pub response_is_json: bool,
    /// The response's envelope, when the body is a JSON object.
    envelope: Option<Envelope<'a>>,
    /// The `data` object of a success answered 200.
    success_data: Option<Object<'a>>,
}

impl<'a> Parsed<'a> {
    /// Parses the bodies of `exchange`.
    pub fn of(exchange: &'a Exchange) -> Self {
        let endpoint = Endpoint::of(&exchange.request.method, &exchange.request.path);
        // No body (a status read) is no object, without a parse that
        // fails; nor is a body that is not UTF-8 (not JSON).
        let request = exchange
            .request
            .utf8_body()
            .filter(|body| !body.is_empty())
            .and_then(|body| match Body::of(body) {
                Body::Object(object) => Some(object),
                _ => None,
            });
        let request_not_json = request.is_none();
        let read = exchange
            .response
            .utf8_body()
            .map_or(Err(()), json::envelope_of);
        let response_is_json = read.is_ok();
        let (envelope, data) = match read {
            Ok(Some(read)) => (
                Some(Envelope {
                    is_success: read.is_success,
                    error_code: read.error_code,
                    message: read.message,
                    data: read.data,
                }),
                read.data_object,
            ),
            _ => (None, None),
        };
        let success =
            envelope.is_some_and(|e| e.success() == Some(true) && exchange.response.status == 200);
        Self {
            exchange,
            endpoint,
            request,
            request_not_json,
            response_is_json,
            envelope,
            success_data: data.filter(|_| success),
        }
    }

    /// The response's envelope, when the body is a JSON object.
    pub fn envelope(&self) -> Option<Envelope<'a>> {
        self.envelope
    }

    /// The HTTP status of the answer.
    pub fn status(&self) -> u16 {
        self.exchange.response.status
    }

    /// A string field of the request body.
    pub fn request_text(&self, field: &str) -> Option<Cow<'a, str>> {
        self.request.as_ref()?.text(field)
    }

    /// The response's `data` object, on a success.
    pub fn success_data(&self) -> Option<&Object<'a>> {
        self.success_data.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_that_is_not_utf8_is_kept_as_lossy_text_and_said_so_in_the_recording() {
        let mut message = Message::default();
        message.keep_body(b"{\"a\":\"\xff\xfe\"}");
        assert_eq!(
            message.body.as_deref(),
            Some("{\"a\":\"\u{fffd}\u{fffd}\"}")
        );
        assert_eq!(message.body_bytes, 10);
        assert!(message.body_not_utf8);
        let line = serde_json::to_value(&message).expect("serializes");
        assert_eq!(line["bodyNotUtf8"], serde_json::json!(true));
        let read: Message = serde_json::from_value(line).expect("reads back");
        assert_eq!(read, message);
        // UTF-8: as it came, and the flag not written.
        message.keep_body("{\"a\":\"\u{fffd}\"}".as_bytes());
        assert!(!message.body_not_utf8);
        let line = serde_json::to_value(&message).expect("serializes");
        assert!(line.get("bodyNotUtf8").is_none(), "{line}");
    }

    #[test]
    fn endpoints_are_named_by_method_and_path() {
        assert_eq!(
            Endpoint::of("POST", "/api/payments/initiate"),
            Endpoint::Initiate
        );
        assert_eq!(
            Endpoint::of("POST", "/api/payments/confirm"),
            Endpoint::Confirm
        );
        assert_eq!(
            Endpoint::of("GET", "/api/payments/abc/status"),
            Endpoint::StatusById("abc".to_owned())
        );
        assert_eq!(
            Endpoint::of("GET", "/api/payments/reference/INV%2F1/status"),
            Endpoint::StatusByReference("INV/1".to_owned())
        );
        assert_eq!(
            Endpoint::of("GET", "/api/payments/a/b/status"),
            Endpoint::Other
        );
        assert_eq!(
            Endpoint::of("PUT", "/api/payments/initiate"),
            Endpoint::Other
        );
        assert_eq!(Endpoint::of("GET", "/api/other"), Endpoint::Other);
    }
}
