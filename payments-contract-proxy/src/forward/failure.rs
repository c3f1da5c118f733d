//! Why the upstream gave no (whole, passable) answer, in the words of the
//! proxy's 502 and the reason its metric counts.

use axum::http::{HeaderMap, StatusCode, header};

use crate::metrics::Failure;
use crate::upstream_tls::TlsFailure;

/// What every message about an upstream that read the request and then
/// failed to answer it adds: a payment may have been made.
const MAY_HAVE: &str = "it may have carried the request out";

/// What every message about an upstream that failed before it took the
/// whole request says instead: nothing was carried out.
const DID_NOT: &str = "closed the connection before taking the whole request; \
                       it did not carry it out";

/// Why the upstream gave no answer, without its URL (which may carry
/// credentials): the whole message of the proxy's 502. A refused TLS
/// handshake is said as one, naming the side that refused; a TLS failure
/// after it, in the middle of the answer, is an answer broken off (the
/// upstream may have carried the request out), with TLS's reason.
/// `took_whole`: whether the HTTP client took the request body to its
/// end. An upstream that closed or reset the connection before it did
/// (one that answered early, `413`, and closed without reading the rest)
/// never had the whole request: said so, never "may have carried it out",
/// and counted `unreachable` (the request could not be sent whole).
pub(super) fn failure_reason(
    e: &hyper_util::client::legacy::Error,
    took_whole: bool,
) -> (String, Failure) {
    // hyper-rustls handshakes while connecting.
    match crate::upstream_tls::tls_failure(e, e.is_connect()) {
        Some(TlsFailure::Refused(refused)) => return (refused.message(), Failure::Tls),
        Some(TlsFailure::BrokeOff(tls)) if !took_whole => {
            return (
                upstream(&format!("{DID_NOT} (TLS: {tls})")),
                Failure::Unreachable,
            );
        }
        Some(TlsFailure::BrokeOff(tls)) => return (broke_off(Some(&tls)), Failure::BrokeOff),
        None => {}
    }
    if e.is_connect() {
        let why = connect_cause(e);
        return (
            upstream(&format!("could not be connected to{why}")),
            Failure::Connect,
        );
    }
    // Past the connection the request has gone out (unless hyper says
    // it was not sent), so an upstream that then closes, resets or
    // answers what is not HTTP may have carried it out: said so, and
    // counted as an answer broken off (at its first byte).
    match crate::upstream_tls::in_chain::<hyper::Error>(e) {
        Some(h) if h.is_parse() || h.is_parse_status() || h.is_parse_too_large() => {
            (not_http(&h.to_string()), Failure::BrokeOff)
        }
        // Not sent (a pooled connection closed first), or the
        // application's own body failed: nothing the upstream did.
        Some(h) if h.is_canceled() || h.is_user() => {
            (upstream("could not be reached"), Failure::Unreachable)
        }
        // Closed or reset while the body was still going out.
        Some(_) if !took_whole => (upstream(DID_NOT), Failure::Unreachable),
        Some(_) => (
            upstream(&format!(
                "closed the connection without answering ({MAY_HAVE})"
            )),
            Failure::BrokeOff,
        ),
        None => (upstream("could not be reached"), Failure::Unreachable),
    }
}

/// Why a connection could not be made, as words to add to "could not be
/// connected to", when its chain says: a host name that does not resolve
/// (hyper-util's `dns error`), a connection refused, or one that timed
/// out; nothing for another cause. Never the host or the URL.
fn connect_cause(e: &hyper_util::client::legacy::Error) -> &'static str {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    return ": it refused the connection (nothing listens at its address)";
                }
                std::io::ErrorKind::TimedOut => return ": the connection timed out",
                _ => {}
            }
        }
        if cause.to_string().starts_with("dns error") {
            return ": its host name could not be resolved (DNS)";
        }
        source = cause.source();
    }
    ""
}

/// `the upstream service {what}`.
pub(super) fn upstream(what: &str) -> String {
    format!("the upstream service {what}")
}

/// The proxy's words for an exchange the stop cut off when its grace
/// period ended: `sent`, whether the request had gone upstream (else its
/// body had not all come); `read_only`, whether it is a read, which
/// carries nothing out.
pub(super) fn cut_off(sent: bool, read_only: bool) -> String {
    const STOPPING: &str = "the proxy is stopping";
    match (sent, read_only) {
        (false, _) => {
            format!("{STOPPING} and the request body had not all come: it was not forwarded")
        }
        (true, true) => format!("{STOPPING} and the upstream service's answer was not complete"),
        (true, false) => {
            format!("{STOPPING} and the upstream service's answer was not complete ({MAY_HAVE})")
        }
    }
}

/// An answer that is not HTTP the proxy can pass on: `detail` says what.
fn not_http(detail: &str) -> String {
    upstream(&format!(
        "answered with something that is not HTTP ({detail}; {MAY_HAVE})"
    ))
}

/// An answer that broke off, with TLS's reason when TLS broke it. The
/// upstream had begun to answer, so it read the request.
pub(super) fn broke_off(tls: Option<&str>) -> String {
    match tls {
        Some(tls) => upstream(&format!("broke off its answer (TLS: {tls}; {MAY_HAVE})")),
        None => upstream(&format!("broke off its answer ({MAY_HAVE})")),
    }
}

/// Why an answer whose head came cannot be passed on as it is, when it
/// cannot: an interim status (1xx) as the final answer (a `101 Switching
/// Protocols` the proxy never asked for: passed on, it would switch the
/// application's connection to a protocol nobody agreed on), or a
/// transfer coding other than `chunked`, which the proxy never asked for
/// (it sends no `TE`) and does not decode: passed on without its
/// `Transfer-Encoding` (hop-by-hop), the bytes would be taken for the
/// identity. Each is the upstream's protocol error.
pub(super) fn unpassable(status: StatusCode, headers: &HeaderMap) -> Option<String> {
    if status.is_informational() {
        return Some(not_http(&format!(
            "{status} as its final answer, which the proxy never asked for"
        )));
    }
    other_coding(headers).map(|said| {
        upstream(&format!(
            "answered with a transfer coding the proxy never asked for and does not decode \
             (Transfer-Encoding: {said}; {MAY_HAVE})"
        ))
    })
}

/// Why a request is refused with 501 before it is forwarded, when it is:
/// a transfer coding other than `chunked` (`Transfer-Encoding: gzip,
/// chunked`), which the proxy does not implement (RFC 9112 section 6.1):
/// forwarded without its `Transfer-Encoding` (hop-by-hop), the upstream
/// would take the coded bytes for the body itself.
pub(super) fn unknown_request_coding(headers: &HeaderMap) -> Option<String> {
    other_coding(headers).map(|said| {
        format!(
            "the request's transfer coding is not one the proxy implements \
             (Transfer-Encoding: {said}; only chunked is): it was not forwarded"
        )
    })
}

/// The `Transfer-Encoding` values, joined and cut to 100 bytes, when they
/// name a coding other than `chunked`.
fn other_coding(headers: &HeaderMap) -> Option<String> {
    let codings: Vec<String> = headers
        .get_all(header::TRANSFER_ENCODING)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    let other = codings
        .iter()
        .flat_map(|v| v.split(','))
        .map(|c| c.split(';').next().unwrap_or_default().trim())
        .any(|c| !c.is_empty() && !c.eq_ignore_ascii_case("chunked"));
    other.then(|| shortened(&codings.join(", ")))
}

/// `text` cut to at most 100 bytes (at a character's boundary), `…` when
/// cut: a value from outside quoted in a message.
fn shortened(text: &str) -> String {
    const MOST: usize = 100;
    if text.len() <= MOST {
        return text.to_owned();
    }
    let mut end = MOST;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, StatusCode, header};

    use super::unpassable;

    fn coded(values: &[&'static str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(header::TRANSFER_ENCODING, HeaderValue::from_static(v));
        }
        headers
    }

    #[test]
    fn chunked_alone_passes_and_any_other_coding_does_not() {
        for passes in [&[][..], &["chunked"], &["Chunked"], &[" chunked "]] {
            assert_eq!(
                unpassable(StatusCode::OK, &coded(passes)),
                None,
                "{passes:?}"
            );
        }
        for refused in [
            &["gzip, chunked"][..],
            &["gzip", "chunked"],
            &["chunked, br"],
            &["x-custom;q=1, chunked"],
        ] {
            let message = unpassable(StatusCode::OK, &coded(refused)).expect("refused");
            assert!(
                message.contains("transfer coding the proxy never asked for"),
                "{message}"
            );
            assert!(
                message.ends_with("it may have carried the request out)"),
                "{message}"
            );
        }
    }

    #[test]
    fn an_interim_status_as_the_final_answer_is_not_http() {
        for status in [100, 101, 102, 103] {
            let status = StatusCode::from_u16(status).expect("a status");
            let message = unpassable(status, &HeaderMap::new()).expect("refused");
            assert!(
                message
                    .starts_with("the upstream service answered with something that is not HTTP"),
                "{message}"
            );
        }
        assert_eq!(unpassable(StatusCode::NO_CONTENT, &HeaderMap::new()), None);
    }

    #[test]
    fn a_request_coding_other_than_chunked_is_named_cut_to_100_bytes() {
        assert_eq!(super::unknown_request_coding(&coded(&["chunked"])), None);
        assert_eq!(
            super::unknown_request_coding(&coded(&["gzip, chunked"])).as_deref(),
            Some(
                "the request's transfer coding is not one the proxy implements \
                 (Transfer-Encoding: gzip, chunked; only chunked is): it was not forwarded"
            )
        );
        let long = format!("{}, chunked", "x".repeat(300));
        let mut headers = HeaderMap::new();
        headers.insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_str(&long).expect("a value"),
        );
        let message = super::unknown_request_coding(&headers).expect("refused");
        assert!(
            message.contains(&format!("Transfer-Encoding: {}…;", "x".repeat(100))),
            "{message}"
        );
    }

    #[test]
    fn a_long_coding_is_quoted_cut() {
        let long = format!("{}, chunked", "é".repeat(300));
        let mut headers = HeaderMap::new();
        headers.insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_bytes(long.as_bytes()).expect("a value"),
        );
        let message = unpassable(StatusCode::OK, &headers).expect("refused");
        assert!(message.len() < 400, "{message}");
        assert!(message.contains('…'), "{message}");
    }
}
