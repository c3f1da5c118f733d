//! The pass-through: every `/api/` request forwarded with its method, path
//! (after the upstream's own prefix), query, end-to-end headers and body
//! bytes; the upstream's status, end-to-end headers and body bytes answered
//! unchanged, plus `X-Contract-Verdict`. Nothing retried, rewritten or
//! substituted (but with `--enforce`, where the answer is a violation).
//!
//! Hop-by-hop headers (RFC 9110 section 7.6.1: `Connection`, the headers it
//! names, `Keep-Alive`, `Proxy-Connection`, `TE`, `Trailer`,
//! `Transfer-Encoding`, `Upgrade`) are dropped both ways, and `Host` is the
//! upstream's. So are `Proxy-Authorization` and `Proxy-Authenticate` (RFC
//! 9110 sections 11.7.1 and 11.7.2): they belong to the hop to the proxy,
//! and a credential meant for the proxy must not reach the upstream. Nor
//! does a request's `Expect` (RFC 9110 section 10.1.1): the proxy met the
//! expectation itself (its own `100 Continue`) and has the body in hand, so
//! the upstream gets the body with no expectation to answer before it (an
//! upstream that refused it unread, `413`, and closed left the proxy's
//! pooled connection dead under the next request: a false 502). The
//! request target goes out byte for byte (hyper's own client:
//! nothing normalizes it, nothing adds a header); a path with a dot segment
//! (`..`, `%2e%2e`), which an upstream would resolve to outside `/api/` or
//! outside its prefix, is refused with 404. A body up to [`JUDGE_LIMIT`] is
//! read whole and judged; a larger one is streamed through as it comes, the
//! exchange `unchecked`. So is a compressed answer (`Content-Encoding`):
//! the proxy never decodes.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::StreamExt as _;
use http_body_util::BodyExt as _;

mod body;
mod failure;
mod traced;

use super::exchange::{Exchange, Message};
use super::metrics::Failure;
use super::rules::Verdict;
use crate::state::{Own, ProxyState};
use body::{Paused, Progress, Read, Tracked, idle_bounded, read_up_to};
use failure::{broke_off, cut_off, failure_reason, unknown_request_coding, unpassable};
use payments_serve::{ApiError, ErrorCode};

/// Bodies up to this are read whole and judged (the document's are under
/// 1 KiB); larger ones stream through unjudged.
pub const JUDGE_LIMIT: usize = 16 * 1024 * 1024;

/// The most header lines a request may have, the proxy's own bound on
/// the way in (hyper's, where more is a bare `431`) and so on the way out:
/// a request the proxy's additions take past it is refused with the
/// proxy's own `431`.
const HEADER_LINES: usize = 100;

/// The header every answer gets.
pub const VERDICT_HEADER: &str = "x-contract-verdict";

const HOP_BY_HOP: [&str; 10] = [
    "connection",
    "proxy-connection",
    "keep-alive",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    // The hop to the proxy's own credentials and challenges (CONTRACT
    // section 16): never passed on, either way.
    "proxy-authorization",
    "proxy-authenticate",
];

/// The end-to-end headers of `headers`, as the proxy forwards them both
/// ways: without the hop-by-hop ones (RFC 9110 section 7.6.1), those
/// `Connection` names, `Host`, `Proxy-Authorization` and
/// `Proxy-Authenticate` (the hop to the proxy's), and without a
/// `Content-Length` beside a `Transfer-Encoding`.
///
/// # Examples
///
/// ```
/// use axum::http::{HeaderMap, HeaderValue};
///
/// let mut headers = HeaderMap::new();
/// headers.insert("connection", HeaderValue::from_static("x-hop"));
/// headers.insert("x-hop", HeaderValue::from_static("1"));
/// headers.insert("x-kept", HeaderValue::from_static("2"));
/// headers.insert("proxy-authorization", HeaderValue::from_static("Basic cHJveHk6a2V5"));
/// let kept = payments_contract_proxy::end_to_end(&headers);
/// assert_eq!(kept.len(), 1);
/// assert_eq!(kept["x-kept"], "2");
/// ```
pub fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .filter(|n| !n.is_empty())
        .collect();
    // A Content-Length beside a Transfer-Encoding is not the body's length
    // (RFC 9112 section 6.3): dropped, the body's own length goes out.
    let chunked = headers.contains_key(header::TRANSFER_ENCODING);
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        let lower = name.as_str();
        if HOP_BY_HOP.contains(&lower)
            || named.iter().any(|n| n == lower)
            || (chunked && name == header::CONTENT_LENGTH)
        {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            let value = v.to_str().map_or_else(
                |_| String::from_utf8_lossy(v.as_bytes()).into_owned(),
                str::to_owned,
            );
            (k.as_str().to_owned(), value)
        })
        .collect()
}

/// How many header lines a request with `headers` and `body` goes out
/// with: those, the `Host` the HTTP client adds (the request's own is
/// hop-by-hop), and the body's length it adds when nothing frames it.
fn lines_out(headers: &HeaderMap, body: &Body) -> usize {
    let framed = headers.contains_key(header::CONTENT_LENGTH)
        || headers.contains_key(header::TRANSFER_ENCODING);
    let unframed_body = !framed && !hyper::body::Body::is_end_stream(body);
    headers.len() + 1 + usize::from(unframed_body)
}

/// Whether `headers` say the body is compressed (the proxy never decodes).
fn is_compressed(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_ENCODING)
        .is_some_and(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"))
}

/// Whether a path, its dot segments resolved as RFC 3986 (5.2.4) resolves
/// them (`.` and `..`, plainly or percent-encoded), leads out of `/api/`
/// at any point: such a request is refused, since the upstream would
/// answer another of its paths, or one outside its prefix. One that
/// climbs out and comes back down (`/api/x/../../../api/…`) is refused
/// too: RFC 3986 drops a `..` above the root, so behind an upstream's
/// prefix (`/stage/api/x/../../../api/…`) it lands above the prefix. A
/// dot segment that stays inside (`/api/payments/./status`,
/// `/api/payments/../status`) is forwarded as it came, as every other
/// request.
fn leaves_api(path: &str) -> bool {
    // Neither a dot nor an escape: no segment can be one (most paths).
    if !path.contains(['.', '%']) {
        return false;
    }
    let mut resolved: Vec<&str> = Vec::new();
    for segment in path.split('/').skip(1) {
        let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
        match decoded.as_ref() {
            "." => {}
            // Back to `/api` itself, or above it: out.
            ".." if resolved.len() <= 1 => return true,
            ".." => {
                resolved.pop();
            }
            _ => resolved.push(segment),
        }
    }
    resolved.first() != Some(&"api") || resolved.len() < 2
}

/// Forwards one `/api/` request and judges the exchange.
pub(crate) async fn forward(State(proxy): State<ProxyState>, request: Request) -> Response {
    let started = Instant::now();
    let time = chrono::Utc::now();
    let seq = proxy.next_seq();
    // Under way until answered: the stop waits for it, and cuts it off
    // when its grace period ends (each await below watches for that).
    let mut open = proxy.stop.enter();
    let (parts, body) = request.into_parts();
    // A read carries nothing out, whatever became of it upstream.
    let read_only = matches!(
        parts.method,
        axum::http::Method::GET
            | axum::http::Method::HEAD
            | axum::http::Method::OPTIONS
            | axum::http::Method::TRACE
    );
    let path = parts.uri.path().to_owned();
    let query = parts.uri.query().map(str::to_owned);
    let mut request_message = Message {
        method: parts.method.as_str().to_owned(),
        path: path.clone(),
        query: query.clone(),
        headers: header_pairs(&parts.headers),
        ..Message::default()
    };
    let refuse = |request_message: Message, error: ApiError| {
        proxy.own_answer(seq, time, started, request_message, error, Own::Refused)
    };
    // The upstream gave no whole answer: counted under `failure`, and the
    // exchange's log line names it.
    let failed = |request_message: Message, failure: Failure, message: &str| {
        proxy.metrics.upstream_failed(failure);
        let error = unavailable(message);
        proxy.own_answer(
            seq,
            time,
            started,
            request_message,
            error,
            Own::Failed(failure),
        )
    };
    // The stop's grace period ended first (`sent`: the request had gone
    // upstream).
    let cut_short = |request_message: Message, sent: bool| {
        let error = unavailable(&cut_off(sent, read_only));
        proxy.own_answer(seq, time, started, request_message, error, Own::CutOff)
    };
    if leaves_api(&path) {
        return refuse(request_message, ApiError::not_found());
    }
    // A transfer coding the proxy does not implement (RFC 9112 section
    // 6.1): 501, never forwarded without it.
    if let Some(message) = unknown_request_coding(&parts.headers) {
        let error = ApiError::new(
            StatusCode::NOT_IMPLEMENTED,
            ErrorCode::ValidationError,
            message,
        );
        return refuse(request_message, error);
    }
    let timeout = proxy.config.upstream_timeout;
    // The application's body, each part within the upstream timeout: a
    // client that stops sending does not hold the exchange open, one that
    // keeps sending a large body is not cut off.
    // A request without a body (a status read) has nothing to wait for.
    let read = if hyper::body::Body::is_end_stream(&body) {
        Ok(Read::Whole(Bytes::new()))
    } else {
        tokio::select! {
            read = read_up_to(Box::pin(idle_bounded(body.into_data_stream(), timeout))) => read,
            () = open.cut() => return cut_short(request_message, false),
        }
    };
    let body = match read {
        Ok(body) => body,
        Err(e) => {
            // The application paused, broke off or malformed its own
            // request: nothing to forward. Said as what happened: a pause
            // as a pause, anything else in the mock's words.
            let message = if e.downcast_ref::<Paused>().is_some() {
                format!(
                    "the request body paused for longer than {}",
                    humantime::format_duration(timeout)
                )
            } else {
                "request body could not be read".to_owned()
            };
            return refuse(request_message, ApiError::validation(message));
        }
    };
    let mut judged = !is_compressed(&parts.headers);
    let upstream_body = match body {
        Read::Whole(bytes) => {
            request_message.keep_body(&bytes);
            Body::from(bytes)
        }
        Read::Streaming { head, rest } => {
            judged = false;
            request_message.body_bytes = head.len() as u64;
            let chained =
                futures::stream::once(async move { Ok::<_, axum::BoxError>(head) }).chain(rest);
            Body::from_stream(chained)
        }
    };
    let progress = Progress::new();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let upstream_body = Body::new(Tracked::new(upstream_body, Arc::clone(&progress), declared));
    let Some(uri) = proxy.upstream_uri(&parts.uri) else {
        return refuse(request_message, ApiError::not_found());
    };
    let mut headers = end_to_end(&parts.headers);
    // The expectation was the proxy's to meet, and it did: the body is in
    // hand (or streaming), and goes out whole.
    headers.remove(header::EXPECT);
    crate::access::without_own_session(&mut headers);
    if let Some(basic) = &proxy.basic_auth
        && !headers.contains_key(header::AUTHORIZATION)
    {
        headers.insert(header::AUTHORIZATION, basic.clone());
    }
    // Exporting spans, the call upstream is a span of its own, and its
    // `traceparent` the upstream's (`traced`).
    let mut call = traced::call_upstream(&parts, &uri, &mut headers);
    // The proxy takes up to HEADER_LINES header lines; with those it adds
    // (`Authorization` from `--upstream`'s credentials, a `traceparent`, a
    // `Host` where the request had none) a request could go out with more,
    // and an upstream with the same bound refuse it (a bare 431): the
    // service blamed for the proxy's own lines. Refused here instead, as a
    // request over the bound is on its way in; no call went out (its span
    // is dropped unended).
    let lines = lines_out(&headers, &upstream_body);
    if lines > HEADER_LINES {
        drop(call);
        let error = ApiError::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ErrorCode::ValidationError,
            format!(
                "the request's header lines and those the proxy adds to it come to {lines}, \
                 more than the {HEADER_LINES} it takes: it was not forwarded"
            ),
        );
        return refuse(request_message, error);
    }
    let mut forwarded = axum::http::Request::new(upstream_body);
    *forwarded.method_mut() = parts.method.clone();
    *forwarded.uri_mut() = uri;
    *forwarded.headers_mut() = headers;
    // The answer's head: within the timeout after the request body last
    // moved (a body that keeps going out takes as long as it needs).
    let asked = Instant::now();
    let sent = tokio::select! {
        sent = proxy.client.request(forwarded) => Some(sent),
        () = progress.overdue(timeout) => None,
        () = open.cut() => return cut_short(request_message, true),
    };
    let upstream = match sent {
        Some(Ok(response)) => {
            proxy.metrics.upstream_answered(asked.elapsed());
            if let Some(call) = call.take() {
                call.answered(response.status().as_u16());
            }
            response
        }
        Some(Err(e)) => {
            let (reason, failure) = failure_reason(&e, progress.took_whole());
            if let Some(call) = call.take() {
                call.failed(failure.as_str());
            }
            return failed(request_message, failure, &reason);
        }
        None => {
            if let Some(call) = call.take() {
                call.failed(Failure::Timeout.as_str());
            }
            return failed(request_message, Failure::Timeout, &proxy.late());
        }
    };
    let (upstream_parts, upstream_body) = upstream.into_parts();
    let status = upstream_parts.status;
    if let Some(message) = unpassable(status, &upstream_parts.headers) {
        return failed(request_message, Failure::BrokeOff, &message);
    }
    let headers = end_to_end(&upstream_parts.headers);
    let compressed = is_compressed(&headers);
    let mut response_message = Message {
        status: status.as_u16(),
        headers: header_pairs(&headers),
        ..Message::default()
    };
    // Without a length from the upstream, none is made up (a HEAD's
    // answer keeps saying nothing of the GET's length).
    let sized = headers.contains_key(header::CONTENT_LENGTH);
    let read = tokio::select! {
        read = read_up_to(Box::pin(idle_bounded(upstream_body.into_data_stream(), timeout))) => read,
        () = open.cut() => return cut_short(request_message, true),
    };
    let response_body = match read {
        Ok(Read::Whole(bytes)) => {
            response_message.keep_body(&bytes);
            if sized {
                Body::from(bytes)
            } else {
                Body::from_stream(futures::stream::once(async move {
                    Ok::<_, std::convert::Infallible>(bytes)
                }))
            }
        }
        Ok(Read::Streaming { head, rest }) => {
            judged = false;
            response_message.body_bytes = head.len() as u64;
            let chained =
                futures::stream::once(async move { Ok::<_, axum::BoxError>(head) }).chain(rest);
            Body::from_stream(chained)
        }
        Err(e) if e.is::<Paused>() => {
            return failed(request_message, Failure::Timeout, &proxy.late());
        }
        Err(e) => {
            let tls = crate::upstream_tls::rustls_error(&*e).map(ToString::to_string);
            return failed(
                request_message,
                Failure::BrokeOff,
                &broke_off(tls.as_deref()),
            );
        }
    };
    let (trace_id, span_id) = super::exchange::traced(&request_message.headers);
    let exchange = Exchange {
        seq,
        time,
        request: request_message,
        response: response_message,
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        proxy_answer: false,
        judged: true,
        trace_id,
        span_id,
    };
    // A request that is none of the document's four endpoints (another
    // method or path under `/api/`) has nothing to be judged against:
    // `unchecked`, never a `pass` nothing earned.
    let documented = super::exchange::Endpoint::of(parts.method.as_str(), &path)
        .operation()
        .is_some();
    let (verdict, findings) = proxy.judge(exchange, judged && !compressed && documented);
    let mut response = if verdict == Verdict::Violation && proxy.config.enforce {
        let listed: Vec<String> = findings
            .iter()
            .filter(|f| f.level == super::rules::Level::Violation)
            .map(|f| format!("{}: {}", f.rule, f.message))
            .collect();
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            ErrorCode::ContractViolation,
            format!(
                "the upstream's answer breaks the interface document: {}",
                listed.join("; ")
            ),
        )
        .into_response()
    } else {
        let mut response = Response::new(response_body);
        *response.status_mut() = status;
        *response.headers_mut() = headers;
        response
    };
    response.headers_mut().insert(
        HeaderName::from_static(VERDICT_HEADER),
        HeaderValue::from_static(verdict.as_str()),
    );
    response
}

/// 502 `UPSTREAM_UNAVAILABLE` saying `message`: the upstream gave no
/// answer the proxy can pass on.
fn unavailable(message: &str) -> ApiError {
    ApiError::new(
        StatusCode::BAD_GATEWAY,
        ErrorCode::UpstreamUnavailable,
        message.to_owned(),
    )
}

impl ProxyState {
    /// The message of an answer that did not come in time, with the
    /// timeout (the only failure it explains).
    fn late(&self) -> String {
        failure::upstream(&format!(
            "did not answer in time (upstream timeout {})",
            humantime::format_duration(self.config.upstream_timeout)
        ))
    }

    /// The proxy's own answer (`own` says why: the upstream gave none, the
    /// request was refused before it was forwarded, or the stop cut the
    /// exchange off), recorded and counted as `unchecked`, with its
    /// verdict header like every answer.
    fn own_answer(
        &self,
        seq: u64,
        time: chrono::DateTime<chrono::Utc>,
        started: Instant,
        request: Message,
        error: ApiError,
        own: Own,
    ) -> Response {
        // The body the error answers with, as bytes to record and send.
        let body = Bytes::from(error.body_bytes());
        let (parts, _) = error.into_response().into_parts();
        let (trace_id, span_id) = super::exchange::traced(&request.headers);
        let exchange = Exchange {
            seq,
            time,
            request,
            response: Message {
                status: parts.status.as_u16(),
                headers: header_pairs(&parts.headers),
                body_bytes: body.len() as u64,
                body: Some(String::from_utf8_lossy(&body).into_owned()),
                ..Message::default()
            },
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
            proxy_answer: true,
            judged: false,
            trace_id,
            span_id,
        };
        let (verdict, _) = self.judge_own(exchange, own);
        let mut response = Response::from_parts(parts, Body::from(body));
        response.headers_mut().insert(
            HeaderName::from_static(VERDICT_HEADER),
            HeaderValue::from_static(verdict.as_str()),
        );
        response
    }
}

#[cfg(test)]
mod tests;
