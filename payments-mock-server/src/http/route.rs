//! The `/api/` routes: the four operations of the interface, matched by
//! the interface's own path matching (`payments_interface::route`, which
//! the contract proxy reads too), and the 404 and 405 answers around them
//! (CONTRACT section 8: 405 only where the route exists and the method does
//! not, with `Allow`).
//!
//! No router and no tower layers: they cost a status read several thousand
//! of its 31k instructions (BENCHMARKS.md, "The hot paths at the
//! framework's limit"): the `Caller` and the collected body inserted into
//! the request's extensions and taken out again, and each layer's future
//! boxed or moved. The OpenAPI document comes from the handlers'
//! annotations (`openapi::Served`), and its tests hold it to the interface's
//! endpoints.

use axum::body::Body;
use axum::body::HttpBody as _;
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use payments_interface::Endpoint;

use crate::http::extract::{Caller, declared_json};
use crate::http::handlers::status;
use crate::http::handlers::{confirm, initiate};
use crate::state::AppState;
use payments_serve::ApiError;

/// Answers an `/api/` request whose body the guard has read (`body`);
/// `endpoint` is what `payments_interface::route` matched its path to
/// (routed once, by the middleware; only the path parameter is sliced out
/// here).
pub(crate) async fn route(
    state: &AppState,
    caller: Caller,
    parts: &Parts,
    endpoint: Option<Endpoint>,
    body: &[u8],
) -> Response {
    let method = &parts.method;
    let Some(matched) = endpoint.and_then(|e| payments_interface::route_as(e, parts.uri.path()))
    else {
        return ApiError::not_found().into_response();
    };
    if !matched.endpoint.takes_method(method.as_str()) {
        return not_allowed(matched.endpoint.allow());
    }
    let answer = match matched.endpoint {
        // Boxed: an initiate's and a confirm's futures (1–2 KiB) would
        // otherwise be in every request's future, moved whole as it starts.
        Endpoint::Initiate => match declared_json(&parts.headers) {
            Ok(()) => Box::pin(initiate::handle(state, caller, body)).await,
            Err(e) => Ok(e.into_response()),
        },
        Endpoint::Confirm => match declared_json(&parts.headers) {
            Ok(()) => Box::pin(confirm::handle(state, caller, body)).await,
            Err(e) => Ok(e.into_response()),
        },
        Endpoint::StatusById => status::by_id(state, caller, matched.raw).await,
        Endpoint::StatusByReference => {
            status::by_reference(state, caller, matched.raw, parts.uri.query()).await
        }
    };
    let response = answer.into_response();
    if method == Method::HEAD {
        without_body(response)
    } else {
        response
    }
}

/// 405 `METHOD_NOT_ALLOWED` naming the methods the route takes.
fn not_allowed(allow: &'static str) -> Response {
    let allow = [(header::ALLOW, HeaderValue::from_static(allow))];
    (allow, ApiError::method_not_allowed()).into_response()
}

/// A HEAD answer: the GET answer's head, its length included, no body.
fn without_body(mut response: Response) -> Response {
    if let Some(length) = response.body().size_hint().exact() {
        response
            .headers_mut()
            .entry(header::CONTENT_LENGTH)
            .or_insert_with(|| HeaderValue::from(length));
    }
    *response.body_mut() = Body::empty();
    response
}

#[cfg(test)]
mod tests {
    use axum::http::{Request, StatusCode};
    use http_body_util::BodyExt as _;

    use super::*;
    use crate::config::Config;

    async fn answer(method: Method, path: &str) -> (StatusCode, Option<String>, String) {
        let state = AppState::new(Config::default());
        let (parts, ()) = Request::builder()
            .method(method)
            .uri(path)
            .body(())
            .expect("a request")
            .into_parts();
        let endpoint = payments_interface::route(parts.uri.path()).map(|m| m.endpoint);
        let response = route(&state, Caller::default(), &parts, endpoint, b"{}").await;
        let allow = response
            .headers()
            .get(header::ALLOW)
            .map(|v| v.to_str().expect("ASCII").to_owned());
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        (status, allow, String::from_utf8_lossy(&body).into_owned())
    }

    /// Every operation of the interface is routed here: none of them is
    /// answered 404 or 405 with its own method.
    #[tokio::test]
    async fn every_operation_of_the_interface_is_routed() {
        for endpoint in Endpoint::ALL {
            let path = endpoint
                .template()
                .replace("{transactionId}", "01970000-0000-7000-8000-000000000000")
                .replace("{referenceNo}", "INV-1");
            let method = Method::from_bytes(endpoint.method().as_bytes()).expect("a method");
            let (status, _, body) = answer(method.clone(), &path).await;
            assert!(
                !body.contains("\"NOT_FOUND\"") && status != StatusCode::METHOD_NOT_ALLOWED,
                "{method} {path}: {status} {body}"
            );
        }
    }

    #[tokio::test]
    async fn wrong_methods_and_unknown_paths() {
        for (method, path, status, allow) in [
            (Method::GET, "/api/payments/initiate", 405, Some("POST")),
            (Method::PUT, "/api/payments/confirm", 405, Some("POST")),
            (Method::HEAD, "/api/payments/initiate", 405, Some("POST")),
            (
                Method::POST,
                "/api/payments/x/status",
                405,
                Some("GET,HEAD"),
            ),
            (
                Method::DELETE,
                "/api/payments/reference/R/status",
                405,
                Some("GET,HEAD"),
            ),
            (Method::POST, "/api/payments/initiate/extra", 404, None),
            (Method::GET, "/api/payments/a/b/status", 404, None),
            (Method::GET, "/api/payments/", 404, None),
            (Method::GET, "/api/other", 404, None),
        ] {
            let (got, got_allow, body) = answer(method.clone(), path).await;
            assert_eq!(got.as_u16(), status, "{method} {path}: {body}");
            assert_eq!(got_allow.as_deref(), allow, "{method} {path}");
        }
    }

    /// RFC 9110 section 12.5.3: a 415 for a content coding says in
    /// `Accept-Encoding` what is taken (the mock decodes none); a 415 for
    /// a media type does not.
    #[tokio::test]
    async fn a_refused_content_coding_names_the_coding_taken() {
        use tower::ServiceExt as _;
        let router = crate::http::app(AppState::new(Config::default()));
        for (path, coding, content_type, accept) in [
            (
                "/api/payments/initiate",
                Some("gzip"),
                "application/json",
                Some("identity"),
            ),
            (
                "/api/payments/confirm",
                Some("br"),
                "application/json",
                Some("identity"),
            ),
            ("/api/payments/initiate", None, "text/plain", None),
            ("/api/payments/confirm", None, "text/plain", None),
            (
                "/_mock/faults",
                Some("gzip"),
                "application/json",
                Some("identity"),
            ),
            ("/_mock/faults", None, "text/plain", None),
        ] {
            let mut request = Request::post(path).header(header::CONTENT_TYPE, content_type);
            if let Some(coding) = coding {
                request = request.header(header::CONTENT_ENCODING, coding);
            }
            let request = request.body(Body::from("{}")).expect("a request");
            let response = router.clone().oneshot(request).await.expect("infallible");
            assert_eq!(
                response.status(),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "{path}"
            );
            let accepted = response.headers().get(header::ACCEPT_ENCODING);
            assert_eq!(
                accepted.map(|v| v.to_str().expect("ASCII")),
                accept,
                "{path} {coding:?} {content_type}"
            );
        }
    }

    #[tokio::test]
    async fn head_keeps_the_length_and_drops_the_body() {
        let (status, _, body) = answer(Method::HEAD, "/api/payments/nope/status").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body, "");
        let state = AppState::new(Config::default());
        let (parts, ()) = Request::head("/api/payments/nope/status")
            .body(())
            .expect("a request")
            .into_parts();
        let endpoint = payments_interface::route(parts.uri.path()).map(|m| m.endpoint);
        let response = route(&state, Caller::default(), &parts, endpoint, b"").await;
        let length: usize = response.headers()[header::CONTENT_LENGTH]
            .to_str()
            .expect("ASCII")
            .parse()
            .expect("a number");
        assert!(length > 0);
    }
}

#[cfg(test)]
mod sizes {
    use super::*;

    /// Each level of a request's future holds the level below it, and is
    /// moved as a whole when it starts; a large store future (SQLite's and
    /// PostgreSQL's are several KiB) made every request pay ~8k
    /// instructions of copying (BENCHMARKS.md, "The hot paths at the
    /// framework's limit"). An initiate's and a confirm's futures are boxed
    /// (`route`), so a status read's request carries neither: the routes'
    /// future is then ~0.4 KiB and the whole answer's ~2.8 KiB (a dev
    /// build), against 1.9 and 4.2 KiB with them inline. Pinned here with
    /// room.
    #[test]
    fn a_requests_future_stays_small() {
        let state = AppState::new(crate::config::Config::default());
        let (parts, ()) = axum::http::Request::get("/api/payments/x/status")
            .body(())
            .expect("a request")
            .into_parts();
        let caller = Caller::default();
        let endpoint = payments_interface::route(parts.uri.path()).map(|m| m.endpoint);
        let routed = std::mem::size_of_val(&route(&state, caller, &parts, endpoint, b""));
        let status = std::mem::size_of_val(&status::by_id(&state, caller, "x"));
        let service = crate::http::app::MockService::new(state.clone());
        let request = axum::http::Request::get("/api/payments/x/status")
            .body(axum::body::Body::empty())
            .expect("a request");
        let whole = std::mem::size_of_val(&service.respond_for_test(request));
        assert!(status <= 512, "a status read's future is {status} bytes");
        assert!(routed <= 1024, "the routes' future is {routed} bytes");
        assert!(whole <= 4 * 1024, "a request's future is {whole} bytes");
    }
}
