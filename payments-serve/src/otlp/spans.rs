//! [`ServerSpans`]: a span of kind server around each request a
//! connection serves, by the OpenTelemetry HTTP server conventions.
//!
//! Named `{method} {http.route}` (`POST /api/payments/initiate`,
//! `GET /api/payments/{transactionId}/status`), or the method alone where
//! no route of the interface matched. Attributes: `http.request.method`,
//! `http.route`, `url.path`, `url.scheme`, `server.address` and
//! `server.port` (the `Host` the caller sent), `http.response.status_code`,
//! `error.type` (a 5xx's status, or `aborted` when no answer was sent),
//! and `payments.error_code` and `payments.fault` where the server named
//! them. Never a header's value, a body, a query or a payment page's path,
//! and `url.path` with the secrets the server names replaced
//! ([`ShowPath`]; by default the credentials the request carries,
//! [`RequestSecrets`]). A span opens before the request's body is read:
//! what [`ShowPath`] is given is the request's head, so a secret only its
//! body carries is not known to it.

use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::{Method, Request, header};
use axum::response::Response;
use opentelemetry::trace::{
    Span as _, SpanContext, SpanId, SpanKind, Status, TraceContextExt as _, TraceFlags, TraceId,
    TraceState, Tracer as _,
};
use opentelemetry::{Context, KeyValue, StringValue};
use opentelemetry_sdk::trace::{SdkTracer, Span};

use crate::ErrorCodeTag;
use crate::request_log::{SANDBOXES, cut};
use crate::trace::{CallSpans, InjectedFault, ServingSpan, TraceParent, UnansweredFault};
pub use shown::{RequestSecrets, SHOWN_MINIMUM, ShowPath, ShownPath, redacted_path};

mod shown;

/// Longest `url.path` written (the request line's, [`RequestLine::MAX_PATH`]);
/// a longer path is cut at a character.
const MAX_PATH: usize = crate::RequestLine::MAX_PATH;

/// The start of `path` up to its payment page's token, the payer's
/// capability, when it is one: what may be shown of it (the request
/// line's rule).
pub(super) use crate::request_log::before_payment_token as before_token;

/// One connection's service with a server span around each request
/// ([`SpanExport::spans`](super::SpanExport::spans)).
#[derive(Debug, Clone)]
pub struct ServerSpans<S> {
    inner: S,
    tracer: SdkTracer,
    scheme: &'static str,
    calls: Option<CallSpans>,
    /// What `url.path` shows.
    show: Arc<dyn ShowPath>,
    last_host: Arc<LastHost>,
}

impl<S> ServerSpans<S> {
    pub(super) fn new(
        inner: S,
        tracer: SdkTracer,
        https: bool,
        calls: Option<CallSpans>,
        show: Arc<dyn ShowPath>,
    ) -> Self {
        Self {
            inner,
            tracer,
            scheme: if https { "https" } else { "http" },
            calls,
            show,
            last_host: Arc::default(),
        }
    }

    /// The span of `req`, a child of its `traceparent` (remote) when it
    /// has one well-formed, else the root of a new trace; and its path as
    /// the span shows it.
    fn open<'r, B>(&self, req: &'r Request<B>) -> (Span, Cow<'r, str>) {
        let method = known_method(req.method());
        let path = req.uri().path();
        let route = route_of(path);
        let name: Cow<'static, str> = match (&route, method) {
            (Some(Cow::Borrowed(route)), method) => match known_name(method, route) {
                Some(name) => Cow::Borrowed(name),
                None => Cow::Owned(format!("{method} {route}")),
            },
            (Some(route), _) => Cow::Owned(format!("{method} {route}")),
            (None, "_OTHER") => Cow::Borrowed("HTTP"),
            (None, method) => Cow::Borrowed(method),
        };
        let mut attributes = Vec::with_capacity(8);
        attributes.push(KeyValue::new("http.request.method", method));
        if method == "_OTHER" {
            attributes.push(KeyValue::new(
                "http.request.method_original",
                cut(req.method().as_str(), 32).to_owned(),
            ));
        }
        if let Some(route) = route {
            attributes.push(KeyValue::new("http.route", route));
        }
        let shown = match before_token(path) {
            // A payment page's path is its token: none of it is shown.
            Some(page) => Cow::Borrowed(page),
            None => {
                let shown = self.show.shown(req.method(), req.uri(), req.headers());
                attributes.push(KeyValue::new("url.path", cut(&shown, MAX_PATH).to_owned()));
                shown
            }
        };
        attributes.push(KeyValue::new("url.scheme", self.scheme));
        if let Some((host, port)) = self.last_host.of(req) {
            attributes.push(KeyValue::new("server.address", host));
            if let Some(port) = port {
                attributes.push(KeyValue::new("server.port", i64::from(port)));
            }
        }
        let parent = match TraceParent::from_headers(req.headers()) {
            Some(caller) => under(&caller, true, trace_state(req.headers())),
            None => Context::new(),
        };
        let builder = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attributes);
        (self.tracer.build_with_context(builder, &parent), shown)
    }
}

impl<S, B> hyper::service::Service<Request<B>> for ServerSpans<S>
where
    S: hyper::service::Service<Request<B>, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn call(&self, mut req: Request<B>) -> Self::Future {
        let (span, shown) = self.open(&req);
        let shown = (self.calls.is_some()).then(|| ShownPath(shown.into()));
        if let Some(serving) = traceparent_of(span.span_context()) {
            req.extensions_mut().insert(ServingSpan(serving));
            if let (Some(calls), Some(shown)) = (&self.calls, shown) {
                req.extensions_mut().insert(calls.clone());
                req.extensions_mut().insert(shown);
            }
        }
        let unanswered = UnansweredFault::default();
        req.extensions_mut().insert(unanswered.clone());
        let answer = self.inner.call(req);
        Box::pin(async move {
            let mut open = Open(Some(span), unanswered);
            let Ok(response) = answer.await;
            open.close(&response);
            Ok(response)
        })
    }
}

/// A context whose current span is `parent` (the caller's, `remote`; or
/// this process's own server span), carrying `state`: what a new span is
/// made under.
pub(super) fn under(parent: &TraceParent, remote: bool, state: TraceState) -> Context {
    Context::new().with_remote_span_context(SpanContext::new(
        TraceId::from_bytes(parent.trace_bytes()),
        SpanId::from_bytes(parent.span_bytes()),
        if parent.sampled() {
            TraceFlags::SAMPLED
        } else {
            TraceFlags::default()
        },
        remote,
        state,
    ))
}

/// The `traceparent` a span sends on (`None` for a span without valid
/// ids).
pub(super) fn traceparent_of(context: &SpanContext) -> Option<TraceParent> {
    TraceParent::from_bytes(
        context.trace_id().to_bytes(),
        context.span_id().to_bytes(),
        context.is_sampled(),
    )
}

/// The caller's W3C `tracestate` (its headers joined, as the
/// recommendation lets a list be split over several), carried by its span
/// as the conventions ask; a malformed or oversized one is ignored, never
/// an error.
fn trace_state(headers: &axum::http::HeaderMap) -> TraceState {
    /// Longer than the recommendation's 512 characters by far: a header
    /// this long is no list a tracer wrote.
    const MAX: usize = 8 * 1024;
    let mut joined = String::new();
    for value in headers.get_all("tracestate") {
        let Ok(text) = value.to_str() else {
            return TraceState::default();
        };
        if joined.len() + text.len() >= MAX {
            return TraceState::default();
        }
        if !joined.is_empty() {
            joined.push(',');
        }
        joined.push_str(text);
    }
    if joined.is_empty() {
        return TraceState::default();
    }
    list_members(&joined)
        .and_then(|members| TraceState::from_key_value(members).ok())
        .unwrap_or_default()
}

/// The members of a W3C `tracestate` list: split at commas with the
/// optional white space around them, empty members skipped (the
/// recommendation allows both); `None` for a list it rules out: a member
/// without `=`, a key twice, or more than 32 members. Keys and values are
/// then checked by [`TraceState::from_key_value`].
fn list_members(list: &str) -> Option<Vec<(&str, &str)>> {
    /// The most members a list may hold.
    const MAX_MEMBERS: usize = 32;
    let mut members: Vec<(&str, &str)> = Vec::new();
    for member in list.split(',') {
        let member = member.trim_matches([' ', '\t']);
        if member.is_empty() {
            continue;
        }
        let (key, value) = member.split_once('=')?;
        if members.len() == MAX_MEMBERS || members.iter().any(|(k, _)| *k == key) {
            return None;
        }
        members.push((key, value));
    }
    Some(members)
}

/// A request's span until its answer: ended with the answer's status, or,
/// when the answer is never sent (the connection closed first, an
/// injected reset), ended on drop as `aborted`, with the fault the server
/// named, if it named one.
struct Open(Option<Span>, UnansweredFault);

impl Open {
    fn close(&mut self, response: &Response) {
        let Some(mut span) = self.0.take() else {
            return;
        };
        let status = response.status();
        span.set_attribute(KeyValue::new(
            "http.response.status_code",
            i64::from(status.as_u16()),
        ));
        if status.is_server_error() {
            span.set_attribute(KeyValue::new("error.type", status.as_str().to_owned()));
            span.set_status(Status::error(""));
        }
        if let Some(code) = response.extensions().get::<ErrorCodeTag>() {
            span.set_attribute(KeyValue::new("payments.error_code", code.0.as_str()));
        }
        if let Some(fault) = response.extensions().get::<InjectedFault>() {
            span.set_attribute(KeyValue::new("payments.fault", fault.0.clone()));
        }
        span.end();
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        if let Some(mut span) = self.0.take() {
            span.set_attribute(KeyValue::new("error.type", "aborted"));
            if let Some(fault) = self.1.named() {
                span.set_attribute(KeyValue::new("payments.fault", fault.to_owned()));
            }
            span.set_status(Status::error("no answer was sent"));
            span.end();
        }
    }
}

/// The names of the interface's operations with the methods they take:
/// the hot paths' span names, written once instead of per request.
fn known_name(method: &str, route: &str) -> Option<&'static str> {
    use payments_interface::Endpoint;
    let endpoint = Endpoint::ALL.into_iter().find(|e| e.template() == route)?;
    Some(match (method, endpoint) {
        ("POST", Endpoint::Initiate) => "POST /api/payments/initiate",
        ("POST", Endpoint::Confirm) => "POST /api/payments/confirm",
        ("GET", Endpoint::StatusById) => "GET /api/payments/{transactionId}/status",
        ("GET", Endpoint::StatusByReference) => "GET /api/payments/reference/{referenceNo}/status",
        _ => return None,
    })
}

/// The method as the conventions name it: one of the nine of RFC 9110
/// and RFC 5789, or `_OTHER`.
pub(super) fn known_method(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::CONNECT => "CONNECT",
        Method::OPTIONS => "OPTIONS",
        Method::TRACE => "TRACE",
        Method::PATCH => "PATCH",
        _ => "_OTHER",
    }
}

/// The interface's route template of `path` (`http.route`): the four
/// operations of `payments_interface`, at the root or in a sandbox
/// (`/sandboxes/{sandboxId}/api/…`); none for any other path.
///
/// ```
/// use payments_serve::otlp::route_of;
///
/// assert_eq!(
///     route_of("/api/payments/5f0c/status").as_deref(),
///     Some("/api/payments/{transactionId}/status")
/// );
/// assert_eq!(
///     route_of("/sandboxes/0198/api/payments/initiate").as_deref(),
///     Some("/sandboxes/{sandboxId}/api/payments/initiate")
/// );
/// assert_eq!(route_of("/_mock/health"), None);
/// ```
pub fn route_of(path: &str) -> Option<Cow<'static, str>> {
    if let Some(routed) = payments_interface::route(path) {
        return Some(Cow::Borrowed(routed.endpoint.template()));
    }
    let rest = path.strip_prefix(SANDBOXES)?;
    let tail = &rest[rest.find('/')?..];
    let routed = payments_interface::route(tail)?;
    Some(Cow::Owned(format!(
        "{SANDBOXES}{{sandboxId}}{}",
        routed.endpoint.template()
    )))
}

/// The `Host` of a connection's last request and what [`host_and_port`]
/// read in it: a connection's requests nearly always name one host, so it
/// is read (and its text allocated) once, not per request.
#[derive(Debug, Default)]
struct LastHost(Mutex<Option<(Box<str>, Option<HostPort>)>>);

/// `server.address` and `server.port`.
type HostPort = (StringValue, Option<u16>);

impl LastHost {
    /// `server.address` and `server.port` of `req`.
    fn of<B>(&self, req: &Request<B>) -> Option<HostPort> {
        let authority = authority_of(req)?;
        let mut last = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((seen, read)) = last.as_ref()
            && **seen == *authority
        {
            return read.clone();
        }
        let read = host_and_port(authority)
            .map(|(host, port)| (StringValue::from(Arc::<str>::from(host)), port));
        *last = Some((authority.into(), read.clone()));
        read
    }
}

/// What the caller asked for: its `Host`, or the request target's
/// authority.
fn authority_of<B>(req: &Request<B>) -> Option<&str> {
    match req.uri().authority() {
        Some(authority) => Some(authority.as_str()),
        None => req.headers().get(header::HOST)?.to_str().ok(),
    }
}

/// The host and port in `authority` (see [`authority_of`]), when it is
/// a well-formed one.
fn host_and_port(authority: &str) -> Option<(&str, Option<u16>)> {
    // Read in place: parsing it as an `Authority` copied it first.
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => (host, Some(port.parse::<u16>().ok()?)),
        _ => (authority, None),
    };
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.strip_suffix(']')?,
        None if host.contains(':') => return None,
        None => host,
    };
    let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '%');
    if host.is_empty() || !host.chars().all(valid) {
        return None;
    }
    Some((cut(host, MAX_PATH), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tracestate_list_is_read_as_the_recommendation_writes_it() {
        let read = |list: &str| {
            let mut headers = axum::http::HeaderMap::new();
            headers.insert("tracestate", list.parse().expect("a header value"));
            trace_state(&headers).header()
        };
        assert_eq!(read("a=1,b=2"), "a=1,b=2");
        // Empty members and white space around the commas are allowed.
        assert_eq!(read("a=1,,b=2"), "a=1,b=2");
        assert_eq!(read("a=1 , \tb=2, "), "a=1,b=2");
        assert_eq!(read("vendor@tenant=x"), "vendor@tenant=x");
        // A key twice, more than 32 members, no `=`, a bad key: ignored.
        assert_eq!(read("a=1,a=2"), "");
        let many: Vec<String> = (0..33).map(|n| format!("k{n}=v")).collect();
        assert_eq!(read(&many.join(",")), "");
        let most: Vec<String> = (0..32).map(|n| format!("k{n}=v")).collect();
        assert_eq!(read(&most.join(",")), most.join(","));
        assert_eq!(read("a=1,b"), "");
        assert_eq!(read("A=1"), "");
    }

    #[test]
    fn routes_are_the_interfaces_templates() {
        for (path, route) in [
            ("/api/payments/initiate", Some("/api/payments/initiate")),
            ("/api/payments/confirm", Some("/api/payments/confirm")),
            (
                "/api/payments/abc/status",
                Some("/api/payments/{transactionId}/status"),
            ),
            (
                "/api/payments/reference/R-1/status",
                Some("/api/payments/reference/{referenceNo}/status"),
            ),
            (
                "/sandboxes/x/api/payments/confirm",
                Some("/sandboxes/{sandboxId}/api/payments/confirm"),
            ),
            ("/sandboxes/x", None),
            ("/sandboxes/", None),
            ("/api/payments/a/b/c", None),
            ("/_mock/requests", None),
            ("/", None),
        ] {
            assert_eq!(route_of(path).as_deref(), route, "{path}");
        }
    }

    #[test]
    fn long_text_is_cut_at_a_character() {
        assert_eq!(cut("abc", 5), "abc");
        assert_eq!(cut("abcdef", 3), "abc");
        assert_eq!(cut("aé", 2), "a");
    }

    #[test]
    fn the_host_comes_from_the_host_header() {
        // One connection's cache for every request below: a request whose
        // `Host` differs from the one before is read anew.
        let last = LastHost::default();
        let read = |host: &str| {
            let req = Request::builder()
                .uri("/api/payments/initiate")
                .header(header::HOST, host)
                .body(())
                .expect("a request");
            last.of(&req)
                .map(|(host, port)| (host.as_str().to_owned(), port))
        };
        let some = |host: &str, port| Some((host.to_owned(), port));
        for (given, expected) in [
            ("shop.example:8443", some("shop.example", Some(8443))),
            ("shop.example:8443", some("shop.example", Some(8443))),
            ("[::1]:80", some("::1", Some(80))),
            ("a b", None),
            ("a b", None),
            ("shop.example", some("shop.example", None)),
            ("[::1]", some("::1", None)),
            ("shop.example:99999", None),
            ("shop.example:", None),
            ("::1", None),
            ("[::1", None),
            ("a/b:80", None),
            ("", None),
            ("shop.example:8443", some("shop.example", Some(8443))),
        ] {
            assert_eq!(read(given), expected, "{given}");
        }
        // The request target's authority comes before `Host`.
        let absolute = Request::builder()
            .uri("http://other.example:81/api/payments/initiate")
            .header(header::HOST, "shop.example:8443")
            .body(())
            .expect("a request");
        assert_eq!(
            last.of(&absolute)
                .map(|(host, port)| (host.as_str().to_owned(), port)),
            some("other.example", Some(81))
        );
        let none = Request::builder().uri("/").body(()).expect("a request");
        assert_eq!(last.of(&none).map(|(_, port)| port), None);
    }

    #[test]
    fn the_operations_names_are_written_once() {
        for endpoint in payments_interface::Endpoint::ALL {
            let method = if endpoint.template().ends_with("/status") {
                "GET"
            } else {
                "POST"
            };
            assert_eq!(
                known_name(method, endpoint.template()),
                Some(format!("{method} {}", endpoint.template()).as_str())
            );
        }
        assert_eq!(
            known_name("HEAD", "/api/payments/{transactionId}/status"),
            None
        );
    }
}
