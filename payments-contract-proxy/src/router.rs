//! The proxy's routes and how a request reaches them: `/api/` straight to
//! the forwarder, everything else (the report, the coverage, the listing
//! of exchanges, the console and its sign-in, `/metrics`) through the
//! router, behind the admin key.

use axum::Router;
use axum::routing::{any, get};
use payments_serve::ApiError;

use crate::state::ProxyState;
use crate::{access, console, forward};

mod report;

/// Where the proxy's web console is served (the binary logs its address
/// at start, as the mock does its own).
pub const CONSOLE_PATH: &str = "/_proxy/ui/";

/// `GET /_proxy/coverage`: the interface coverage as an envelope: every
/// cell with its name, whose it is (`document` or `contract`) and how
/// often it was seen; the percentage; what was seen outside the cells.
async fn coverage(
    axum::extract::State(proxy): axum::extract::State<ProxyState>,
) -> axum::response::Response {
    let seen = proxy.coverage();
    payments_serve::success(crate::coverage::Shown::of(&seen), None)
}

/// `GET /_proxy/exchanges?after=SEQ&limit=N`: the last judged exchanges,
/// short, oldest first (`crate::listing`); a bad `after` or `limit` is 400
/// `VALIDATION_ERROR` saying which and why.
async fn exchanges(
    axum::extract::State(proxy): axum::extract::State<ProxyState>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    match crate::listing::Page::parse(query.as_deref()) {
        Ok(page) => {
            let shown = proxy.lock().listing.page(page);
            payments_serve::success(shown, None)
        }
        Err(problem) => ApiError::validation(problem).into_response(),
    }
}

/// `GET /metrics`: the proxy's counts in the Prometheus text format, or
/// OpenMetrics text when `Accept` asks for it (CONTRACT section 18).
async fn metrics(
    axum::extract::State(proxy): axum::extract::State<ProxyState>,
    headers: axum::http::HeaderMap,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let accept = headers
        .get(axum::http::header::ACCEPT)
        .map(|v| v.as_bytes());
    let (body, content_type) = proxy.metrics.render(accept);
    ([(axum::http::header::CONTENT_TYPE, content_type)], body).into_response()
}

/// The proxy's routes: `/api/` forwarded; `/_proxy/report`,
/// `/_proxy/coverage`, `/_proxy/exchanges`, the console
/// under `/_proxy/ui/` (with its sign-in), `/metrics` and nothing else its
/// own, behind [`access::admit`] (the `/api/` routes pass it untouched:
/// only requests [`dispatch`] does not forward come through the router).
pub(crate) fn router(state: ProxyState) -> Router {
    Router::new()
        .route("/api/{*rest}", any(forward::forward))
        .route("/api", any(forward::forward))
        .route("/api/", any(forward::forward))
        .route(
            "/_proxy/report",
            get(report::report).layer(axum::Extension(report::Streams::default())),
        )
        .route("/_proxy/coverage", get(coverage))
        .route("/_proxy/exchanges", get(exchanges))
        .route("/metrics", get(metrics))
        .merge(console::routes())
        .route("/_proxy/ui/sign-in", get(access::page).post(access::submit))
        .route("/_proxy/ui/sign-out", axum::routing::post(access::sign_out))
        .fallback(|| async { not_forwarded() })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            access::admit,
        ))
        .with_state(state)
}

/// Any other path: 404 `NOT_FOUND`, the proxy's own answer, marked
/// `unchecked` as every answer of its own is. Nothing was asked of the
/// service, so it is no exchange: not recorded, reported or counted.
fn not_forwarded() -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let mut response = ApiError::not_found().into_response();
    response.headers_mut().insert(
        axum::http::HeaderName::from_static(crate::forward::VERDICT_HEADER),
        axum::http::HeaderValue::from_static("unchecked"),
    );
    response
}

/// Whether a path is forwarded (the router's `/api`, `/api/` and
/// `/api/{*rest}`).
fn is_forwarded(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// One request on a connection: under `/api/` straight to
/// [`forward::forward`], the hot path, without the router's matching and
/// the extensions it fills (about 5k instructions of a proxied exchange);
/// everything else through [`router`], whose `/api` routes name the same
/// handler.
pub(crate) async fn dispatch(
    state: ProxyState,
    router: Router,
    request: axum::extract::Request<hyper::body::Incoming>,
) -> Result<axum::response::Response, std::convert::Infallible> {
    let request = request.map(axum::body::Body::new);
    let promised = keep_alive_asked_by_http_10(&request);
    let mut response = if is_forwarded(request.uri().path()) {
        forward::forward(axum::extract::State(state), request).await
    } else {
        tower::ServiceExt::oneshot(router, request).await?
    };
    if promised {
        close_unless_sized(&mut response);
    }
    Ok(response)
}

/// Whether `request` is HTTP/1.0 asking for keep-alive with a body that
/// may follow (not HEAD, whose answer has none).
fn keep_alive_asked_by_http_10<B>(request: &axum::http::Request<B>) -> bool {
    use axum::http::{Method, Version, header};
    request.version() == Version::HTTP_10
        && request.method() != Method::HEAD
        && request
            .headers()
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|token| token.trim().eq_ignore_ascii_case("keep-alive"))
}

/// An answer to an HTTP/1.0 client that asked for keep-alive, when its
/// body has no length (the upstream's was chunked or ended by closing,
/// and the proxy streams it as it came): `Connection: close`, the
/// connection closed after it. HTTP/1.0
/// has no chunks, so such a body ends only with the connection; without
/// this hyper still promises `Connection: keep-alive`, then closes, and
/// the client's next request on that connection is never answered. An
/// answer that has no body (1xx, 204, 304) or a length keeps the
/// connection.
fn close_unless_sized(response: &mut axum::response::Response) {
    use axum::http::{HeaderValue, StatusCode, header};
    use hyper::body::Body as _;
    let status = response.status();
    let bodiless = status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED;
    let sized = response.headers().contains_key(header::CONTENT_LENGTH)
        || response.body().size_hint().exact().is_some();
    if !bodiless && !sized {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        // hyper adds `keep-alive` beside `close` to an answer of version
        // 1.1 (the default) while it wants to keep the connection; of
        // version 1.0 (what it writes to this client anyway) without
        // `keep-alive`, it closes.
        *response.version_mut() = axum::http::Version::HTTP_10;
    }
}
