//! Routes and layers, nothing else.

use axum::Router;
use axum::body::Body;
use axum::extract::DefaultBodyLimit;
use axum::http::Request;
use axum::middleware::from_fn_with_state;
use axum::routing::get;
use tower::ServiceBuilder;
use tower_http::body::Limited;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::limit::RequestBodyLimitLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::http::extract::BODY_LIMIT;
use crate::http::handlers::{admin, confirm, initiate, status};
use crate::http::middleware::{panic_response, request_context};
use crate::http::state::AppState;
use crate::web::html;
use crate::web::pay;

/// The whole service as a router: drive it with
/// `tower::ServiceExt::oneshot` in tests, or serve it with [`crate::http::server::run`].
///
/// Layers, outermost first: request id + log + envelope guarantee with the
/// `/api/` guard inside it (auth, rate limit, faults, journal; one
/// middleware, since each `from_fn` layer boxes its future and the stack
/// below it per request), body size limit, panic → 500, then the routes.
/// The guard enforces the body limit itself (a declared length over it
/// first of all, before authentication), so an oversized `/api/` request is
/// journaled like any other.
///
/// The layers wrap the routed service once (`ServiceBuilder`), not each
/// route (`Router::layer`), which would clone every layer's boxed service
/// per request: 11 % of a status look-up's instructions (BENCHMARKS.md).
/// Every request, routed or not (404, 405), passes all of them either way.
pub fn app(state: AppState) -> Router {
    Router::new().fallback_service(service(state))
}

/// [`app`] without a router around it: what the server drives, once per
/// connection ([`crate::http::server::serve_app`]). A router whose only
/// route is a fallback service cost ~1.6k instructions a request, for
/// nothing.
pub(crate) fn service(
    state: AppState,
) -> impl tower::Service<
    Request<Body>,
    Response = axum::response::Response,
    Error = std::convert::Infallible,
    Future: Send + 'static,
> + Clone
+ Send
+ 'static {
    // Each route registered with its operation (utoipa-axum): the document
    // cannot list a route the router lacks, nor miss one it serves.
    let (routes, document) = OpenApiRouter::new()
        .routes(routes!(initiate::handle))
        .routes(routes!(confirm::handle))
        .routes(routes!(admin::health))
        .routes(routes!(admin::transactions))
        .routes(routes!(admin::payer))
        .routes(routes!(admin::reset))
        .routes(routes!(admin::clock))
        .routes(routes!(admin::advance))
        .routes(routes!(admin::requests))
        .routes(routes!(admin::openapi))
        .routes(routes!(pay::show, pay::submit))
        .routes(routes!(html::stylesheet))
        .merge(crate::web::console::routes())
        .split_for_parts();
    let document = crate::openapi::generate(document, &state);
    state.set_openapi(bytes::Bytes::from(
        serde_json::to_vec(&document).expect("a JSON value serializes"),
    ));
    let routes: Router = routes
        // Both status reads (documented by `status::by_id` and
        // `status::by_reference`) answer every path no route takes, so an
        // empty segment still reaches them; the handler reads the raw path
        // itself (a `{*rest}` route had the router percent-decode the
        // segment into a parameter no one read, ~1.8k instructions). Any
        // other path is 404 there.
        .fallback_service(
            get(status::handle)
                .fallback(status::other_method)
                .with_state(state.clone()),
        )
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        .with_state(state.clone());
    ServiceBuilder::new()
        .layer(from_fn_with_state(state, request_context))
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        // The limit wraps the body; the layers below take axum's `Body`.
        .map_request(|req: Request<Limited<Body>>| req.map(Body::new))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .service(routes)
}
