//! What the journal keeps of an `/api/` request, read off the request
//! itself: the method, path, query and headers (`Authorization`
//! redacted), cheaply, into a [`Capture`] (the domain's journal entry in
//! the making; the guard adds the body and the outcome).

use std::borrow::Cow;

use axum::http::{HeaderMap, Method, Uri, header};
use chrono::{DateTime, Utc};

use crate::domain::journal::Capture;

impl Capture {
    /// The request line and headers of `parts`, `Authorization` redacted.
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
            } else if let Ok(visible) = value.to_str() {
                // The usual case; cheaper than the UTF-8 check below.
                Cow::Borrowed(visible)
            } else {
                String::from_utf8_lossy(value.as_bytes())
            };
            (name.as_str(), value)
        });
        Self::assemble(
            method.clone(),
            (uri.path(), uri.query()),
            request_id,
            kept,
            256,
            at,
        )
    }
}
