//! What the journal keeps of an `/api/` request, read off the request
//! itself: the method, path, query and headers (`Authorization`, any
//! other header that carries a credential
//! ([`payments_serve::is_credential_header`]), the console's session
//! cookie and the query's parameters named as credentials are
//! ([`redacted_query`]) redacted), cheaply, into a [`Capture`] (the
//! domain's journal entry in the making; the guard adds the body and the
//! outcome).

use std::borrow::Cow;

use axum::http::{HeaderMap, Method, Uri, header};
use chrono::{DateTime, Utc};

use crate::domain::journal::{Capture, room};

impl Capture {
    /// The request line and headers of `parts`, `Authorization` and the
    /// console's session cookie redacted.
    pub fn new(
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        request_id: &str,
        at: DateTime<Utc>,
    ) -> Self {
        let kept = headers.iter().map(|(name, value)| {
            let value = if name == header::AUTHORIZATION {
                Cow::Borrowed("[redacted]")
            } else if name == header::COOKIE {
                // The console's session grants what its key grants: a
                // browser signed in sends it with every request here.
                let text = String::from_utf8_lossy(value.as_bytes());
                let redacted = match crate::admin::COOKIE.redacted(&text) {
                    Cow::Owned(redacted) => Some(redacted),
                    Cow::Borrowed(_) => None,
                };
                redacted.map_or(text, Cow::Owned)
            } else if !is_common(name) && payments_serve::is_credential_header(name.as_str()) {
                // A key in a header of another name (`X-Api-Key`,
                // `X-Auth-Token`): an application's own scheme.
                Cow::Borrowed("[redacted]")
            } else if let Ok(visible) = value.to_str() {
                // The usual case; cheaper than the UTF-8 check below.
                Cow::Borrowed(visible)
            } else {
                String::from_utf8_lossy(value.as_bytes())
            };
            (name.as_str(), value)
        });
        // The text's room, made once: the parts as they come (a redacted
        // or mended value may differ a little) and the body as its
        // `Content-Length` announces it (up to a bound: a body refused as
        // too large leaves no large buffer behind in the journal). An
        // entry holds no more than it needs for as long as the journal
        // keeps it.
        let body = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
            .unwrap_or(0)
            .min(BODY_ROOM);
        let (path, query) = (uri.path(), uri.query().map(redacted_query));
        let parts = [
            path.len(),
            query.as_ref().map_or(0, |q| q.len()),
            request_id.len(),
        ]
        .into_iter()
        .chain(
            headers
                .iter()
                .flat_map(|(name, value)| [name.as_str().len(), value.len()]),
        );
        Self::assemble(
            method.clone(),
            (path, query.as_deref()),
            request_id,
            kept,
            room(parts, body),
            at,
            // HTTP's URI and header types refuse control characters.
            crate::domain::journal::Parts::Clean,
        )
    }
}

/// `query` with the value of each parameter whose name says it carries a
/// credential replaced by `[redacted]`, the names, the other values and
/// the order as sent: a key sent as `?api_key=…`, `?token=…` or
/// `?access_token=…` was kept in clear (shown to the admin and its
/// merchant, in the console and `payments tail`). A name is read as the
/// headers' are ([`payments_serve::is_credential_header`]), decoded first
/// (`%5F`, `+`), every character that is not a letter or a digit
/// separating its words, and so does a capital after a small letter
/// (`accessToken`, `apiKey`). Borrowed when nothing is redacted.
pub(crate) fn redacted_query(query: &str) -> Cow<'_, str> {
    let mut redacted = String::new();
    // Up to here `query` is copied into `redacted` (when it is begun).
    let mut copied = 0;
    let mut at = 0;
    for pair in query.split('&') {
        if let Some((name, value)) = pair.split_once('=')
            && !value.is_empty()
            && names_a_credential(name)
        {
            let value_at = at + name.len() + 1;
            redacted.push_str(&query[copied..value_at]);
            redacted.push_str("[redacted]");
            copied = value_at + value.len();
        }
        at += pair.len() + 1;
    }
    if copied == 0 {
        return Cow::Borrowed(query);
    }
    redacted.push_str(&query[copied..]);
    Cow::Owned(redacted)
}

/// Whether a query parameter's name (as sent, percent-encoded) says it
/// carries a credential ([`redacted_query`]).
fn names_a_credential(name: &str) -> bool {
    let plus_as_space = name.replace('+', " ");
    let decoded = percent_encoding::percent_decode_str(&plus_as_space).decode_utf8_lossy();
    let mut words = String::with_capacity(decoded.len() + 4);
    let mut previous_small = false;
    for c in decoded.chars() {
        if c.is_alphanumeric() {
            if previous_small && c.is_uppercase() {
                words.push('_');
            }
            words.push(c);
            previous_small = c.is_lowercase() || c.is_ascii_digit();
        } else {
            words.push('_');
            previous_small = false;
        }
    }
    payments_serve::is_credential_header(&words)
}

/// The most room a capture makes for a body before it is read.
const BODY_ROOM: usize = 4096;

/// The standard headers nearly every request carries, none a credential:
/// told by their interned names (a comparison each), so that the hot path
/// reads no name's words for them.
fn is_common(name: &axum::http::HeaderName) -> bool {
    [
        header::HOST,
        header::CONTENT_TYPE,
        header::CONTENT_LENGTH,
        header::ACCEPT,
        header::USER_AGENT,
        header::ACCEPT_ENCODING,
        header::CONNECTION,
    ]
    .contains(name)
}

#[cfg(test)]
mod tests {
    use super::redacted_query;

    #[test]
    fn query_parameters_named_as_credentials_are_redacted_in_place() {
        for (sent, kept) in [
            ("merchantId=abc", "merchantId=abc"),
            ("", ""),
            ("a=1&b=2", "a=1&b=2"),
            (
                "api_key=sk_1&token=t0k&access_token=at",
                "api_key=[redacted]&token=[redacted]&access_token=[redacted]",
            ),
            (
                "merchantId=m&apiKey=s&x=1&accessToken=a",
                "merchantId=m&apiKey=[redacted]&x=1&accessToken=[redacted]",
            ),
            // Percent-encoded and `+` names, as a form encodes them.
            (
                "api%5Fkey=s&x%2Dauth%2Dtoken=t",
                "api%5Fkey=[redacted]&x%2Dauth%2Dtoken=[redacted]",
            ),
            ("api+key=s", "api+key=[redacted]"),
            (
                "client.secret=s&auth[token]=t",
                "client.secret=[redacted]&auth[token]=[redacted]",
            ),
            // The whole value, `=` and escapes in it included.
            ("sig=a%3Db%3D=c&next=1", "sig=[redacted]&next=1"),
            // Repeated, empty, without a value, at the ends.
            ("token=a&token=b", "token=[redacted]&token=[redacted]"),
            ("token=&token", "token=&token"),
            ("&token=a&", "&token=[redacted]&"),
            // Names that carry no credential, by the headers' words.
            (
                "pageToken=p&idempotency_key=i&cache-key=c&referenceNo=r",
                "pageToken=p&idempotency_key=i&cache-key=c&referenceNo=r",
            ),
        ] {
            assert_eq!(redacted_query(sent), kept, "{sent}");
        }
        assert!(matches!(
            redacted_query("merchantId=abc"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
