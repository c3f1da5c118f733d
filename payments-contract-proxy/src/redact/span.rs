//! A request's path as the proxy's spans show it (`--otlp-endpoint`):
//! `url.path` of its server span and the path in `url.full` of its call
//! upstream, with the secrets replaced that the recording replaces in
//! it: those the request carries (its secret headers, its query's secret
//! parameters, the proxy's own) and those its transaction's initiate
//! carried ([`Earlier`]: a payer id in a reference becomes its token).
//!
//! The span is opened before the request's body is read, so what only a
//! body carries is not known to it; in the interface's paths only the
//! transaction id or reference is caller text, and what can be echoed
//! there (a key, a payer id of an earlier initiate) is known.

use axum::http::{HeaderMap, Method, Uri};

use super::echo::scrub_path;
use super::matcher::Matcher;
use super::{Earlier, Redactor};
use crate::exchange::{Exchange, Message, Parsed};

impl Redactor {
    /// The path of the request `method uri` with `headers` as its spans
    /// show it, `None` when nothing in it is replaced.
    pub(crate) fn span_path(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        earlier: &Earlier,
    ) -> Option<String> {
        let request = Message {
            method: method.as_str().to_owned(),
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            headers: headers
                .iter()
                .map(|(name, value)| {
                    let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                    (name.as_str().to_owned(), value)
                })
                .collect(),
            ..Message::default()
        };
        let exchange = Exchange {
            seq: 0,
            time: chrono::DateTime::UNIX_EPOCH,
            request,
            response: Message::default(),
            duration_ms: 0.0,
            proxy_answer: false,
            judged: false,
            trace_id: None,
            span_id: None,
        };
        let earlier = earlier.of(&Parsed::of(&exchange));
        let matcher = Matcher::new(self.secrets(&exchange, earlier));
        if matcher.is_empty() {
            return None;
        }
        scrub_path(&exchange.request.path, &matcher)
    }
}
