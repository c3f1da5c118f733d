//! Extractors whose rejections are our envelope (CONTRACT section 2): the
//! JSON object body, the caller's identity, a request from this server's
//! own pages ([`SameSite`]), and path segment decoding.

use std::borrow::Cow;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

pub(crate) use crate::domain::access::Caller;
use crate::state::AppState;
use payments_serve::{ApiError, ErrorCode};

pub use payments_interface::rules::BODY_LIMIT;

pub(crate) use crate::domain::fields::parse_object;

/// A request body that is a JSON object.
///
/// Rejections: 415 for a content type other than `application/json` (a
/// missing one is accepted), 413 over [`BODY_LIMIT`], 400 when the body is
/// empty, not JSON or not an object. Nesting deeper than `serde_json`'s
/// recursion limit is a parse error, not a stack overflow.
#[derive(Debug, Clone)]
pub struct JsonObject(pub Map<String, Value>);

/// Whether a `Content-Type` value means JSON (any parameters).
pub fn is_json_content_type(value: &[u8]) -> bool {
    // What nearly every client sends, and what the mock answers with.
    if value == b"application/json" {
        return true;
    }
    let Ok(text) = std::str::from_utf8(value) else {
        return false;
    };
    let essence = text.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
}

impl FromRequest<crate::state::AppState> for JsonObject {
    type Rejection = Response;

    async fn from_request(
        req: Request,
        state: &crate::state::AppState,
    ) -> Result<Self, Self::Rejection> {
        let JsonBytes(bytes) = JsonBytes::from_request(req, state).await?;
        parse_object(&bytes)
            .map(Self)
            .map_err(|e| ApiError::from(e).into_response())
    }
}

/// 415 `UNSUPPORTED_MEDIA_TYPE` unless the body is declared JSON or not
/// declared at all, and sent without a content coding: checked before any
/// reading or parsing, by [`JsonBytes`] and by the `/api/` routes
/// (`route.rs`).
///
/// Two `Content-Type` headers that differ are refused as well (the first
/// decided before); the same value twice is one type. A `Content-Encoding`
/// other than `identity` (RFC 9110 section 8.4.1) is refused: the mock
/// decodes none, and before it read a gzipped body as bad JSON and a plain
/// one labelled `br` as JSON; that refusal names what it takes in
/// `Accept-Encoding: identity` (RFC 9110 section 12.5.3).
pub(crate) fn declared_json(headers: &HeaderMap) -> Result<(), Unsupported> {
    // One walk of the few headers a request has, names compared as the
    // standard names they are: cheaper on the hot path than looking up
    // each of the two.
    let mut content_type = None;
    for (name, value) in headers {
        if name == header::CONTENT_TYPE {
            match content_type {
                None => content_type = Some(value),
                Some(first) if first != value => {
                    return Err(unsupported(
                        "Content-Type is given twice, with different values",
                    ));
                }
                Some(_) => {}
            }
        } else if name == header::CONTENT_ENCODING && !uncoded(value.as_bytes()) {
            return Err(Unsupported {
                coding: true,
                ..unsupported(
                    "Content-Encoding is not accepted: send the body without a content coding",
                )
            });
        }
    }
    match content_type {
        Some(ct) if !is_json_content_type(ct.as_bytes()) => {
            Err(unsupported("Content-Type must be application/json"))
        }
        _ => Ok(()),
    }
}

/// Whether a `Content-Encoding` value names no coding but `identity`
/// (any case; an empty list element is none).
fn uncoded(value: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .all(|coding| coding.is_empty() || coding.eq_ignore_ascii_case(b"identity"))
}

/// A refusal of [`declared_json`]: 415 `UNSUPPORTED_MEDIA_TYPE`.
#[derive(Debug)]
pub(crate) struct Unsupported {
    error: ApiError,
    /// For a content coding: the answer says `Accept-Encoding: identity`
    /// (RFC 9110 section 12.5.3); not for a media type.
    coding: bool,
}

impl IntoResponse for Unsupported {
    fn into_response(self) -> Response {
        let mut response = self.error.into_response();
        if self.coding {
            response.headers_mut().insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_static("identity"),
            );
        }
        response
    }
}

fn unsupported(message: &str) -> Unsupported {
    Unsupported {
        error: ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::UnsupportedMediaType,
            message,
        ),
        coding: false,
    }
}

/// The bytes of a body declared JSON (or undeclared). Rejections as
/// [`JsonObject`]'s, before any parsing: 415, 413, 400 when it cannot be
/// read. (The `/api/` routes read their body in the guard, once, and check
/// its type in `route.rs`.)
#[derive(Debug, Clone)]
pub(crate) struct JsonBytes(pub(crate) Bytes);

impl FromRequest<crate::state::AppState> for JsonBytes {
    type Rejection = Response;

    async fn from_request(
        req: Request,
        state: &crate::state::AppState,
    ) -> Result<Self, Self::Rejection> {
        declared_json(req.headers()).map_err(IntoResponse::into_response)?;
        let within = req
            .extensions()
            .get::<crate::state::AppState>()
            .unwrap_or(state)
            .body_timeout;
        let read = read_within(within, Bytes::from_request(req, state))
            .await
            .map_err(|()| late_body(within).into_response())?;
        let bytes = read.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::payload_too_large().into_response()
            } else {
                ApiError::validation("request body could not be read").into_response()
            }
        })?;
        Ok(Self(bytes))
    }
}

pub(crate) use payments_serve::server::read_within;

/// A body that did not arrive within `within` of its head: 400, said as
/// that (CONTRACT section 2's malformed body), and the connection free.
pub(crate) fn late_body(within: std::time::Duration) -> ApiError {
    ApiError::validation(format!(
        "request body did not arrive within {} s of its head",
        within.as_secs_f64()
    ))
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .get::<Caller>()
            .copied()
            .unwrap_or_default())
    }
}

/// Whether the caller's `X-Request-Id` is usable as ours: 1–128 visible
/// ASCII characters.
pub fn acceptable_request_id(value: &[u8]) -> bool {
    (1..=128).contains(&value.len()) && value.iter().all(|b| (0x21..=0x7e).contains(b))
}

/// A path segment percent-decoded; `None` when the result is not UTF-8.
pub fn decode_segment(raw: &str) -> Option<String> {
    payments_interface::decode_segment(raw).map(Cow::into_owned)
}

pub(crate) use payments_interface::decode_segment as decoded_segment;

/// Proof that a request changing the mock was not made by another site's
/// page: a browser sends `Origin` with every cross-site POST, and it must
/// then name the request's own `Host`, or the server's `--public-url`
/// (behind a reverse proxy that rewrites `Host`, as the console's forms).
/// Tools (curl, test code, the client) send no `Origin` and pass.
pub struct SameSite;

impl FromRequestParts<AppState> for SameSite {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        if payments_serve::admin::same_origin_as(&parts.headers, Some(state.public_url.as_str())) {
            Ok(Self)
        } else {
            Err(ApiError::new(
                StatusCode::FORBIDDEN,
                ErrorCode::Forbidden,
                "a page of another site may not change the mock (its Origin is not this server)",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        assert!(is_json_content_type(b"application/json"));
        assert!(is_json_content_type(b"Application/JSON; charset=utf-8"));
        assert!(!is_json_content_type(b"text/plain"));
        assert!(!is_json_content_type(b"\xff"));
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).expect("a name"),
                axum::http::HeaderValue::from_str(value).expect("a value"),
            );
        }
        map
    }

    fn refusal(pairs: &[(&str, &str)]) -> Option<(StatusCode, String)> {
        declared_json(&headers(pairs))
            .err()
            .map(|e| (e.error.status, e.error.message))
    }

    /// The `Accept-Encoding` of the answer to a refused request.
    fn accepted(pairs: &[(&str, &str)]) -> Option<HeaderValue> {
        let refused = declared_json(&headers(pairs)).err()?.into_response();
        refused.headers().get(header::ACCEPT_ENCODING).cloned()
    }

    #[test]
    fn a_refused_content_coding_is_told_what_is_taken() {
        // RFC 9110 section 12.5.3: a 415 for a content coding names the
        // codings taken in Accept-Encoding.
        for coded in ["gzip", "identity, br"] {
            assert_eq!(
                accepted(&[("content-encoding", coded)]),
                Some(HeaderValue::from_static("identity")),
                "{coded}"
            );
        }
        // Not a 415 for the media type.
        assert_eq!(accepted(&[("content-type", "text/plain")]), None);
        assert_eq!(
            accepted(&[("content-type", "a/b"), ("content-type", "c/d")]),
            None
        );
    }

    #[test]
    fn content_codings_other_than_identity_are_refused() {
        for ok in [
            vec![],
            vec![("content-encoding", "identity")],
            vec![("content-encoding", "IDENTITY")],
            vec![("content-encoding", "")],
            vec![("content-type", "application/json")],
            vec![
                ("content-type", "application/json"),
                ("content-type", "application/json"),
            ],
        ] {
            assert_eq!(refusal(&ok), None, "{ok:?}");
        }
        for coded in ["gzip", "br", "GZIP", "identity, gzip", "deflate"] {
            let (status, message) = refusal(&[("content-encoding", coded)]).expect("refused");
            assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{coded}");
            assert!(message.contains("Content-Encoding"), "{message}");
        }
        let (status, message) = refusal(&[
            ("content-encoding", "identity"),
            ("content-encoding", "gzip"),
        ])
        .expect("refused");
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert!(message.contains("Content-Encoding"), "{message}");
    }

    #[test]
    fn two_content_types_that_differ_are_refused() {
        for (first, second) in [
            ("application/json", "text/plain"),
            ("text/plain", "application/json"),
            ("application/json", "application/json; charset=utf-8"),
        ] {
            let (status, message) =
                refusal(&[("content-type", first), ("content-type", second)]).expect("refused");
            assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
            assert_eq!(
                message, "Content-Type is given twice, with different values",
                "{first} {second}"
            );
        }
    }

    #[test]
    fn request_ids() {
        assert!(acceptable_request_id(b"abc"));
        assert!(acceptable_request_id(&[b'x'; 128]));
        assert!(!acceptable_request_id(b"a b"));
        assert!(!acceptable_request_id(b""));
        assert!(!acceptable_request_id(&[b'x'; 129]));
        assert!(!acceptable_request_id("é".as_bytes()));
    }

    #[test]
    fn segments() {
        assert_eq!(decode_segment("INV%2F1").as_deref(), Some("INV/1"));
        assert_eq!(decode_segment("%FF"), None);
        assert_eq!(decode_segment("plain"), Some("plain".to_owned()));
        assert!(matches!(
            decoded_segment("plain"),
            Some(Cow::Borrowed("plain"))
        ));
        assert_eq!(decoded_segment("a%20b").as_deref(), Some("a b"));
    }
}
