//! One exchange through the proxy (a request and its answer) as the rules
//! read it: which endpoint of the interface document it hit, and its bodies
//! parsed once.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}

impl Message {
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
    pub is_success: Option<&'a Value>,
    /// `errorCode`.
    pub error_code: Option<&'a Value>,
    /// `message`.
    pub message: Option<&'a Value>,
    /// `data`.
    pub data: Option<&'a Value>,
}

impl<'a> Envelope<'a> {
    fn of(object: &'a Map<String, Value>) -> Self {
        Self {
            is_success: object.get("isSuccess"),
            error_code: object.get("errorCode"),
            message: object.get("message"),
            data: object.get("data"),
        }
    }

    /// `isSuccess` when it is a boolean.
    pub fn success(&self) -> Option<bool> {
        self.is_success.and_then(Value::as_bool)
    }

    /// `errorCode` when it is a string.
    pub fn code(&self) -> Option<&'a str> {
        self.error_code.and_then(Value::as_str)
    }

    /// `data` when it is an object.
    pub fn data_object(&self) -> Option<&'a Map<String, Value>> {
        self.data.and_then(Value::as_object)
    }
}

/// An exchange parsed once for every rule.
#[derive(Debug)]
pub struct Parsed<'a> {
    /// The exchange.
    pub exchange: &'a Exchange,
    /// Its endpoint.
    pub endpoint: Endpoint,
    /// The request body as a JSON object, when it is one.
    pub request: Option<Map<String, Value>>,
    /// The request body is not JSON (or not an object).
    pub request_not_json: bool,
    /// The response body as JSON, when it is JSON.
    pub response: Option<Value>,
}

impl<'a> Parsed<'a> {
    /// Parses the bodies of `exchange`.
    pub fn of(exchange: &'a Exchange) -> Self {
        let endpoint = Endpoint::of(&exchange.request.method, &exchange.request.path);
        let body = exchange.request.body.as_deref().unwrap_or("");
        let request = serde_json::from_str::<Value>(body).ok();
        let request_not_json = !matches!(request, Some(Value::Object(_)));
        let request = match request {
            Some(Value::Object(map)) => Some(map),
            _ => None,
        };
        let response = exchange
            .response
            .body
            .as_deref()
            .and_then(|b| serde_json::from_str::<Value>(b).ok());
        Self {
            exchange,
            endpoint,
            request,
            request_not_json,
            response,
        }
    }

    /// The response's envelope, when the body is a JSON object.
    pub fn envelope(&self) -> Option<Envelope<'_>> {
        self.response.as_ref()?.as_object().map(Envelope::of)
    }

    /// The HTTP status of the answer.
    pub fn status(&self) -> u16 {
        self.exchange.response.status
    }

    /// A string field of the request body.
    pub fn request_text(&self, field: &str) -> Option<&str> {
        self.request.as_ref()?.get(field)?.as_str()
    }

    /// The response's `data` object, on a success.
    pub fn success_data(&self) -> Option<&Map<String, Value>> {
        let envelope = self.envelope()?;
        if envelope.success() == Some(true) && self.status() == 200 {
            envelope.data_object()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
