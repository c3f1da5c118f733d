//! What the journal keeps of an `/api/` request, read off the request
//! itself: the method, path, query and headers (`Authorization`
//! redacted), cheaply, into a [`Capture`] (the domain's journal entry in
//! the making; the guard adds the body and the outcome).

use axum::http::{HeaderMap, Method, Uri, header};
use chrono::{DateTime, Utc};

use crate::domain::journal::{Capture, HEADERS};

impl Capture {
    /// The request line and headers of `parts`, `Authorization` redacted.
    pub fn new(
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        request_id: &str,
        at: DateTime<Utc>,
    ) -> Self {
        let mut text = String::with_capacity(256);
        let mut ends = Vec::with_capacity(HEADERS + 2 * headers.len());
        text.push_str(uri.path());
        ends.push(text.len());
        text.push_str(uri.query().unwrap_or(""));
        ends.push(text.len());
        text.push_str(request_id);
        ends.push(text.len());
        for (name, value) in headers {
            text.push_str(name.as_str());
            ends.push(text.len());
            if name == header::AUTHORIZATION {
                text.push_str("[redacted]");
            } else if let Ok(visible) = value.to_str() {
                // The usual case; cheaper than the UTF-8 check below.
                text.push_str(visible);
            } else {
                text.push_str(&String::from_utf8_lossy(value.as_bytes()));
            }
            ends.push(text.len());
        }
        Self {
            seq: 0,
            method: method.clone(),
            text,
            ends,
            has_query: uri.query().is_some(),
            at,
            status: None,
            error_code: None,
            fault: None,
            replica: None,
        }
    }
}
