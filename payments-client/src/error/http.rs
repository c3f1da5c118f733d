//! An answer that is not valid HTTP (CONTRACT section 17's "no usable
//! answer"), found by type in the HTTP library's error chain: what makes a
//! failure [`TransportKind::InvalidHttp`] and ends its message.

use super::TransportKind;

/// ` (REASON)` for an answer that is not valid HTTP: hyper's own words
/// for what it could not parse (`invalid HTTP header parsed`, `message
/// head is too large`), fixed texts that never repeat the service's bytes.
pub(super) fn invalid_http_suffix(kind: TransportKind, source: Option<&reqwest::Error>) -> String {
    if kind != TransportKind::InvalidHttp {
        return String::new();
    }
    source
        .and_then(|e| invalid_http(e))
        .map(|reason| format!(" ({reason})"))
        .unwrap_or_default()
}

/// hyper's message, when an error's chain holds hyper's failure to parse
/// the service's answer (`hyper::Error::is_parse`: a bad status line, a
/// header name or value with bytes HTTP forbids, a head too large, bytes
/// that are not HTTP at all). The service did answer, at once: this is not
/// a timeout nor a dropped connection, though, as with those, the request
/// was written and may have been carried out.
///
/// What makes a failure [`TransportKind::InvalidHttp`]; public for a tool
/// that sends its own requests with the same `reqwest` (the `payments`
/// CLI's `tail`) and wants to say the same.
///
/// ```
/// use payments_client::error::invalid_http;
///
/// let dropped = std::io::Error::other("connection reset");
/// assert_eq!(invalid_http(&dropped), None);
/// ```
pub fn invalid_http(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(e);
    while let Some(error) = current {
        if let Some(hyper) = error.downcast_ref::<hyper::Error>() {
            return hyper.is_parse().then(|| hyper.to_string());
        }
        current = error.source();
    }
    None
}
