//! The call upstream in the trace (`--otlp-endpoint`, CONTRACT section
//! 21): a span of kind client under the proxy's server span, whose
//! `traceparent` the upstream gets, so one trace runs shop -> proxy -> its
//! call -> service. Without the export nothing is made and the caller's
//! `traceparent` goes upstream untouched.

use std::borrow::Cow;

use axum::http::{HeaderMap, HeaderValue};
use payments_serve::trace::{Call, CallSpan, CallSpans, HEADER, ServingSpan};

/// The span of the call upstream to `uri` for a request served under a
/// span that makes them ([`CallSpans`], only with `--otlp-endpoint`), its
/// `traceparent` put into the upstream's `headers` in place of the
/// caller's (which the exchange keeps). `None` without the export.
pub(super) fn call_upstream(
    parts: &axum::http::request::Parts,
    uri: &axum::http::Uri,
    headers: &mut HeaderMap,
) -> Option<Box<dyn CallSpan>> {
    let serving = parts.extensions.get::<ServingSpan>()?;
    let call = parts.extensions.get::<CallSpans>().map(|calls| {
        let scheme = uri.scheme_str().unwrap_or("http");
        let port = uri
            .port_u16()
            .unwrap_or(if scheme == "https" { 443 } else { 80 });
        let path = shown_path(parts, uri);
        calls.0.start(Call {
            parent: serving.0,
            method: &parts.method,
            scheme,
            host: uri.host().unwrap_or_default(),
            port,
            path: &path,
        })
    });
    // The call's span is the upstream's parent; a span without ids of its
    // own leaves the proxy's server span as the parent.
    let parent = call
        .as_ref()
        .and_then(|c| c.traceparent())
        .unwrap_or(serving.0);
    if let Ok(value) = HeaderValue::from_str(&parent.to_header()) {
        headers.insert(HEADER, value);
    }
    // Without one well-formed `traceparent` from the caller the trace is
    // the proxy's own, and the caller's `tracestate` belongs to none it
    // continues: it is not passed on (as the W3C recommendation has it).
    if payments_serve::trace::TraceParent::from_headers(&parts.headers).is_none() {
        headers.remove("tracestate");
    }
    call
}

/// The path called upstream (`uri`: the upstream's own prefix, then the
/// request's path) as the call's span shows it: the prefix, then the
/// request's path as its server span shows it (secrets replaced,
/// `payments_serve::otlp::ShownPath`).
fn shown_path<'a>(parts: &axum::http::request::Parts, uri: &'a axum::http::Uri) -> Cow<'a, str> {
    #[cfg(feature = "otlp")]
    if let Some(shown) = parts.extensions.get::<payments_serve::otlp::ShownPath>() {
        let prefix = uri
            .path()
            .strip_suffix(parts.uri.path())
            .unwrap_or_default();
        return Cow::Owned(format!("{prefix}{}", shown.0));
    }
    #[cfg(not(feature = "otlp"))]
    let _ = parts;
    Cow::Borrowed(uri.path())
}
