//! Why the upstream gave no (whole) answer, in the words of the proxy's
//! 502 and the reason its metric counts.

use crate::metrics::Failure;
use crate::upstream_tls::TlsFailure;

/// Why the upstream gave no answer, without its URL (which may carry
/// credentials). A refused TLS handshake is said as one; a TLS failure
/// after it, in the middle of the answer, is an answer broken off (the
/// upstream may have carried the request out), with TLS's reason.
pub(super) fn failure_reason(e: &hyper_util::client::legacy::Error) -> (String, Failure) {
    // hyper-rustls handshakes while connecting.
    match crate::upstream_tls::tls_failure(e, e.is_connect()) {
        Some(TlsFailure::Refused(tls)) => return (format!("refused TLS ({tls})"), Failure::Tls),
        Some(TlsFailure::BrokeOff(tls)) => return (broke_off(Some(&tls)), Failure::BrokeOff),
        None => {}
    }
    if e.is_connect() {
        return ("could not be connected to".to_owned(), Failure::Connect);
    }
    // Past the connection the request has gone out (unless hyper says
    // it was not sent), so an upstream that then closes, resets or
    // answers what is not HTTP may have carried it out: said so, and
    // counted as an answer broken off (at its first byte).
    match crate::upstream_tls::in_chain::<hyper::Error>(e) {
        Some(h) if h.is_parse() || h.is_parse_status() || h.is_parse_too_large() => (
            format!(
                "answered with something that is not HTTP ({h}; it may have carried the request out)"
            ),
            Failure::BrokeOff,
        ),
        // Not sent (a pooled connection closed first), or the
        // application's own body failed: nothing the upstream did.
        Some(h) if h.is_canceled() || h.is_user() => {
            ("could not be reached".to_owned(), Failure::Unreachable)
        }
        Some(_) => (
            "closed the connection without answering (it may have carried the request out)"
                .to_owned(),
            Failure::BrokeOff,
        ),
        None => ("could not be reached".to_owned(), Failure::Unreachable),
    }
}

/// An answer that broke off, with TLS's reason when TLS broke it.
pub(super) fn broke_off(tls: Option<&str>) -> String {
    match tls {
        Some(tls) => format!("broke off its answer (TLS: {tls})"),
        None => "broke off its answer".to_owned(),
    }
}
