//! What the journal keeps of an `/api/` request, read off the request
//! itself: the method, path, query and headers (`Authorization`, any
//! other header that carries a credential
//! ([`payments_serve::is_credential_header`]), the console's session
//! cookie and the query's parameters named as credentials are
//! ([`payments_serve::redacted_query`], the contract proxy's rule too)
//! redacted), cheaply, into a [`Capture`] (the
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
        let (path, query) = (uri.path(), uri.query().map(payments_serve::redacted_query));
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
